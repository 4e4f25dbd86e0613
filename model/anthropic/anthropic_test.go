package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/anthropic"
	"github.com/fractal-harness/fractal/model/fake"
	"github.com/fractal-harness/fractal/model/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// --- the wire protocol, as the Messages streaming documentation shows it ---

func ev(name string, v any) fake.Event {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return fake.Event{Name: name, Data: string(b)}
}

type obj = map[string]any

func messageStart(input, cacheRead, cacheWrite int) fake.Event {
	return ev("message_start", obj{"type": "message_start", "message": obj{
		"id": "msg_01", "type": "message", "role": "assistant", "content": []any{},
		"model": "claude-test-20250101", "stop_reason": nil, "stop_sequence": nil,
		"usage": obj{"input_tokens": input, "output_tokens": 1,
			"cache_read_input_tokens": cacheRead, "cache_creation_input_tokens": cacheWrite},
	}})
}

func textStart(i int) fake.Event {
	return ev("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "text", "text": ""}})
}

func textDelta(i int, s string) fake.Event {
	return ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "text_delta", "text": s}})
}

func toolStart(i int, id, name string) fake.Event {
	return ev("content_block_start", obj{"type": "content_block_start", "index": i,
		"content_block": obj{"type": "tool_use", "id": id, "name": name, "input": obj{}}})
}

func jsonDelta(i int, piece string) fake.Event {
	return ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "input_json_delta", "partial_json": piece}})
}

func blockStop(i int) fake.Event {
	return ev("content_block_stop", obj{"type": "content_block_stop", "index": i})
}

func messageDelta(stop string, output int) fake.Event {
	return ev("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil}, "usage": obj{"output_tokens": output}})
}

func messageStop() fake.Event { return ev("message_stop", obj{"type": "message_stop"}) }

func ping() fake.Event { return ev("ping", obj{"type": "ping"}) }

func errorEvent(typ, msg string) fake.Event {
	return ev("error", obj{"type": "error", "error": obj{"type": typ, "message": msg}})
}

func errorBody(typ, msg string) string {
	b, _ := json.Marshal(obj{"type": "error", "error": obj{"type": typ, "message": msg}})
	return string(b)
}

// textTurn is a complete, minimal answer.
func textTurn(text string) []fake.Event {
	return []fake.Event{
		messageStart(10, 0, 0), textStart(0), textDelta(0, text), blockStop(0),
		messageDelta("end_turn", 3), messageStop(),
	}
}

// toolTurn is text then two tool calls, with a ping and an event type
// this client does not know in the middle, as the API may send.
func toolTurn() []fake.Event {
	return []fake.Event{
		messageStart(25, 1800, 300),
		textStart(0), textDelta(0, "Let me "), ping(), textDelta(0, "look."), blockStop(0),
		toolStart(1, "toolu_01", "read_file"),
		jsonDelta(1, ""), jsonDelta(1, `{"path": "no`), jsonDelta(1, `tes.md"}`), blockStop(1),
		{Name: "future_event", Data: `{"type":"future_event","detail":1}`},
		toolStart(2, "toolu_02", "search"),
		jsonDelta(2, `{"query": "q3 revenue", `), jsonDelta(2, `"limit": 5}`), blockStop(2),
		messageDelta("tool_use", 89), messageStop(),
	}
}

// --- harness ---

type run struct {
	mu       sync.Mutex
	attempts []model.Attempt
	waits    []time.Duration
}

func (r *run) ctx(parent context.Context) context.Context {
	return model.WithAttemptObserver(parent, func(a model.Attempt) {
		r.mu.Lock()
		r.attempts = append(r.attempts, a)
		r.mu.Unlock()
	})
}

// sleep records the wait and returns at once: no test sleeps for real.
func (r *run) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return ctx.Err()
}

func (r *run) kinds() []model.ErrorKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var k []model.ErrorKind
	for _, a := range r.attempts {
		k = append(k, a.Kind)
	}
	return k
}

