package model

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrorKind classifies a provider failure, for retry and fallback.
type ErrorKind string

// The kinds of failure.
const (
	ErrRateLimited ErrorKind = "rate_limited" // 429
	ErrOverloaded  ErrorKind = "overloaded"   // 529, or an overloaded_error event mid-stream
	ErrServer      ErrorKind = "server"       // other 5xx, 408, 409
	ErrNetwork     ErrorKind = "network"      // connection refused or reset, stream cut
	ErrTimeout     ErrorKind = "timeout"      // the call's deadline passed
	ErrCancelled   ErrorKind = "cancelled"    // the caller's context was cancelled
	ErrRefused     ErrorKind = "refused"      // the model refused (a stop reason of refusal)
	ErrNotFound    ErrorKind = "not_found"    // the model does not exist at this endpoint
	ErrAuth        ErrorKind = "auth"         // no key, a bad key, no permission
	ErrBadRequest  ErrorKind = "bad_request"  // any other 4xx: our request is wrong
)

// Error is a classified provider failure. Providers return it (wrapped or
// not) for every failure they can classify.
type Error struct {
	Kind     ErrorKind
	Provider string
	Model    string
	Status   int // HTTP status, 0 when none
	// RetryAfter is the server's requested wait (retry-after), 0 if none.
	RetryAfter time.Duration
	Msg        string
	Err        error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s %s: %s", e.Provider, e.Model, e.Kind)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the same call may succeed if tried again.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimited, ErrOverloaded, ErrServer, ErrNetwork:
		return true
	}
	return false
}

// Fallback reports whether the next model of a role's list should be tried.
func (e *Error) Fallback() bool {
	switch e.Kind {
	case ErrOverloaded, ErrRefused, ErrNotFound:
		return true
	}
	return false
}

// AsError returns the *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var me *Error
	ok := errors.As(err, &me)
	return me, ok
}

// Attempt reports one try of a model call, so the host can journal every
// attempt, not only the outcome.
type Attempt struct {
	N     int           `json:"n"` // 1-based try of this call on this model
	Model string        `json:"model"`
	Err   string        `json:"error,omitempty"`
	Kind  ErrorKind     `json:"kind,omitempty"`
	Wait  time.Duration `json:"wait,omitempty"` // backoff before the next try
}

type observerKey struct{}

// WithAttemptObserver returns a context whose model calls report each
// attempt to fn. fn must be quick and safe for concurrent use.
func WithAttemptObserver(ctx context.Context, fn func(Attempt)) context.Context {
	return context.WithValue(ctx, observerKey{}, fn)
}

// ObserveAttempt reports a to the context's observer, if any.
func ObserveAttempt(ctx context.Context, a Attempt) {
	if fn, ok := ctx.Value(observerKey{}).(func(Attempt)); ok && fn != nil {
		fn(a)
	}
}
