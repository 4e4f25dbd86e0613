package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type recorder struct {
	mu       sync.Mutex
	attempts []model.Attempt
	waits    []time.Duration
}

func (r *recorder) ctx(parent context.Context) context.Context {
	return model.WithAttemptObserver(parent, func(a model.Attempt) {
		r.mu.Lock()
		r.attempts = append(r.attempts, a)
		r.mu.Unlock()
	})
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return ctx.Err()
}

func merr(k model.ErrorKind, retryAfter time.Duration) error {
	return &model.Error{Kind: k, Provider: "p", Model: "m", RetryAfter: retryAfter, Msg: string(k)}
}

// script returns a call that fails with errs in turn, then succeeds with
// a response whose usage is 7 output tokens.
func script(errs ...error) (func(context.Context) (model.Response, error), *int) {
	n := 0
	return func(context.Context) (model.Response, error) {
		n++
		if n <= len(errs) {
			// A failed attempt's partial answer must never leak out.
			return model.Response{Text: "partial", Usage: model.Usage{Output: 1000}}, errs[n-1]
		}
		return model.Response{Text: "ok", Usage: model.Usage{Output: 7}}, nil
	}, &n
}

func TestDo(t *testing.T) {
	noJitter := retry.Policy{Jitter: -1}
	for _, tc := range []struct {
		name      string
		policy    retry.Policy
		errs      []error
		wantCalls int
		wantKinds []model.ErrorKind
		wantWaits []time.Duration
		wantErr   model.ErrorKind // "" for success
		plainErr  bool
	}{
		{name: "first try", errs: nil, wantCalls: 1, wantKinds: []model.ErrorKind{""}},
		{name: "backoff doubles", policy: noJitter,
			errs:      []error{merr(model.ErrServer, 0), merr(model.ErrNetwork, 0), merr(model.ErrOverloaded, 0)},
			wantCalls: 4, wantKinds: []model.ErrorKind{model.ErrServer, model.ErrNetwork, model.ErrOverloaded, ""},
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{name: "retry-after above backoff and Max is honoured", policy: noJitter,
			errs:      []error{merr(model.ErrRateLimited, 45*time.Second)},
			wantCalls: 2, wantKinds: []model.ErrorKind{model.ErrRateLimited, ""}, wantWaits: []time.Duration{45 * time.Second}},
		{name: "retry-after below backoff: backoff wins", policy: noJitter,
			errs:      []error{merr(model.ErrRateLimited, 100*time.Millisecond)},
			wantCalls: 2, wantKinds: []model.ErrorKind{model.ErrRateLimited, ""}, wantWaits: []time.Duration{time.Second}},
		{name: "retry-after capped", policy: noJitter,
			errs:      []error{merr(model.ErrRateLimited, time.Hour)},
			wantCalls: 2, wantKinds: []model.ErrorKind{model.ErrRateLimited, ""}, wantWaits: []time.Duration{retry.MaxRetryAfter}},
		{name: "not retryable", errs: []error{merr(model.ErrBadRequest, 0)},
			wantCalls: 1, wantKinds: []model.ErrorKind{model.ErrBadRequest}, wantErr: model.ErrBadRequest},
		{name: "refused is not retried (fallback decides)", errs: []error{merr(model.ErrRefused, 0)},
			wantCalls: 1, wantKinds: []model.ErrorKind{model.ErrRefused}, wantErr: model.ErrRefused},
		{name: "unclassified error is not retried", errs: []error{errors.New("boom")},
			wantCalls: 1, wantKinds: []model.ErrorKind{""}, plainErr: true},
		{name: "exhausted", policy: retry.Policy{MaxAttempts: 3, Jitter: -1},
			errs:      []error{merr(model.ErrServer, 0), merr(model.ErrServer, 0), merr(model.ErrServer, 0)},
			wantCalls: 3, wantKinds: []model.ErrorKind{model.ErrServer, model.ErrServer, model.ErrServer},
			wantWaits: []time.Duration{time.Second, 2 * time.Second}, wantErr: model.ErrServer},
		{name: "MaxAttempts 1 means no retry", policy: retry.Policy{MaxAttempts: 1},
			errs: []error{merr(model.ErrServer, 0)}, wantCalls: 1, wantKinds: []model.ErrorKind{model.ErrServer}, wantErr: model.ErrServer},
		{name: "Max caps the backoff", policy: retry.Policy{MaxAttempts: 4, Base: 10 * time.Second, Max: 15 * time.Second, Jitter: -1},
			errs:      []error{merr(model.ErrServer, 0), merr(model.ErrServer, 0), merr(model.ErrServer, 0)},
			wantCalls: 4, wantKinds: []model.ErrorKind{model.ErrServer, model.ErrServer, model.ErrServer, ""},
			wantWaits: []time.Duration{10 * time.Second, 15 * time.Second, 15 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			p := tc.policy
			p.Sleep = r.sleep
			call, calls := script(tc.errs...)
			resp, err := retry.Do(r.ctx(context.Background()), p, "m", call)
			if *calls != tc.wantCalls {
				t.Errorf("%d calls, want %d", *calls, tc.wantCalls)
			}
			var kinds []model.ErrorKind
			var waits []time.Duration
			for i, a := range r.attempts {
				kinds = append(kinds, a.Kind)
				if a.N != i+1 || a.Model != "m" {
					t.Errorf("attempt %d: %+v", i, a)
				}
				if a.Wait != 0 {
					waits = append(waits, a.Wait)
				}
				if (a.Err == "") != (i == len(r.attempts)-1 && tc.wantErr == "" && !tc.plainErr) {
					t.Errorf("attempt %d error %q", i, a.Err)
				}
			}
			if fmt.Sprint(kinds) != fmt.Sprint(tc.wantKinds) {
				t.Errorf("kinds %v, want %v", kinds, tc.wantKinds)
			}
			if fmt.Sprint(waits) != fmt.Sprint(tc.wantWaits) || fmt.Sprint(r.waits) != fmt.Sprint(tc.wantWaits) {
				t.Errorf("observed waits %v, slept %v, want %v", waits, r.waits, tc.wantWaits)
			}
			switch {
			case tc.plainErr:
				if _, ok := model.AsError(err); ok || err == nil {
					t.Errorf("error %v", err)
				}
			case tc.wantErr != "":
				me, ok := model.AsError(err)
				if !ok || me.Kind != tc.wantErr {
					t.Errorf("error %v, want kind %s", err, tc.wantErr)
				}
				if resp.Text != "" || resp.Usage != (model.Usage{}) {
					t.Errorf("failed call returned %+v", resp)
				}
			default:
				if err != nil || resp.Text != "ok" || resp.Usage.Output != 7 {
					t.Errorf("%+v %v (usage must be the successful attempt's)", resp, err)
				}
			}
		})
	}
}

func TestDoStopsWhenContextEnds(t *testing.T) {
	t.Run("before the first try", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		call, calls := script()
		_, err := retry.Do(ctx, retry.Policy{}, "m", call)
		if me, ok := model.AsError(err); !ok || me.Kind != model.ErrCancelled || !errors.Is(err, context.Canceled) || *calls != 0 {
			t.Fatalf("%v, %d calls", err, *calls)
		}
	})
	t.Run("during the wait", func(t *testing.T) {
		r := &recorder{}
		ctx, cancel := context.WithCancel(r.ctx(context.Background()))
		defer cancel()
		p := retry.Policy{Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }}
		call, calls := script(merr(model.ErrOverloaded, 0))
		_, err := retry.Do(ctx, p, "m", call)
		me, ok := model.AsError(err)
		if !ok || me.Kind != model.ErrCancelled || me.Provider != "p" || !errors.Is(err, context.Canceled) || *calls != 1 {
			t.Fatalf("%v, %d calls", err, *calls)
		}
		if !strings.Contains(me.Msg, "overloaded") || len(r.attempts) != 1 {
			t.Errorf("msg %q, attempts %+v", me.Msg, r.attempts)
		}
	})
	t.Run("deadline during a call", func(t *testing.T) {
		r := &recorder{}
		ctx, cancel := context.WithTimeout(r.ctx(context.Background()), time.Millisecond)
		defer cancel()
		call := func(ctx context.Context) (model.Response, error) {
			<-ctx.Done()
			// The transport saw a broken connection; the cause is the deadline.
			return model.Response{}, merr(model.ErrNetwork, 0)
		}
		_, err := retry.Do(ctx, retry.Policy{Sleep: r.sleep}, "m", call)
		me, ok := model.AsError(err)
		if !ok || me.Kind != model.ErrTimeout || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%v", err)
		}
		if len(r.attempts) != 1 || r.attempts[0].Kind != model.ErrTimeout || len(r.waits) != 0 {
			t.Errorf("attempts %+v waits %v", r.attempts, r.waits)
		}
	})
	t.Run("real sleep is cut short", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		call, _ := script(merr(model.ErrServer, time.Minute))
		start := time.Now()
		_, err := retry.Do(ctx, retry.Policy{}, "m", call)
		if me, ok := model.AsError(err); !ok || me.Kind != model.ErrTimeout {
			t.Fatalf("%v", err)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("waited %v", time.Since(start))
		}
	})
	t.Run("real sleep", func(t *testing.T) {
		call, calls := script(merr(model.ErrServer, 0))
		resp, err := retry.Do(context.Background(), retry.Policy{Base: time.Millisecond}, "m", call)
		if err != nil || resp.Text != "ok" || *calls != 2 {
			t.Fatalf("%+v %v %d", resp, err, *calls)
		}
	})
}