func newClient(t testing.TB, srv *fake.Server, r *run, mod func(*anthropic.Config)) *anthropic.Client {
	t.Helper()
	cfg := anthropic.Config{APIKey: "sk-test", BaseURL: srv.URL, Model: "claude-test", Retry: retry.Policy{Sleep: r.sleep}}
	if mod != nil {
		mod(&cfg)
	}
	c, err := anthropic.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func request() model.Request {
	return model.Request{
		Role: model.Worker, Instance: "root.2", System: "You write reports.",
		Messages: []model.Message{
			{Role: "user", Text: "Summarise notes.md"},
			{Role: "assistant", Text: "Reading.", ToolCalls: []model.ToolCall{{ID: "toolu_00", Name: "read_file", Args: json.RawMessage(`{"path":"x"}`)}}},
			{Role: "user", ToolResults: []model.ToolResult{{CallID: "toolu_00", Content: "no such file", IsError: true}}},
		},
		Tools: []model.ToolSpec{
			{Name: "read_file", Description: "Read a file", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			{Name: "search", Description: "Search", Schema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}}}`)},
		},
	}
}

func wantKind(t *testing.T, err error, k model.ErrorKind) *model.Error {
	t.Helper()
	me, ok := model.AsError(err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *model.Error", err, err)
	}
	if me.Kind != k {
		t.Fatalf("kind %q, want %q (%v)", me.Kind, k, err)
	}
	return me
}

// --- tests ---

func TestNewRequiresKeyAndModel(t *testing.T) {
	for _, cfg := range []anthropic.Config{{Model: "m"}, {APIKey: "k"}, {APIKey: "k", Model: "m", BaseURL: "not a url"}} {
		if _, err := anthropic.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// A full tool-use turn through the SDK: text, two tool calls with their
// ids, names and arguments, usage with the cache counts; and the request
// as the API expects it, with cache breakpoints and metadata.
func TestToolUseTurn(t *testing.T) {
	srv := fake.NewServer(fake.SSE(toolTurn()...))
	defer srv.Close()
	r := &run{}
	c := newClient(t, srv, r, nil)

	resp, err := c.Generate(r.ctx(context.Background()), request())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Let me look." || resp.StopReason != "tool_use" || resp.Model != "claude-test-20250101" {
		t.Fatalf("response %+v", resp)
	}
	if len(resp.ToolCalls) != 2 {
		t.Fatalf("tool calls %+v", resp.ToolCalls)
	}
	c0, c1 := resp.ToolCalls[0], resp.ToolCalls[1]
	if c0.ID != "toolu_01" || c0.Name != "read_file" || string(c0.Args) != `{"path": "notes.md"}` || c0.Invalid != "" {
		t.Errorf("call 0 %+v", c0)
	}
	if c1.ID != "toolu_02" || c1.Name != "search" || string(c1.Args) != `{"query": "q3 revenue", "limit": 5}` {
		t.Errorf("call 1 %+v", c1)
	}
	if want := (model.Usage{Input: 25, Output: 89, CacheRead: 1800, CacheWrite: 300}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v", resp.Usage, want)
	}
	if k := r.kinds(); len(k) != 1 || k[0] != "" {
		t.Errorf("attempts %+v", r.attempts)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/messages" {
		t.Fatalf("requests %+v", reqs)
	}
	if got := reqs[0].Header.Get("Authorization") + reqs[0].Header.Get("X-Api-Key"); !strings.Contains(got, "sk-test") {
		t.Errorf("no API key in headers %v", reqs[0].Header)
	}
	var body struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Stream    bool   `json:"stream"`
		System    []struct {
			Text         string `json:"text"`
			CacheControl *obj   `json:"cache_control"`
		} `json:"system"`
		Metadata struct {
			UserID string `json:"user_id"`
		} `json:"metadata"`
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"input_schema"`
			CacheControl *obj            `json:"cache_control"`
		} `json:"tools"`
		Messages []struct {
			Role    string `json:"role"`
			Content []obj  `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "claude-test" || body.MaxTokens != anthropic.DefaultMaxTokens || !body.Stream {
		t.Errorf("model/max_tokens/stream %+v", body)
	}
	if len(body.System) != 1 || body.System[0].Text != "You write reports." || body.System[0].CacheControl == nil {
		t.Errorf("system %+v", body.System)
	}
	if body.Metadata.UserID != "fractal/worker/root.2" {
		t.Errorf("metadata %+v", body.Metadata)
	}
	if len(body.Tools) != 2 || body.Tools[0].CacheControl != nil || body.Tools[1].CacheControl == nil {
		t.Errorf("tool cache breakpoints %s", reqs[0].Body)
	}
	if !strings.Contains(string(body.Tools[0].InputSchema), `"additionalProperties":false`) {
		t.Errorf("schema not verbatim: %s", body.Tools[0].InputSchema)
	}
	if len(body.Messages) != 3 {
		t.Fatalf("messages %s", reqs[0].Body)
	}
	asst := body.Messages[1].Content
	if len(asst) != 2 || asst[0]["type"] != "text" || asst[1]["type"] != "tool_use" || asst[1]["id"] != "toolu_00" {
		t.Errorf("assistant content %+v", asst)
	}
	res := body.Messages[2].Content
	if len(res) != 1 || res[0]["type"] != "tool_result" || res[0]["tool_use_id"] != "toolu_00" || res[0]["is_error"] != true || res[0]["cache_control"] == nil {
		t.Errorf("tool result %+v", res)
	}
}

// Blocks are assembled by index, whatever their kinds' order.
func TestInterleavedBlocks(t *testing.T) {
	srv := fake.NewServer(fake.SSE(
		messageStart(5, 0, 0),
		textStart(0), textDelta(0, "First."), blockStop(0),
		toolStart(1, "toolu_a", "write"), jsonDelta(1, `{"a":`), jsonDelta(1, `1}`), blockStop(1),
		textStart(2), textDelta(2, "Then."), blockStop(2),
		toolStart(3, "toolu_b", "noargs"), blockStop(3),
		messageDelta("tool_use", 12), messageStop(),
	))
	defer srv.Close()
	r := &run{}
	resp, err := newClient(t, srv, r, nil).Generate(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "First.\n\nThen." {
		t.Errorf("text %q", resp.Text)
	}
	if len(resp.ToolCalls) != 2 || string(resp.ToolCalls[0].Args) != `{"a":1}` || string(resp.ToolCalls[1].Args) != `{}` || resp.ToolCalls[1].Name != "noargs" {
		t.Errorf("calls %+v", resp.ToolCalls)
	}
}

// NOTES.md "Malformed streamed tool arguments": the raw pieces are kept and
// a call whose arguments do not parse is marked Invalid, never run as {}.
func TestMalformedToolArguments(t *testing.T) {
	srv := fake.NewServer(fake.SSE(
		messageStart(5, 0, 0),
		toolStart(0, "toolu_bad", "write"), jsonDelta(0, `{"path": "a.md", "text": "unterminated`), blockStop(0),
		toolStart(1, "toolu_ok", "write"), jsonDelta(1, `{"path": "b.md"}`), blockStop(1),
		messageDelta("tool_use", 7), messageStop(),
	))
	defer srv.Close()
	resp, err := newClient(t, srv, &run{}, nil).Generate(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	bad, ok := resp.ToolCalls[0], resp.ToolCalls[1]
	if bad.Invalid != `{"path": "a.md", "text": "unterminated` || string(bad.Args) != "{}" || bad.ID != "toolu_bad" {
		t.Errorf("malformed call %+v", bad)
	}
	if ok.Invalid != "" || string(ok.Args) != `{"path": "b.md"}` {
		t.Errorf("valid call %+v", ok)
	}
}

// Transient failures are retried and every attempt is observed once; only
// the successful attempt's usage is returned.
func TestRetries(t *testing.T) {
	date := time.Now().Add(9 * time.Second).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		name     string
		first    fake.Step
		kind     model.ErrorKind
		minWait  time.Duration
		maxWait  time.Duration
		status   int
		fallback bool
	}{
		{"429 retry-after seconds", fake.Status(429, map[string]string{"Retry-After": "7"}, errorBody("rate_limit_error", "slow down")), model.ErrRateLimited, 7 * time.Second, 7 * time.Second, 429, false},
		{"429 retry-after date", fake.Status(429, map[string]string{"Retry-After": date}, errorBody("rate_limit_error", "slow down")), model.ErrRateLimited, 7 * time.Second, 10 * time.Second, 429, false},
		{"529 overloaded", fake.Status(529, nil, errorBody("overloaded_error", "Overloaded")), model.ErrOverloaded, 800 * time.Millisecond, 1200 * time.Millisecond, 529, true},
		{"500", fake.Status(500, nil, errorBody("api_error", "internal")), model.ErrServer, 800 * time.Millisecond, 1200 * time.Millisecond, 500, false},
		{"503", fake.Status(503, nil, errorBody("api_error", "unavailable")), model.ErrServer, 0, time.Hour, 503, false},
		{"408", fake.Status(408, nil, errorBody("timeout_error", "timeout")), model.ErrServer, 0, time.Hour, 408, false},
		{"409", fake.Status(409, nil, errorBody("api_error", "conflict")), model.ErrServer, 0, time.Hour, 409, false},
		{"error event mid-stream", fake.SSE(messageStart(25, 0, 0), textStart(0), textDelta(0, "partial"), errorEvent("overloaded_error", "Overloaded")), model.ErrOverloaded, 0, time.Hour, 0, true},
		{"api_error event mid-stream", fake.SSE(messageStart(25, 0, 0), errorEvent("api_error", "boom")), model.ErrServer, 0, time.Hour, 0, false},
		{"stream cut", fake.Cut(messageStart(25, 0, 0), textStart(0), textDelta(0, "partial")), model.ErrNetwork, 0, time.Hour, 0, false},
		{"clean end before message_stop", fake.SSE(messageStart(25, 0, 0), textStart(0), textDelta(0, "partial")), model.ErrNetwork, 0, time.Hour, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fake.NewServer(tc.first, fake.SSE(textTurn("done")...))
			defer srv.Close()
			r := &run{}
			resp, err := newClient(t, srv, r, nil).Generate(r.ctx(context.Background()), request())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "done" || resp.Usage != (model.Usage{Input: 10, Output: 3}) {
				t.Errorf("response %+v (usage must be the successful attempt's alone)", resp)
			}
			if k := r.kinds(); len(k) != 2 || k[0] != tc.kind || k[1] != "" {
				t.Fatalf("attempt kinds %v, want [%s \"\"]", k, tc.kind)
			}
			a := r.attempts[0]
			if a.N != 1 || r.attempts[1].N != 2 || a.Model != "claude-test" || a.Err == "" {
				t.Errorf("attempts %+v", r.attempts)
			}
			if len(r.waits) != 1 || r.waits[0] != a.Wait || a.Wait < tc.minWait || a.Wait > tc.maxWait {
				t.Errorf("wait %v (slept %v), want in [%v, %v]", a.Wait, r.waits, tc.minWait, tc.maxWait)
			}
			if srv.Count() != 2 {
				t.Errorf("%d requests", srv.Count())
			}
		})
	}
}

