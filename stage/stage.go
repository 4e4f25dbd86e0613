// Package stage is the run's life cycle (DA-A4): the stages a run passes
// through, who may move it from one stage to the next, and the two gates the
// host enforces on the way (DA-A2, DA-B1).
//
// The rules are data: Transitions is the whole table, and Allowed and Check
// only read it. docs/stages.md renders the same table for people, and a test
// keeps the two in step. The package does no IO and reads no clock: the
// times a gate compares are arguments.
//
// Decisions the seeds leave open, and why:
//
//   - Only the user pauses and resumes a run. A pause is the person taking
//     the wheel; if Meta could pause, an unattended run could stop itself
//     and wait for nobody (DA-A3: fail soft, do not stop).
//   - Meta cannot leave awaiting_user on its own. Once a question is out,
//     the user's answer (user) or, in autonomous mode, the host taking the
//     offered default after the wait (host) resolves it. Meta answering its
//     own question would make the "took the default" note in the delivery
//     report a lie.
//   - awaiting_user is entered from running only, so leaving it always means
//     returning to running; the stage needs no memory of where it came from.
//     Questions before running belong to the discussion (clarifying).
//   - Meta cannot fail or cancel a run. Giving up is a question to the user
//     (DA-A3); cancelling is the user's; failing is the host's, on a fatal
//     error.
//   - The gates are keyed on the target stage, not on the row: every entry
//     into running needs a passed bootstrap review (also paused → running
//     and awaiting_user → running), and every entry into done needs a final
//     review newer than the latest completion claim, whoever asks.
package stage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Stage is where a run is in its life cycle, as kept in manifest.yaml.
type Stage string

// The stages, in the order a run normally meets them.
const (
	Submitted     Stage = "submitted"     // the raw task is in; nothing has started
	Clarifying    Stage = "clarifying"    // Meta and the user discuss the task (F-D3.5)
	Bootstrapping Stage = "bootstrapping" // Meta writes the task harness (DA-B3)
	Running       Stage = "running"       // work is under way
	AwaitingUser  Stage = "awaiting_user" // a question to the user is open
	Paused        Stage = "paused"        // the user stopped the run for now
	Done          Stage = "done"          // delivered (terminal)
	Failed        Stage = "failed"        // the host hit a fatal error (terminal)
	Cancelled     Stage = "cancelled"     // the user called the run off (terminal)
)

// Stages lists every stage in a stable order.
var Stages = []Stage{Submitted, Clarifying, Bootstrapping, Running, AwaitingUser, Paused, Done, Failed, Cancelled}

// Valid reports whether s is a known stage.
func (s Stage) Valid() bool { return slices.Contains(Stages, s) }

// Terminal reports whether s ends the run: done, failed or cancelled.
// Nothing leaves a terminal stage.
func (s Stage) Terminal() bool { return s == Done || s == Failed || s == Cancelled }

// Live reports whether s is a known stage the run can still leave.
func (s Stage) Live() bool { return s.Valid() && !s.Terminal() }

// Actor is who asks for a stage change.
type Actor string

// The actors.
const (
	Host Actor = "host" // the harness itself: the engine's own decisions and fatal errors
	Meta Actor = "meta" // the Meta role, through its tools
	User Actor = "user" // the person, through the CLI or the web console
)

// Actors lists every actor in a stable order.
var Actors = []Actor{Host, Meta, User}

// Valid reports whether a is a known actor.
func (a Actor) Valid() bool { return slices.Contains(Actors, a) }

// Gate names a host-enforced condition on a transition.
type Gate string

// The gates.
const (
	// NoGate: the table row alone decides.
	NoGate Gate = ""
	// BootstrapReview: the Reviewer passed the task harness (DA-A2). Every
	// entry into running needs it.
	BootstrapReview Gate = "bootstrap_review"
	// FinalReview: the Reviewer passed the final review, strictly after the
	// latest completion claim (DA-A2, DA-B1). Every entry into done needs it.
	FinalReview Gate = "final_review"
)

// GateFor is the gate guarding entry into to.
func GateFor(to Stage) Gate {
	switch to {
	case Running:
		return BootstrapReview
	case Done:
		return FinalReview
	}
	return NoGate
}

// Transition is one row of the table: By may move a run From → To.
type Transition struct {
	From, To Stage
	By       Actor
	Why      string // when this move happens, for people and error messages
}

// Gate is the gate the row needs (the gate of its target stage).
func (t Transition) Gate() Gate { return GateFor(t.To) }

// Transitions returns the whole table: every allowed move, and no other.
// It returns a fresh copy, so callers cannot change the rules.
func Transitions() []Transition {
	var t []Transition
	add := func(by Actor, from, to Stage, why string) {
		t = append(t, Transition{From: from, To: to, By: by, Why: why})
	}
	add(Host, Submitted, Clarifying, "the run starts: Meta opens the discussion")
	add(Host, Clarifying, Bootstrapping, "the discussion produced the contracts")
	add(Host, Bootstrapping, Running, "the Reviewer passed the task harness")
	add(Host, Running, Done, "the root's work was accepted and passed the final review")
	add(Host, AwaitingUser, Running, "autonomous mode: no answer in time, the offered default is taken")
	add(Host, Running, AwaitingUser, "the policy needs a person: retries, budget or risk exhausted")
	for _, s := range liveStages() {
		add(Host, s, Failed, "a fatal host error")
	}
	add(Meta, Running, AwaitingUser, "Meta asks the user a question it could not settle itself")
	add(Meta, Running, Done, "Meta asks to deliver; the final review must have passed")
	add(User, Running, Paused, "the user pauses the run")
	add(User, Paused, Running, "the user resumes the run")
	add(User, AwaitingUser, Running, "the user answers the open question")
	for _, s := range liveStages() {
		add(User, s, Cancelled, "the user cancels the run")
	}
	return t
}

