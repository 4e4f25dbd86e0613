// Package retry runs one model call with retries: exponential backoff with
// jitter, the server's retry-after honoured, every attempt reported to the
// context's attempt observer (model.WithAttemptObserver), and an immediate
// stop when the caller's context ends.
//
// It is provider-independent: a provider wraps one HTTP attempt in a
// function that returns a classified *model.Error, and Do decides from
// (*model.Error).Retryable whether to try again. Providers disable their
// SDK's own retries so that every attempt goes through Do and is observed
// (and journalled by the host) exactly once.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fractal-harness/fractal/model"
)

// Defaults for a zero Policy field.
const (
	DefaultMaxAttempts = 4
	DefaultBase        = time.Second
	DefaultMax         = 30 * time.Second
	DefaultJitter      = 0.2
)

// MaxRetryAfter caps a server-requested wait (retry-after). A server may ask
// for any wait; we honour it in full up to this bound, which is far above
// Max because sending again sooner than asked only earns another 429. A
// longer request (minutes of quota reset) is better answered by the
// fallback model of the role than by a worker blocked in a sleep, so above
// the cap we wait the cap and let the next attempt (or the fallback) decide.
const MaxRetryAfter = 5 * time.Minute

// Policy says how often and how long to retry. The zero Policy is usable:
// every zero field takes its default.
type Policy struct {
	// MaxAttempts is the total number of tries, the first included
	// (default 4). 1 means no retry.
	MaxAttempts int
	// Base is the wait before the second try (default 1s); each further
	// wait doubles, up to Max.
	Base time.Duration
	// Max caps the backoff (default 30s). It does not cap a server's
	// retry-after, which is honoured up to MaxRetryAfter.
	Max time.Duration
	// Jitter spreads each backoff uniformly over ±Jitter of its value
	// (default 0.2), so that many instances hit by the same outage do not
	// retry in lockstep. A negative Jitter means none.
	Jitter float64
	// Sleep waits d or until ctx ends, returning ctx's error in that case.
	// nil means a real timer; tests inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (p Policy) withDefaults() Policy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.Base <= 0 {
		p.Base = DefaultBase
	}
	if p.Max <= 0 {
		p.Max = DefaultMax
	}
	if p.Max < p.Base {
		p.Max = p.Base
	}
	switch {
	case p.Jitter == 0:
		p.Jitter = DefaultJitter
	case p.Jitter > 1:
		p.Jitter = 1
	}
	// A negative Jitter stays negative (none), so withDefaults is
	// idempotent.
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	return p
}

// Backoff returns the wait after failed try n (1-based) for an error that
// asked for retryAfter (0 if it did not): the exponential backoff with
// jitter, but never less than retryAfter (itself capped at MaxRetryAfter).
// rnd is a uniform number in [0, 1).
func (p Policy) Backoff(n int, retryAfter time.Duration, rnd float64) time.Duration {
	p = p.withDefaults()
	d := p.Base
	for i := 1; i < n && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	if p.Jitter > 0 {
		d = time.Duration(float64(d) * (1 + p.Jitter*(2*rnd-1)))
	}
	if retryAfter > MaxRetryAfter {
		retryAfter = MaxRetryAfter
	}
	return max(d, retryAfter)
}

// Do calls call until it succeeds, fails with an error that is not
// retryable, the attempts are used up, or ctx ends.
//
// Only a *model.Error whose Retryable() is true is retried; any other error
// is returned at once. Every attempt is reported with model.ObserveAttempt:
// N, the model name, the error and its kind (empty on success), and the wait
// before the next try (0 when there is none). Only the successful attempt's
// Response is returned, so usage is never counted twice.
//
// When ctx ends (before a try, during one, or during a wait) Do returns at
// once with a *model.Error of kind ErrCancelled or ErrTimeout wrapping
// ctx.Err(). When the attempts are used up it returns the last error,
// wrapped with the number of attempts.
func Do(ctx context.Context, p Policy, modelName string, call func(ctx context.Context) (model.Response, error)) (model.Response, error) {
	p = p.withDefaults()
	var last *model.Error
	for n := 1; ; n++ {
		if ctx.Err() != nil {
			return model.Response{}, ctxError(ctx, modelName, last)
		}
		resp, err := call(ctx)
		if err == nil {
			model.ObserveAttempt(ctx, model.Attempt{N: n, Model: modelName})
			return resp, nil
		}
		me, classified := model.AsError(err)
		if ctx.Err() != nil {
			// Whatever the call made of it, the caller's context ended:
			// report that, not a network error it may have caused.
			cerr := ctxError(ctx, modelName, me)
			observe(ctx, n, modelName, cerr, 0)
			return model.Response{}, cerr
		}
		if !classified || !me.Retryable() || n >= p.MaxAttempts {
			observe(ctx, n, modelName, err, 0)
			if n > 1 {
				return model.Response{}, fmt.Errorf("after %d attempts: %w", n, err)
			}
			return model.Response{}, err
		}
		last = me
		wait := p.Backoff(n, me.RetryAfter, rand.Float64())
		observe(ctx, n, modelName, err, wait)
		serr := p.Sleep(ctx, wait)
		if ctx.Err() != nil {
			return model.Response{}, ctxError(ctx, modelName, last)
		}
		if serr != nil {
			return model.Response{}, fmt.Errorf("retry: waiting %v before attempt %d: %w (last error: %w)", wait, n+1, serr, err)
		}
	}
}

func observe(ctx context.Context, n int, modelName string, err error, wait time.Duration) {
	a := model.Attempt{N: n, Model: modelName, Err: err.Error(), Wait: wait}
	if me, ok := model.AsError(err); ok {
		a.Kind = me.Kind
	}
	model.ObserveAttempt(ctx, a)
}

// ctxError is the classified error for a context that ended. prev, the
// last classified error if any, lends its provider name and is kept in the
// message, so a timeout after three 529s says so.
func ctxError(ctx context.Context, modelName string, prev *model.Error) error {
	if prev != nil && (prev.Kind == model.ErrCancelled || prev.Kind == model.ErrTimeout) &&
		errors.Is(prev, ctx.Err()) {
		return prev // the provider already classified this very end
	}
	e := &model.Error{Kind: model.ErrCancelled, Model: modelName, Err: ctx.Err(), Msg: "context cancelled"}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		e.Kind, e.Msg = model.ErrTimeout, "deadline exceeded"
	}
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		e.Msg += ": " + cause.Error()
	}
	if prev != nil {
		e.Provider = prev.Provider
		if e.Model == "" {
			e.Model = prev.Model
		}
		if prev.Kind != e.Kind {
			e.Msg += fmt.Sprintf(" (previous attempt: %s)", prev.Kind)
		}
	}
	return e
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