// Errors that another try cannot fix are returned at once, classified.
func TestNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name     string
		step     fake.Step
		kind     model.ErrorKind
		fallback bool
	}{
		{"400", fake.Status(400, nil, errorBody("invalid_request_error", "messages: roles must alternate")), model.ErrBadRequest, false},
		{"413", fake.Status(413, nil, errorBody("request_too_large", "too large")), model.ErrBadRequest, false},
		{"401", fake.Status(401, nil, errorBody("authentication_error", "invalid x-api-key")), model.ErrAuth, false},
		{"403", fake.Status(403, nil, errorBody("permission_error", "no")), model.ErrAuth, false},
		{"404 unknown model", fake.Status(404, nil, errorBody("not_found_error", "model: claude-nope")), model.ErrNotFound, true},
		{"400 not_found_error", fake.Status(400, nil, errorBody("not_found_error", "model: claude-nope")), model.ErrNotFound, true},
		{"refusal", fake.SSE(messageStart(5, 0, 0), textStart(0), textDelta(0, "I can't"), blockStop(0), messageDelta("refusal", 3), messageStop()), model.ErrRefused, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fake.NewServer(tc.step, fake.SSE(textTurn("never")...))
			defer srv.Close()
			r := &run{}
			_, err := newClient(t, srv, r, nil).Generate(r.ctx(context.Background()), request())
			me := wantKind(t, err, tc.kind)
			if me.Fallback() != tc.fallback || me.Retryable() || me.Provider != "anthropic" || me.Model != "claude-test" {
				t.Errorf("error %+v", me)
			}
			if srv.Count() != 1 || len(r.attempts) != 1 || r.attempts[0].Kind != tc.kind || r.attempts[0].Wait != 0 {
				t.Errorf("%d requests, attempts %+v", srv.Count(), r.attempts)
			}
		})
	}
}

