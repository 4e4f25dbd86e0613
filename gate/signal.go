package gate

import (
	"fmt"
	"slices"
)

// Signal is how a worker session ends (DA-A1). It is always a distinct
// value — the name of the tool the model called, or a host-set value — and
// never inferred from what the model wrote: the systems before us told
// "blocked" from "handoff" by free text, and got it wrong.
type Signal string

// The signals.
const (
	// DeclareDone: the worker says the work is finished. The host then runs
	// the self-assessment gate, the checks and the reviews.
	DeclareDone Signal = "declare_done"
	// Blocked: the worker cannot go on without something it cannot get
	// itself (a missing input, a permission). Meta decides what next.
	Blocked Signal = "blocked"
	// Handoff: the worker stops at a safe point and the next relay session
	// picks up from progress.md.
	Handoff Signal = "handoff"
	// Continue: the worker keeps going in the same session. It does not end
	// the session.
	Continue Signal = "continue"
	// ContextExhausted is set by the host, never by the model, when a
	// session runs out of context. The host records it as a Handoff.
	ContextExhausted Signal = "context_exhausted"
)

// Signals lists every signal; ModelSignals the four a model may give.
var (
	Signals      = []Signal{DeclareDone, Blocked, Handoff, Continue, ContextExhausted}
	ModelSignals = []Signal{DeclareDone, Blocked, Handoff, Continue}
)

// ParseSignal accepts exactly one of the five names: no trimming, no case
// folding, no guessing.
func ParseSignal(s string) (Signal, error) {
	if slices.Contains(Signals, Signal(s)) {
		return Signal(s), nil
	}
	return "", fmt.Errorf("gate: %q is not an exit signal (want one of declare_done, blocked, handoff, continue)", s)
}

// Valid reports whether s is a known signal.
func (s Signal) Valid() bool { return slices.Contains(Signals, s) }

// FromModel reports whether a model may give s; context_exhausted is the
// host's alone.
func (s Signal) FromModel() bool { return slices.Contains(ModelSignals, s) }

// EndsSession reports whether s ends the session: every known signal but
// continue.
func (s Signal) EndsSession() bool { return s.Valid() && s != Continue }

// Effective is the signal the host records: context_exhausted becomes a
// handoff (the next session resumes from progress.md); the others are
// themselves.
func (s Signal) Effective() Signal {
	if s == ContextExhausted {
		return Handoff
	}
	return s
}
