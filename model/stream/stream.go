// Package stream holds the plumbing the streaming provider clients share:
// a transport that bounds connecting but never a whole answer, and an
// idle watch that ends a stream which has gone silent.
package stream

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// NewTransport is http.DefaultTransport's setup with a bounded connect.
// There is deliberately no response or overall timeout: a streamed answer
// may legitimately take many minutes; the context and the idle watch
// bound it.
func NewTransport(connect time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connect
	return t
}

// ErrIdle is the cause of a context ended by an idle watch.
var ErrIdle = errors.New("stream idle")

// WithIdle returns a context that ends with cause ErrIdle when touch has not
// been called for d (d <= 0: never), the touch function to call on every
// event, and stop, which releases the watch and must be called.
func WithIdle(ctx context.Context, d time.Duration) (watched context.Context, touch, stop func()) {
	actx, cancel := context.WithCancelCause(ctx)
	if d <= 0 {
		return actx, func() {}, func() { cancel(nil) }
	}
	t := time.AfterFunc(d, func() { cancel(ErrIdle) })
	return actx, func() { t.Reset(d) }, func() { t.Stop(); cancel(nil) }
}

// Idle reports whether ctx ended because its stream went silent.
func Idle(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrIdle) }