// Retries stop after MaxAttempts; each attempt is observed.
func TestRetriesExhausted(t *testing.T) {
	over := fake.Status(529, nil, errorBody("overloaded_error", "Overloaded"))
	srv := fake.NewServer(over, over, over)
	defer srv.Close()
	r := &run{}
	c := newClient(t, srv, r, func(c *anthropic.Config) { c.Retry.MaxAttempts = 3 })
	_, err := c.Generate(r.ctx(context.Background()), request())
	wantKind(t, err, model.ErrOverloaded)
	if srv.Count() != 3 || len(r.attempts) != 3 || len(r.waits) != 2 {
		t.Fatalf("%d requests, %d attempts, waits %v", srv.Count(), len(r.attempts), r.waits)
	}
	if r.attempts[2].Wait != 0 || r.waits[1] <= r.waits[0]/2 {
		t.Errorf("attempts %+v waits %v", r.attempts, r.waits)
	}
}

func TestMaxTokensStopIsPassedThrough(t *testing.T) {
	srv := fake.NewServer(fake.SSE(messageStart(5, 0, 0), textStart(0), textDelta(0, "cut sh"), blockStop(0), messageDelta("max_tokens", 100), messageStop()))
	defer srv.Close()
	req := request()
	req.MaxTokens = 100
	resp, err := newClient(t, srv, &run{}, nil).Generate(context.Background(), req)
	if err != nil || resp.StopReason != "max_tokens" || resp.Text != "cut sh" {
		t.Fatalf("%+v %v", resp, err)
	}
	if !strings.Contains(string(srv.Requests()[0].Body), `"max_tokens":100`) {
		t.Errorf("request max_tokens: %s", srv.Requests()[0].Body)
	}
}