// The backoff stays within ±Jitter of the exponential value, is never
// less than the server's retry-after (up to the cap) and never negative.
func TestBackoffProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := retry.Policy{
			Base:   time.Duration(rapid.Int64Range(1, int64(10*time.Second)).Draw(t, "base")),
			Max:    time.Duration(rapid.Int64Range(1, int64(time.Minute)).Draw(t, "max")),
			Jitter: rapid.Float64Range(0.0001, 1).Draw(t, "jitter"),
		}
		n := rapid.IntRange(1, 40).Draw(t, "n")
		ra := time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "retryAfter"))
		rnd := rapid.Float64Range(0, 0.999999).Draw(t, "rnd")

		maxB := max(p.Max, p.Base)
		exp := p.Base
		for i := 1; i < n && exp < maxB; i++ {
			exp *= 2
		}
		exp = min(exp, maxB)
		lo := time.Duration(float64(exp) * (1 - p.Jitter))
		hi := time.Duration(float64(exp) * (1 + p.Jitter))
		d := p.Backoff(n, ra, rnd)
		floor := min(ra, retry.MaxRetryAfter)
		if d < floor {
			t.Fatalf("wait %v below retry-after %v", d, floor)
		}
		if d < 0 || (d > hi+time.Nanosecond && d > floor) || (d < lo-time.Nanosecond && floor < lo) {
			t.Fatalf("wait %v outside [%v, %v] (retry-after %v)", d, lo, hi, floor)
		}
	})
}

