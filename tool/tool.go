// Package tool defines what a model may call: a Tool has a spec the model
// reads and a Call the host runs on the calling instance's behalf.
//
// A tool confines itself with the Env it is given (the instance's boundary,
// what it may read); the Guard checks the recorded effect again, so a tool
// bug cannot silently widen an instance's reach.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fractal-harness/fractal/model"
)

// Env is the calling instance's situation. Paths given to tools are relative
// to RunRoot (for example "work/root/market/notes.md" or "inputs/sales.csv").
type Env struct {
	Instance string // calling instance id
	RunRoot  string // absolute path of the run folder
	// Boundary is the run-relative folder the instance may write (F-D4,
	// I-Boundary), for example "work/root/market".
	Boundary string
	// Readable are run-relative folders the instance may read, in addition
	// to its boundary.
	Readable []string
}

// Result is what the model sees, plus what the host records.
type Result struct {
	Content string `json:"content"`
	// Writes lists the run-relative files the call wrote.
	Writes []string `json:"writes,omitempty"`
}

// Tool is one callable capability.
type Tool interface {
	Spec() model.ToolSpec
	Call(ctx context.Context, env Env, args json.RawMessage) (Result, error)
}

// Error is a refusal the model should see and can act on (bad arguments, a
// path outside the boundary, a missing file). Code is stable, for example
// "E-BOUNDARY-WRITE" or "E-ARGS". Any other error from Call is a host fault.
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string { return e.Code + ": " + e.Msg }

// Errorf builds an *Error.
func Errorf(code, format string, a ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, a...)}
}

// AsError returns the *Error inside err, if any.
func AsError(err error) (*Error, bool) {
	var te *Error
	ok := errors.As(err, &te)
	return te, ok
}

// WritePaths, if a tool implements it, reports the run-relative paths a call
// with these arguments would write, so the host can put them in the
// tool_call_started event and the Guard can refuse the call before it runs.
type WritePaths interface {
	WritePaths(args json.RawMessage) ([]string, error)
}

// Registry is a set of tools by name.
type Registry struct {
	byName map[string]Tool
	order  []string
}

// NewRegistry builds a registry; a duplicate name is an error.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: map[string]Tool{}}
	for _, t := range tools {
		n := t.Spec().Name
		if _, dup := r.byName[n]; dup {
			return nil, fmt.Errorf("tool: duplicate tool %q", n)
		}
		r.byName[n] = t
		r.order = append(r.order, n)
	}
	return r, nil
}

// Get returns the tool named n.
func (r *Registry) Get(n string) (Tool, bool) { t, ok := r.byName[n]; return t, ok }

// Specs returns every tool's spec in registration order.
func (r *Registry) Specs() []model.ToolSpec {
	out := make([]model.ToolSpec, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.byName[n].Spec())
	}
	return out
}

// Idempotent, if a tool implements it, reports whether running a call with
// these arguments twice leaves the world as running it once. The host waits
// for a tool_call_started event to be durable before any other call that
// writes, so that a crash can never leave an unrecorded, unrepeatable
// effect; an idempotent call is simply redone by the retried attempt.
type Idempotent interface {
	Idempotent(args json.RawMessage) bool
}