// A stream that stalls past the caller's deadline ends the call promptly
// with ErrTimeout, and is not retried.
func TestStallPastDeadline(t *testing.T) {
	srv := fake.NewServer(fake.Stall(nil, messageStart(5, 0, 0), textStart(0), textDelta(0, "thinking")))
	defer srv.Close()
	r := &run{}
	ctx, cancel := context.WithTimeout(r.ctx(context.Background()), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := newClient(t, srv, r, nil).Generate(ctx, request())
	wantKind(t, err, model.ErrTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v does not wrap context.DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("returned after %v", el)
	}
	if srv.Count() != 1 || len(r.attempts) != 1 || r.attempts[0].Kind != model.ErrTimeout {
		t.Errorf("%d requests, attempts %+v", srv.Count(), r.attempts)
	}
}

// A stream that goes silent for IdleTimeout is ended and retried.
func TestIdleStreamIsRetried(t *testing.T) {
	srv := fake.NewServer(fake.Stall(nil, messageStart(5, 0, 0)), fake.SSE(textTurn("done")...))
	defer srv.Close()
	r := &run{}
	c := newClient(t, srv, r, func(c *anthropic.Config) { c.IdleTimeout = 100 * time.Millisecond })
	resp, err := c.Generate(r.ctx(context.Background()), request())
	if err != nil || resp.Text != "done" {
		t.Fatalf("%+v %v", resp, err)
	}
	if k := r.kinds(); len(k) != 2 || k[0] != model.ErrNetwork {
		t.Errorf("attempts %+v", r.attempts)
	}
}

// Cancelling the context stops the call at once, mid-stream.
func TestCancelStopsAtOnce(t *testing.T) {
	reached := make(chan struct{}, 1)
	srv := fake.NewServer(fake.Stall(reached, messageStart(5, 0, 0), textStart(0), textDelta(0, "working")))
	defer srv.Close()
	r := &run{}
	ctx, cancel := context.WithCancel(r.ctx(context.Background()))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := newClient(t, srv, r, nil).Generate(ctx, request())
		done <- err
	}()
	<-reached
	cancel()
	select {
	case err := <-done:
		wantKind(t, err, model.ErrCancelled)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%v does not wrap context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Generate did not return after cancel")
	}
	if srv.Count() != 1 {
		t.Errorf("%d requests", srv.Count())
	}
}

