// Package watchdog notices a run that has stopped moving (DA-A5): a worker
// with no progress for too long, a worker calling the same tool with the same
// arguments over and over, and a reviewer session, Meta turn, tool call or
// model call running past its limit.
//
// A Trip is information for Meta, nothing more. The package never restarts,
// cancels or kills anything, and offers no way to: the host never restarts
// a worker on its own (DA-A5). A stall has many causes — a slow source, a
// hard step, a loop — and only Meta, who can read the worker's stream and
// progress.md, can tell them apart and choose (send a message, change the
// harness, restart the worker, ask the user). Hard deadlines that do stop
// work (a model call's context deadline, a tool's timeout) live where the
// call is made, not here.
//
// The watchdog reads no clock: every event carries its time, and Check is
// given "now". The engine feeds it from the journal, so a replay trips the
// same way.
//
// Each condition trips once per episode, not on every Check: a worker trips
// no_progress once, and again only after it has made progress and stalled
// anew; a loop trips once when it reaches Limits.ToolLoop identical calls,
// and again only after a different call broke it; a timed activity trips
// once. Meta learns of a condition once and the journal is not flooded with
// repeats.
package watchdog

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Kind names what is watched and what tripped.
type Kind string

// The activities the engine reports with Started and Finished.
const (
	WorkerSession   Kind = "worker_session"   // a worker's relay session; watched for no_progress
	ReviewerSession Kind = "reviewer_session" // one review
	MetaTurn        Kind = "meta_turn"        // one turn of Meta's (a push to Meta and its answer)
	ToolCall        Kind = "tool_call"        // one host tool call
	ModelCall       Kind = "model_call"       // one model request
)

// The trip kinds that are not activities.
const (
	NoProgress Kind = "no_progress" // a worker wrote nothing for Limits.NoProgress
	ToolLoop   Kind = "tool_loop"   // Limits.ToolLoop identical calls in a row
)

// Activities lists the kinds Started accepts.
var Activities = []Kind{WorkerSession, ReviewerSession, MetaTurn, ToolCall, ModelCall}

// Limits are the five thresholds. Zero or negative disables one.
type Limits struct {
	NoProgress      time.Duration // worker session without progress
	ToolLoop        int           // identical tool calls in a row by one instance
	ReviewerSession time.Duration // one reviewer session
	MetaTurn        time.Duration // one Meta turn
	ToolCall        time.Duration // one host tool call
	ModelCall       time.Duration // one model call
}

// Default returns the thresholds the design documents report from
// practice: no progress 30 min, tool loop 5 identical calls, reviewer
// session 30 min, Meta turn 60 min, tool call 30 s, model call 60 min.
func Default() Limits {
	return Limits{
		NoProgress:      30 * time.Minute,
		ToolLoop:        5,
		ReviewerSession: 30 * time.Minute,
		MetaTurn:        60 * time.Minute,
		ToolCall:        30 * time.Second,
		ModelCall:       60 * time.Minute,
	}
}

func (l Limits) timer(k Kind) time.Duration {
	switch k {
	case ReviewerSession:
		return l.ReviewerSession
	case MetaTurn:
		return l.MetaTurn
	case ToolCall:
		return l.ToolCall
	case ModelCall:
		return l.ModelCall
	}
	return 0 // worker sessions have no time limit (DA-A3: no arbitrary caps), only no_progress
}

// Trip reports one condition to Meta.
type Trip struct {
	Kind Kind `json:"kind"`
	// ID is the instance for no_progress and tool_loop, and the id given to
	// Started for the timed activities.
	ID     string    `json:"id"`
	Since  time.Time `json:"since"`  // when the condition began: the last progress, the first call of the loop, the start
	At     time.Time `json:"at"`     // when it was noticed
	Detail string    `json:"detail"` // what happened, in words
}

type activity struct {
	kind    Kind
	id      string
	started time.Time
	tripped bool
}

type worker struct {
	active       bool
	lastProgress time.Time
	stallTripped bool
	// The current run of identical calls.
	callKey     [sha256.Size]byte
	callTool    string
	runLen      int
	runSince    time.Time
	loopTripped bool
}

// Watchdog tracks the run's activities. It is safe for concurrent use.
type Watchdog struct {
	limits Limits

	mu         sync.Mutex
	activities map[Kind]map[string]*activity
	workers    map[string]*worker
}

// New returns a watchdog with limits l.
func New(l Limits) *Watchdog {
	return &Watchdog{limits: l, activities: map[Kind]map[string]*activity{}, workers: map[string]*worker{}}
}

// Limits returns the thresholds in force.
func (w *Watchdog) Limits() Limits { return w.limits }

func (w *Watchdog) worker(instance string, at time.Time) *worker {
	wk := w.workers[instance]
	if wk == nil {
		wk = &worker{lastProgress: at}
		w.workers[instance] = wk
	}
	return wk
}

