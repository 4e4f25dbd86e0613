package script

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fractal-harness/fractal/model"
)

// ErrNoSession is wrapped by the error Generate returns when no session
// matches the request.
var ErrNoSession = errors.New("no matching session")

// ErrExhausted is wrapped by the error Generate returns when the matching
// session has no turn left for the request: the conversation already holds
// as many assistant messages as the session has turns.
var ErrExhausted = errors.New("session exhausted")

// ModelName is Response.Model for every scripted answer.
const ModelName = "script"

var _ model.Model = (*Script)(nil)

// Generate answers req with the scripted turn: the first matching session
// (see Session), turn req.Turn(). It waits the turn's latency first and
// returns ctx.Err() at once if ctx ends while waiting.
func (s *Script) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	if err := ctx.Err(); err != nil {
		return model.Response{}, err
	}
	i, sess := s.match(req)
	if sess == nil {
		return model.Response{}, fmt.Errorf("%s: %w for role %q (instance %q, attempt %d, intent %q)",
			s.label(), ErrNoSession, req.Role, req.Instance, req.Attempt, truncate(req.Intent, 80))
	}
	n := req.Turn()
	if n >= len(sess.Turns) {
		return model.Response{}, fmt.Errorf("%s: %w: %s has %d turn(s) and the conversation already has %d assistant message(s)",
			s.label(), ErrExhausted, describeSession(i, sess), len(sess.Turns), n)
	}
	t := &sess.Turns[n]
	resp, err := respond(req, n, t)
	if err != nil {
		return model.Response{}, fmt.Errorf("%s: %s turn %d: %w", s.label(), describeSession(i, sess), n, err)
	}
	if err := sleep(ctx, s.delay(t)); err != nil {
		return model.Response{}, err
	}
	return resp, nil
}

// match returns the first session, in file order, whose role is the
// request's and whose filters all match. First match lets a script put
// specific sessions (one instance, a retry) before a catch-all.
func (s *Script) match(req model.Request) (int, *Session) {
	for i := range s.Sessions {
		ss := &s.Sessions[i]
		if ss.Role != req.Role ||
			(ss.Match != "" && !strings.Contains(req.Intent, ss.Match)) ||
			(ss.Attempt != 0 && ss.Attempt != req.Attempt) ||
			(ss.Instance != "" && ss.Instance != req.Instance) ||
			(ss.Offers != "" && !offers(req, ss.Offers)) ||
			(ss.Session != 0 && ss.Session != req.Session) {
			continue
		}
		return i, ss
	}
	return -1, nil
}

func offers(req model.Request, name string) bool {
	for _, t := range req.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func describeSession(i int, ss *Session) string {
	parts := []string{"role " + string(ss.Role)}
	if ss.Match != "" {
		parts = append(parts, fmt.Sprintf("match %q", truncate(ss.Match, 80)))
	}
	if ss.Attempt != 0 {
		parts = append(parts, fmt.Sprintf("attempt %d", ss.Attempt))
	}
	if ss.Instance != "" {
		parts = append(parts, fmt.Sprintf("instance %q", ss.Instance))
	}
	if ss.Offers != "" {
		parts = append(parts, fmt.Sprintf("offers %q", ss.Offers))
	}
	if ss.Session != 0 {
		parts = append(parts, fmt.Sprintf("session %d", ss.Session))
	}
	return fmt.Sprintf("sessions[%d] (%s)", i, strings.Join(parts, ", "))
}

// respond builds the answer of turn t, the n-th of its session. Everything
// is built afresh, so callers may keep or modify responses freely.
func respond(req model.Request, n int, t *Turn) (model.Response, error) {
	resp := model.Response{Text: t.Text, Model: ModelName, StopReason: t.StopReason}
	outBytes := len(t.Text)
	for k := range t.ToolCalls {
		c := &t.ToolCalls[k]
		args, err := c.args()
		if err != nil {
			return model.Response{}, fmt.Errorf("tool_calls[%d]: %w", k, err)
		}
		// Copy, so that a caller writing into Args cannot change the script.
		args = append([]byte(nil), args...)
		outBytes += len(args)
		resp.ToolCalls = append(resp.ToolCalls, model.ToolCall{
			ID:   fmt.Sprintf("call_%d_%d", n, k),
			Name: c.Name,
			Args: args,
		})
	}
	if resp.StopReason == "" {
		resp.StopReason = "end_turn"
		if len(resp.ToolCalls) > 0 {
			resp.StopReason = "tool_use"
		}
	}
	if t.Usage != nil {
		resp.Usage = *t.Usage
	} else {
		// Budgets downstream should see numbers of the right size; about
		// four bytes a token is the usual rule of thumb.
		resp.Usage = model.Usage{Input: tokens(inputBytes(req)), Output: tokens(outBytes)}
	}
	return resp, nil
}

func inputBytes(req model.Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Text)
		for _, c := range m.ToolCalls {
			n += len(c.Args)
		}
		for _, r := range m.ToolResults {
			n += len(r.Content)
		}
	}
	return n
}

// tokens estimates the token count of n bytes, rounding up so that any
// text counts at least one token.
func tokens(n int) int { return (n + 3) / 4 }

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
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