// A context cancelled during the backoff wait ends the call without
// another attempt.
func TestCancelDuringBackoff(t *testing.T) {
	srv := fake.NewServer(fake.Status(529, nil, errorBody("overloaded_error", "Overloaded")))
	defer srv.Close()
	r := &run{}
	ctx, cancel := context.WithCancel(r.ctx(context.Background()))
	c := newClient(t, srv, r, func(c *anthropic.Config) {
		c.Retry.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
	})
	_, err := c.Generate(ctx, request())
	me := wantKind(t, err, model.ErrCancelled)
	if me.Provider != "anthropic" || srv.Count() != 1 {
		t.Errorf("%+v, %d requests", me, srv.Count())
	}
}

func TestBadRequestIsNotSent(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	for _, req := range []model.Request{
		{Messages: []model.Message{{Role: "system", Text: "x"}}},
		{Messages: []model.Message{{Role: "user"}}},
		{Messages: []model.Message{{Role: "user", Text: "x"}}, Tools: []model.ToolSpec{{Name: "t", Schema: json.RawMessage(`[1]`)}}},
	} {
		_, err := newClient(t, srv, &run{}, nil).Generate(context.Background(), req)
		wantKind(t, err, model.ErrBadRequest)
	}
	if srv.Count() != 0 {
		t.Errorf("%d requests sent", srv.Count())
	}
}

func ExampleNew() {
	c, err := anthropic.New(anthropic.Config{APIKey: "sk-ant-…", Model: "claude-sonnet-4-5"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Model())
	// Output: claude-sonnet-4-5
}

// A refused connection is a network error, retried up to MaxAttempts.
func TestConnectionRefused(t *testing.T) {
	srv := fake.NewServer()
	srv.Close() // nothing listens on its address any more
	r := &run{}
	c := newClient(t, srv, r, func(c *anthropic.Config) { c.Retry.MaxAttempts = 2; c.ConnectTimeout = time.Second })
	_, err := c.Generate(r.ctx(context.Background()), request())
	wantKind(t, err, model.ErrNetwork)
	if k := r.kinds(); len(k) != 2 || k[0] != model.ErrNetwork || k[1] != model.ErrNetwork {
		t.Errorf("attempts %+v", r.attempts)
	}
}

type captureTransport struct{ req *http.Request }

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.req = r
	return &http.Response{StatusCode: 401, Header: http.Header{"Content-Type": {"application/json"}, "Request-Id": {"req_1"}}, Request: r,
		Body: io.NopCloser(strings.NewReader(errorBody("authentication_error", "invalid x-api-key")))}, nil
}

// Without a BaseURL the client talks to Anthropic itself, and the
// environment does not change where or with which key.
func TestAnthropicDefaults(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1/elsewhere")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-the-environment")
	ct := &captureTransport{}
	c, err := anthropic.New(anthropic.Config{APIKey: "sk-ant-x", Model: "claude-x", HTTPClient: &http.Client{Transport: ct}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(context.Background(), request())
	me := wantKind(t, err, model.ErrAuth)
	if !strings.Contains(me.Msg, "req_1") || me.Status != 401 {
		t.Errorf("error %+v", me)
	}
	if u := ct.req.URL.String(); u != "https://api.anthropic.com/v1/messages" {
		t.Errorf("url %s", u)
	}
	if h := ct.req.Header.Get("Authorization") + ct.req.Header.Get("X-Api-Key"); strings.Contains(h, "environment") || !strings.Contains(h, "sk-ant-x") {
		t.Errorf("credentials %q", h)
	}
}