// ToolCall records a finished tool call by instance and reports a
// tool_loop trip when it makes Limits.ToolLoop identical calls in a row:
// the same tool with the same canonical arguments (see Canonical). Call it
// once the result is known: a call whose result was a provider error — an
// outage, a 5xx reported inside the tool result — is not counted and does
// not break the run, because a model retrying through an outage is not
// stuck (the systems before us took outages for loops). Any other call
// breaks the run and starts a new one.
//
// A loop trips once, at its Limits.ToolLoop-th call; twenty identical calls
// trip once, not four times.
func (w *Watchdog) ToolCall(instance, tool string, canonicalArgs []byte, at time.Time, providerError bool) *Trip {
	if providerError {
		return nil
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s", len(tool), tool) // length-prefixed: no tool/args boundary ambiguity
	h.Write(canonicalArgs)
	var key [sha256.Size]byte
	h.Sum(key[:0])

	w.mu.Lock()
	defer w.mu.Unlock()
	wk := w.worker(instance, at)
	if wk.runLen > 0 && wk.callKey == key {
		wk.runLen++
	} else {
		wk.callKey, wk.callTool, wk.runLen, wk.runSince, wk.loopTripped = key, tool, 1, at, false
	}
	if w.limits.ToolLoop <= 0 || wk.loopTripped || wk.runLen < w.limits.ToolLoop {
		return nil
	}
	wk.loopTripped = true
	return &Trip{Kind: ToolLoop, ID: instance, Since: wk.runSince, At: at, Detail: fmt.Sprintf(
		"%s called %s %d times in a row with the same arguments (since %s)",
		instance, tool, wk.runLen, wk.runSince.UTC().Format(time.RFC3339))}
}

// Progress records that instance made progress at at: a file written, a
// line appended to progress.md. Reading, listing and thinking are not
// progress. It re-arms no_progress for the instance.
func (w *Watchdog) Progress(instance string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wk := w.worker(instance, at)
	if at.After(wk.lastProgress) {
		wk.lastProgress = at
	}
	wk.stallTripped = false
}

// Started records that an activity began. For WorkerSession, id is the
// instance (one live session per instance), and the no-progress clock is
// not reset by a new session: a worker that hands off session after session
// without writing anything is stalled too. Starting an activity that is
// already running restarts its clock.
//
// Started panics on a kind not in Activities: that is a bug in the caller,
// and a silently unwatched activity is worse than a loud one.
func (w *Watchdog) Started(kind Kind, id string, at time.Time) {
	if !slices.Contains(Activities, kind) {
		panic(fmt.Sprintf("watchdog: Started with unknown kind %q", kind))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if kind == WorkerSession {
		w.worker(id, at).active = true
		return
	}
	m := w.activities[kind]
	if m == nil {
		m = map[string]*activity{}
		w.activities[kind] = m
	}
	m[id] = &activity{kind: kind, id: id, started: at}
}

// Finished records that an activity ended. Finishing one that is not
// running is a no-op, so recovery may finish twice.
func (w *Watchdog) Finished(kind Kind, id string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if kind == WorkerSession {
		if wk := w.workers[id]; wk != nil {
			wk.active = false
		}
		return
	}
	delete(w.activities[kind], id)
}

// Forget drops everything known about an instance whose work is over, so
// a long run does not accumulate state.
func (w *Watchdog) Forget(instance string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.workers, instance)
}

// Check reports the conditions that have newly tripped by now: workers in a
// session with no progress for Limits.NoProgress, and activities running
// for at least their limit. A condition already reported is not reported
// again (see the package doc). Trips are ordered by kind, then id.
func (w *Watchdog) Check(now time.Time) []Trip {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Trip
	if lim := w.limits.NoProgress; lim > 0 {
		for id, wk := range w.workers {
			if !wk.active || wk.stallTripped || now.Sub(wk.lastProgress) < lim {
				continue
			}
			wk.stallTripped = true
			out = append(out, Trip{Kind: NoProgress, ID: id, Since: wk.lastProgress, At: now, Detail: fmt.Sprintf(
				"%s has written nothing for %s (limit %s)", id, round(now.Sub(wk.lastProgress)), lim)})
		}
	}
	for kind, m := range w.activities {
		lim := w.limits.timer(kind)
		if lim <= 0 {
			continue
		}
		for id, a := range m {
			if a.tripped || now.Sub(a.started) < lim {
				continue
			}
			a.tripped = true
			out = append(out, Trip{Kind: kind, ID: id, Since: a.started, At: now, Detail: fmt.Sprintf(
				"%s %s has run for %s (limit %s)", strings.ReplaceAll(string(kind), "_", " "), id, round(now.Sub(a.started)), lim)})
		}
	}
	slices.SortFunc(out, func(a, b Trip) int {
		if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

func round(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}
