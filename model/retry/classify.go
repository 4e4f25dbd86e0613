package retry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fractal-harness/fractal/model"
)

// KindForStatus classifies an HTTP error status the same way for every
// provider: 429 rate limited; 529 (Anthropic's "overloaded") overloaded;
// 408, 409 and every 5xx server (retryable); 401 and 403 auth; 404 not
// found; any other 4xx bad request (our request is wrong, so no retry).
// It returns "" for a status below 400.
func KindForStatus(status int) model.ErrorKind {
	switch {
	case status == http.StatusTooManyRequests:
		return model.ErrRateLimited
	case status == 529:
		return model.ErrOverloaded
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status >= 500:
		return model.ErrServer
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return model.ErrAuth
	case status == http.StatusNotFound:
		return model.ErrNotFound
	case status >= 400:
		return model.ErrBadRequest
	}
	return ""
}

// ParseRetryAfter reads the wait a server asked for: retry-after-ms (a
// non-standard header both Anthropic and OpenAI send, more precise), else
// retry-after as delay-seconds or an HTTP date (RFC 9110 §10.2.3), measured
// from now. It returns 0 when there is none or it cannot be read.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// ContextKind returns ErrTimeout or ErrCancelled when ctx has ended, and ""
// while it is live. A failed call whose context ended is reported as the
// end of the context, whatever the transport made of it.
func ContextKind(ctx context.Context) model.ErrorKind {
	switch err := ctx.Err(); {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return model.ErrTimeout
	default:
		return model.ErrCancelled
	}
}

// IsNetwork reports whether err is a transport failure worth retrying: a
// refused or reset connection, a stream cut short (unexpected EOF), a
// dial or TLS failure, a transport timeout. It is false for context
// errors, which callers classify with ContextKind first.
func IsNetwork(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	// net/http reports some transport failures only as text (for example
	// "http2: server sent GOAWAY", "transport connection broken").
	s := err.Error()
	for _, frag := range []string{"connection reset", "broken pipe", "transport connection broken", "server closed", "GOAWAY", "stream error", "unexpected EOF"} {
		if strings.Contains(s, frag) {
			return true
		}
	}
	return false
}