func liveStages() []Stage {
	var out []Stage
	for _, s := range Stages {
		if s.Live() {
			out = append(out, s)
		}
	}
	return out
}

// The errors callers branch on. A *TransitionError wraps exactly one.
var (
	// ErrUnknown: a stage or actor that does not exist.
	ErrUnknown = errors.New("unknown stage or actor")
	// ErrForbidden: the table has no such row for this actor.
	ErrForbidden = errors.New("transition not allowed")
	// ErrGate: the row exists but its host gate has not passed.
	ErrGate = errors.New("gate not passed")
)

// TransitionError explains a refused stage change.
type TransitionError struct {
	From, To Stage
	By       Actor
	Err      error  // ErrUnknown, ErrForbidden or ErrGate
	Reason   string // what is wrong and what would be allowed, in words
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("stage: %s may not move the run %s → %s: %s", e.By, e.From, e.To, e.Reason)
}

// Unwrap returns the sentinel, for errors.Is.
func (e *TransitionError) Unwrap() error { return e.Err }

// Allowed reports whether by may move a run from → to according to the
// table alone, ignoring gates. The error says what by may do instead.
func Allowed(from, to Stage, by Actor) error {
	fail := func(sentinel error, format string, args ...any) error {
		return &TransitionError{From: from, To: to, By: by, Err: sentinel, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case !from.Valid():
		return fail(ErrUnknown, "%q is not a stage (stages: %s)", from, list(Stages))
	case !to.Valid():
		return fail(ErrUnknown, "%q is not a stage (stages: %s)", to, list(Stages))
	case !by.Valid():
		return fail(ErrUnknown, "%q is not an actor (actors: %s)", by, list(Actors))
	case from == to:
		return fail(ErrForbidden, "the run is already %s", from)
	case from.Terminal():
		return fail(ErrForbidden, "%s is final; nothing leaves it", from)
	}
	var mine []string
	for _, t := range Transitions() {
		if t.From == from && t.By == by {
			if t.To == to {
				return nil
			}
			mine = append(mine, string(t.To))
		}
	}
	reason := ""
	switch {
	case to == Paused && by != User:
		reason = "only the user pauses a run"
	case to == Cancelled && by != User:
		reason = "only the user cancels a run"
	case to == Failed && by != Host:
		reason = "only the host fails a run, on a fatal error"
	default:
		reason = "no such move in the stage table"
	}
	if len(mine) == 0 {
		return fail(ErrForbidden, "%s; %s has no move from %s", reason, by, from)
	}
	return fail(ErrForbidden, "%s; from %s, %s may move to: %s", reason, from, by, strings.Join(mine, ", "))
}

// Gates is what the host knows about the two reviews when a move is asked
// for. A zero time means "none yet".
type Gates struct {
	// BootstrapReviewPassed: the Reviewer passed the task harness.
	BootstrapReviewPassed bool
	// FinalReviewPassedAt is when the latest passing final review was
	// recorded.
	FinalReviewPassedAt time.Time
	// LastCompletionClaimAt is when the latest completion claim was
	// recorded (a declare_done of the root, a delivery request). Every new
	// claim makes earlier reviews stale.
	LastCompletionClaimAt time.Time
}

// Check is Allowed plus the host's gates (DA-A2, DA-B1): entering running
// needs a passed bootstrap review; entering done needs a passed final review
// recorded strictly after the latest completion claim. With no completion
// claim at all there is nothing the review can have judged, so done is
// refused too (fail closed).
func Check(from, to Stage, by Actor, g Gates) error {
	if err := Allowed(from, to, by); err != nil {
		return err
	}
	fail := func(format string, args ...any) error {
		return &TransitionError{From: from, To: to, By: by, Err: ErrGate, Reason: fmt.Sprintf(format, args...)}
	}
	switch GateFor(to) {
	case BootstrapReview:
		if !g.BootstrapReviewPassed {
			return fail("the Reviewer has not passed the task harness (bootstrap review)")
		}
	case FinalReview:
		switch {
		case g.LastCompletionClaimAt.IsZero():
			return fail("nothing has claimed completion yet, so there is nothing a final review can have passed")
		case g.FinalReviewPassedAt.IsZero():
			return fail("no final review has passed")
		case !g.FinalReviewPassedAt.After(g.LastCompletionClaimAt):
			return fail("the last passed final review (%s) is not after the latest completion claim (%s); the new claim needs a new review",
				g.FinalReviewPassedAt.UTC().Format(time.RFC3339Nano), g.LastCompletionClaimAt.UTC().Format(time.RFC3339Nano))
		}
	}
	return nil
}

// Markdown renders the table for people: one row per transition, in table
// order. docs/stages.md embeds exactly this text.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| who | from | to | gate | when |\n|---|---|---|---|---|\n")
	for _, t := range Transitions() {
		g := "—"
		if t.Gate() != NoGate {
			g = "`" + string(t.Gate()) + "`"
		}
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s | %s |\n", t.By, t.From, t.To, g, t.Why)
	}
	return b.String()
}

func list[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}