func TestKindForStatus(t *testing.T) {
	for status, want := range map[int]model.ErrorKind{
		200: "", 400: model.ErrBadRequest, 401: model.ErrAuth, 403: model.ErrAuth, 404: model.ErrNotFound,
		408: model.ErrServer, 409: model.ErrServer, 413: model.ErrBadRequest, 422: model.ErrBadRequest,
		429: model.ErrRateLimited, 500: model.ErrServer, 502: model.ErrServer, 503: model.ErrServer,
		504: model.ErrServer, 529: model.ErrOverloaded,
	} {
		if got := retry.KindForStatus(status); got != want {
			t.Errorf("%d: %q, want %q", status, got, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		h    map[string]string
		want time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "30"}, 30 * time.Second},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": "0"}, 0},
		{map[string]string{"Retry-After": "-3"}, 0},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "x", "Retry-After": "2"}, 2 * time.Second},
	} {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		if got := retry.ParseRetryAfter(h, now); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestIsNetwork(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{io.ErrUnexpectedEOF, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{errors.New("http2: server sent GOAWAY and closed the connection"), true},
		{context.Canceled, false},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{errors.New("invalid character 'x' looking for beginning of value"), false},
		{nil, false},
	} {
		if got := retry.IsNetwork(tc.err); got != tc.want {
			t.Errorf("%v: %v", tc.err, got)
		}
	}
}

func TestContextKind(t *testing.T) {
	if retry.ContextKind(context.Background()) != "" {
		t.Error("live context")
	}
	c, cancel := context.WithCancel(context.Background())
	cancel()
	if retry.ContextKind(c) != model.ErrCancelled {
		t.Error("cancelled")
	}
	d, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	if retry.ContextKind(d) != model.ErrTimeout {
		t.Error("deadline")
	}
}
