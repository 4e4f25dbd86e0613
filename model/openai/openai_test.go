package openai_test

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
	"github.com/fractal-harness/fractal/model/fake"
	"github.com/fractal-harness/fractal/model/openai"
	"github.com/fractal-harness/fractal/model/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// --- the wire protocol: "data:" chunks, a usage-only chunk, [DONE] ---

type obj = map[string]any

func data(v any) fake.Event {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return fake.Event{Data: string(b)}
}

func chunk(delta obj, finish any) fake.Event {
	return data(obj{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test-2025",
		"choices": []any{obj{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}, "usage": nil})
}

func content(s string) fake.Event { return chunk(obj{"content": s}, nil) }

func role() fake.Event { return chunk(obj{"role": "assistant", "content": ""}, nil) }

func callStart(index int, id, name string) fake.Event {
	return chunk(obj{"tool_calls": []any{obj{"index": index, "id": id, "type": "function", "function": obj{"name": name, "arguments": ""}}}}, nil)
}

func callArgs(index int, piece string) fake.Event {
	return chunk(obj{"tool_calls": []any{obj{"index": index, "function": obj{"arguments": piece}}}}, nil)
}

func finish(reason string) fake.Event { return chunk(obj{}, reason) }

// usage is the usage-only chunk; choices is []any{} (OpenAI) or nil
// (servers that send null).
func usage(choices any, prompt, completion, cached int) fake.Event {
	return data(obj{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test-2025",
		"choices": choices, "usage": obj{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
			"prompt_tokens_details": obj{"cached_tokens": cached}}})
}

func done() fake.Event { return fake.Event{Data: "[DONE]"} }

func errorBody(typ, code, msg string) string {
	b, _ := json.Marshal(obj{"error": obj{"message": msg, "type": typ, "param": nil, "code": code}})
	return string(b)
}

func textTurn(text string) []fake.Event {
	return []fake.Event{role(), content(text), finish("stop"), usage([]any{}, 10, 3, 0), done()}
}

// toolTurn: text, then two tool calls whose arguments arrive in pieces.
func toolTurn() []fake.Event {
	return []fake.Event{
		role(), content("Let me "), content("look."),
		callStart(0, "call_01", "read_file"), callArgs(0, `{"path": "no`), callArgs(0, `tes.md"}`),
		callStart(1, "call_02", "search"), callArgs(1, `{"query": "q3 revenue", `), callArgs(1, `"limit": 5}`),
		finish("tool_calls"),
		usage([]any{}, 1900, 89, 1800),
		done(),
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

func newClient(t testing.TB, srv *fake.Server, r *run, mod func(*openai.Config)) *openai.Client {
	t.Helper()
	cfg := openai.Config{APIKey: "sk-test", BaseURL: srv.URL + "/v1", Model: "gpt-test", Retry: retry.Policy{Sleep: r.sleep}}
	if mod != nil {
		mod(&cfg)
	}
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func request() model.Request {
	return model.Request{
		Role: model.Worker, Instance: "root.2", System: "You write reports.", MaxTokens: 2000,
		Messages: []model.Message{
			{Role: "user", Text: "Summarise notes.md"},
			{Role: "assistant", Text: "Reading.", ToolCalls: []model.ToolCall{{ID: "call_00", Name: "read_file", Args: json.RawMessage(`{"path":"x"}`)}}},
			{Role: "user", ToolResults: []model.ToolResult{{CallID: "call_00", Content: "no such file", IsError: true}}, Text: "Try notes.md"},
		},
		Tools: []model.ToolSpec{
			{Name: "read_file", Description: "Read a file", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","maxLength":4096}},"required":["path"]}`)},
			{Name: "search", Schema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
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

type wireRequest struct {
	Model               string `json:"model"`
	Stream              bool   `json:"stream"`
	MaxTokens           *int   `json:"max_tokens"`
	MaxCompletionTokens *int   `json:"max_completion_tokens"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User     string            `json:"user"`
	Store    *bool             `json:"store"`
	Metadata map[string]string `json:"metadata"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func sent(t *testing.T, srv *fake.Server, i int) wireRequest {
	t.Helper()
	var w wireRequest
	if err := json.Unmarshal(srv.Requests()[i].Body, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// --- tests ---

func TestNew(t *testing.T) {
	if _, err := openai.New(openai.Config{Model: "gpt"}); err == nil {
		t.Error("no key and no base URL accepted")
	}
	if _, err := openai.New(openai.Config{APIKey: "k"}); err == nil {
		t.Error("no model accepted")
	}
	if _, err := openai.New(openai.Config{Model: "m", BaseURL: "http://localhost:8080/v1"}); err != nil {
		t.Errorf("local server without key refused: %v", err)
	}
	if _, err := openai.New(openai.Config{Model: "m", BaseURL: "localhost:8080"}); err == nil {
		t.Error("base URL without scheme accepted")
	}
	if _, err := openai.New(openai.Config{Model: "m", APIKey: "k", MaxTokensField: "n_predict"}); err == nil {
		t.Error("unknown MaxTokensField accepted")
	}
}

// A full tool-use turn through the SDK, and the request as the protocol
// has it.
func TestToolUseTurn(t *testing.T) {
	srv := fake.NewServer(fake.SSE(toolTurn()...))
	defer srv.Close()
	r := &run{}
	resp, err := newClient(t, srv, r, nil).Generate(r.ctx(context.Background()), request())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Let me look." || resp.StopReason != "tool_use" || resp.Model != "gpt-test-2025" {
		t.Fatalf("response %+v", resp)
	}
	if len(resp.ToolCalls) != 2 {
		t.Fatalf("calls %+v", resp.ToolCalls)
	}
	c0, c1 := resp.ToolCalls[0], resp.ToolCalls[1]
	if c0.ID != "call_01" || c0.Name != "read_file" || string(c0.Args) != `{"path": "notes.md"}` || c0.Invalid != "" {
		t.Errorf("call 0 %+v", c0)
	}
	if c1.ID != "call_02" || c1.Name != "search" || string(c1.Args) != `{"query": "q3 revenue", "limit": 5}` {
		t.Errorf("call 1 %+v", c1)
	}
	// prompt_tokens counts the cached tokens; Usage holds them apart.
	if want := (model.Usage{Input: 100, Output: 89, CacheRead: 1800}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v", resp.Usage, want)
	}
	if k := r.kinds(); len(k) != 1 || k[0] != "" {
		t.Errorf("attempts %+v", r.attempts)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" || reqs[0].Header.Get("Authorization") != "Bearer sk-test" {
		t.Fatalf("requests %+v", reqs)
	}
	w := sent(t, srv, 0)
	if w.Model != "gpt-test" || !w.Stream || !w.StreamOptions.IncludeUsage || w.User != "fractal/worker/root.2" {
		t.Errorf("request %s", reqs[0].Body)
	}
	if w.MaxTokens == nil || *w.MaxTokens != 2000 || w.MaxCompletionTokens != nil {
		t.Errorf("a custom base URL gets max_tokens: %s", reqs[0].Body)
	}
	if w.Store != nil || w.Metadata != nil {
		t.Errorf("metadata without Store: %s", reqs[0].Body)
	}
	var roles []string
	for _, m := range w.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,user" {
		t.Fatalf("roles %v", roles)
	}
	a, tool := w.Messages[2], w.Messages[3]
	if len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "call_00" || a.ToolCalls[0].Type != "function" ||
		a.ToolCalls[0].Function.Name != "read_file" || a.ToolCalls[0].Function.Arguments != `{"path":"x"}` {
		t.Errorf("assistant %+v", a)
	}
	if tool.ToolCallID != "call_00" || string(tool.Content) != `"error: no such file"` {
		t.Errorf("tool message %+v", tool)
	}
	if len(w.Tools) != 2 || w.Tools[0].Type != "function" || w.Tools[0].Function.Name != "read_file" ||
		!strings.Contains(string(w.Tools[0].Function.Parameters), `"maxLength":4096`) {
		t.Errorf("tools %+v", w.Tools)
	}
}

func TestRequestOptions(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/elsewhere")
	srv := fake.NewServer(fake.SSE(textTurn("a")...), fake.SSE(textTurn("b")...))
	defer srv.Close()

	// A local server without a key: no Authorization at all, and never
	// the key from the environment.
	if _, err := newClient(t, srv, &run{}, func(c *openai.Config) { c.APIKey = "" }).Generate(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization %q sent to a server configured without a key", h)
	}

	c := newClient(t, srv, &run{}, func(c *openai.Config) { c.Store = true; c.MaxTokensField = openai.MaxCompletionTokens })
	if _, err := c.Generate(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	w := sent(t, srv, 1)
	if w.Store == nil || !*w.Store || w.Metadata["fractal_role"] != "worker" || w.Metadata["fractal_instance"] != "root.2" {
		t.Errorf("store/metadata %s", srv.Requests()[1].Body)
	}
	if w.MaxCompletionTokens == nil || *w.MaxCompletionTokens != 2000 || w.MaxTokens != nil {
		t.Errorf("max_completion_tokens %s", srv.Requests()[1].Body)
	}
}

// Text and two calls whose deltas interleave are assembled by index.
func TestInterleavedDeltas(t *testing.T) {
	srv := fake.NewServer(fake.SSE(
		role(), content("First."),
		callStart(0, "call_a", "write"), callStart(1, "call_b", "read"),
		callArgs(1, `{"p":`), callArgs(0, `{"a":`), callArgs(0, `1}`), content(" Then."), callArgs(1, `2}`),
		finish("tool_calls"), usage(nil, 10, 5, 0), done(),
	))
	defer srv.Close()
	resp, err := newClient(t, srv, &run{}, nil).Generate(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "First. Then." || len(resp.ToolCalls) != 2 ||
		string(resp.ToolCalls[0].Args) != `{"a":1}` || string(resp.ToolCalls[1].Args) != `{"p":2}` || resp.ToolCalls[1].ID != "call_b" {
		t.Fatalf("%+v", resp)
	}
}

// NOTES.md "Malformed streamed tool arguments".
func TestMalformedToolArguments(t *testing.T) {
	srv := fake.NewServer(fake.SSE(
		role(), callStart(0, "call_bad", "write"), callArgs(0, `{"path": "a.md", "text": "unterminated`),
		callStart(1, "call_ok", "write"), callArgs(1, `{"path": "b.md"}`),
		finish("tool_calls"), usage([]any{}, 5, 5, 0), done(),
	))
	defer srv.Close()
	resp, err := newClient(t, srv, &run{}, nil).Generate(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	bad, ok := resp.ToolCalls[0], resp.ToolCalls[1]
	if bad.Invalid != `{"path": "a.md", "text": "unterminated` || string(bad.Args) != "{}" || bad.ID != "call_bad" {
		t.Errorf("malformed call %+v", bad)
	}
	if ok.Invalid != "" || string(ok.Args) != `{"path": "b.md"}` {
		t.Errorf("valid call %+v", ok)
	}
}

// The usage-only chunk is read whether its choices are [] or null, and a
// server that sends none gives zero usage, not an error.
func TestUsageChunk(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []fake.Event
		want   model.Usage
	}{
		{"choices []", []fake.Event{role(), content("hi"), finish("stop"), usage([]any{}, 12, 4, 0), done()}, model.Usage{Input: 12, Output: 4}},
		{"choices null", []fake.Event{role(), content("hi"), finish("stop"), usage(nil, 12, 4, 2), done()}, model.Usage{Input: 10, Output: 4, CacheRead: 2}},
		{"no usage chunk", []fake.Event{role(), content("hi"), finish("stop"), done()}, model.Usage{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fake.NewServer(fake.SSE(tc.events...))
			defer srv.Close()
			resp, err := newClient(t, srv, &run{}, nil).Generate(context.Background(), request())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "hi" || resp.StopReason != "end_turn" || resp.Usage != tc.want {
				t.Errorf("%+v, want usage %+v", resp, tc.want)
			}
		})
	}
}

func TestLengthIsMaxTokens(t *testing.T) {
	srv := fake.NewServer(fake.SSE(role(), content("cut sh"), finish("length"), usage([]any{}, 5, 100, 0), done()))
	defer srv.Close()
	resp, err := newClient(t, srv, &run{}, nil).Generate(context.Background(), request())
	if err != nil || resp.StopReason != "max_tokens" || resp.Text != "cut sh" {
		t.Fatalf("%+v %v", resp, err)
	}
}

// Transient failures are retried, every attempt observed once, and only
// the successful attempt's usage returned.
func TestRetries(t *testing.T) {
	for _, tc := range []struct {
		name             string
		first            fake.Step
		kind             model.ErrorKind
		minWait, maxWait time.Duration
	}{
		{"429 retry-after", fake.Status(429, map[string]string{"Retry-After": "7"}, errorBody("requests", "rate_limit_exceeded", "Rate limit reached")), model.ErrRateLimited, 7 * time.Second, 7 * time.Second},
		{"429 retry-after-ms", fake.Status(429, map[string]string{"Retry-After-Ms": "2500"}, errorBody("requests", "rate_limit_exceeded", "Rate limit reached")), model.ErrRateLimited, 2500 * time.Millisecond, 2500 * time.Millisecond},
		{"503 overloaded", fake.Status(503, nil, errorBody("server_error", "", "The engine is currently overloaded")), model.ErrOverloaded, 800 * time.Millisecond, 1200 * time.Millisecond},
		{"500", fake.Status(500, nil, errorBody("server_error", "", "internal")), model.ErrServer, 800 * time.Millisecond, 1200 * time.Millisecond},
		{"502", fake.Status(502, nil, "bad gateway"), model.ErrServer, 0, time.Hour},
		{"error chunk mid-stream", fake.SSE(role(), content("partial"), data(obj{"error": obj{"message": "The server had an error", "type": "server_error", "code": nil}})), model.ErrServer, 0, time.Hour},
		{"overloaded chunk mid-stream", fake.SSE(role(), data(obj{"error": obj{"message": "busy", "type": "overloaded_error", "code": 503}})), model.ErrOverloaded, 0, time.Hour},
		{"stream cut", fake.Cut(role(), content("partial")), model.ErrNetwork, 0, time.Hour},
		{"clean end before finish_reason", fake.SSE(role(), content("partial")), model.ErrNetwork, 0, time.Hour},
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
			if a.N != 1 || r.attempts[1].N != 2 || a.Model != "gpt-test" || a.Err == "" {
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

func TestNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name     string
		step     fake.Step
		kind     model.ErrorKind
		fallback bool
	}{
		{"400", fake.Status(400, nil, errorBody("invalid_request_error", "", "messages: bad")), model.ErrBadRequest, false},
		{"401", fake.Status(401, nil, errorBody("invalid_request_error", "invalid_api_key", "Incorrect API key")), model.ErrAuth, false},
		{"404 unknown model", fake.Status(404, nil, errorBody("invalid_request_error", "model_not_found", "The model `gpt-nope` does not exist")), model.ErrNotFound, true},
		{"400 model_not_found", fake.Status(400, nil, errorBody("invalid_request_error", "model_not_found", "no such model")), model.ErrNotFound, true},
		{"429 insufficient_quota", fake.Status(429, nil, errorBody("insufficient_quota", "insufficient_quota", "You exceeded your current quota")), model.ErrAuth, false},
		{"content_filter", fake.SSE(role(), content("I"), finish("content_filter"), usage([]any{}, 1, 1, 0), done()), model.ErrRefused, true},
		{"refusal", fake.SSE(role(), chunk(obj{"refusal": "I can't help with that."}, nil), finish("stop"), done()), model.ErrRefused, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fake.NewServer(tc.step, fake.SSE(textTurn("never")...))
			defer srv.Close()
			r := &run{}
			_, err := newClient(t, srv, r, nil).Generate(r.ctx(context.Background()), request())
			me := wantKind(t, err, tc.kind)
			if me.Fallback() != tc.fallback || me.Retryable() || me.Provider != "openai" || me.Model != "gpt-test" {
				t.Errorf("error %+v", me)
			}
			if srv.Count() != 1 || len(r.attempts) != 1 || r.attempts[0].Kind != tc.kind {
				t.Errorf("%d requests, attempts %+v", srv.Count(), r.attempts)
			}
		})
	}
}

func TestStallPastDeadline(t *testing.T) {
	srv := fake.NewServer(fake.Stall(nil, role(), content("thinking")))
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

func TestIdleStreamIsRetried(t *testing.T) {
	srv := fake.NewServer(fake.Stall(nil, role()), fake.SSE(textTurn("done")...))
	defer srv.Close()
	r := &run{}
	c := newClient(t, srv, r, func(c *openai.Config) { c.IdleTimeout = 100 * time.Millisecond })
	resp, err := c.Generate(r.ctx(context.Background()), request())
	if err != nil || resp.Text != "done" {
		t.Fatalf("%+v %v", resp, err)
	}
	if k := r.kinds(); len(k) != 2 || k[0] != model.ErrNetwork {
		t.Errorf("attempts %+v", r.attempts)
	}
}

func TestCancelStopsAtOnce(t *testing.T) {
	reached := make(chan struct{}, 1)
	srv := fake.NewServer(fake.Stall(reached, role(), content("working")))
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
}

// A server that puts every call at index 0 and tells them apart by id,
// and one that sends no id at all.
func TestLenientToolCallDeltas(t *testing.T) {
	srv := fake.NewServer(fake.SSE(
		role(), callStart(0, "call_x", "a"), callArgs(0, `{}`), callStart(0, "call_y", "b"), callArgs(0, `{"k":1}`),
		chunk(obj{"tool_calls": []any{obj{"index": 2, "function": obj{"name": "c", "arguments": `{}`}}}}, nil),
		finish("stop"), done(),
	))
	defer srv.Close()
	resp, err := newClient(t, srv, &run{}, nil).Generate(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(resp.ToolCalls)
	if len(resp.ToolCalls) != 3 || resp.ToolCalls[0].Name != "a" || resp.ToolCalls[1].ID != "call_y" ||
		string(resp.ToolCalls[1].Args) != `{"k":1}` || resp.ToolCalls[2].ID != "call_2" || resp.StopReason != "tool_use" {
		t.Errorf("%s stop %q", got, resp.StopReason)
	}
}

func ExampleNew() {
	// A llama.cpp server (llama-server --port 8080) needs no key.
	c, err := openai.New(openai.Config{BaseURL: "http://localhost:8080/v1", Model: "local"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Model())
	// Output: local
}

// A refused connection is a network error, retried up to MaxAttempts.
func TestConnectionRefused(t *testing.T) {
	srv := fake.NewServer()
	srv.Close() // nothing listens on its address any more
	r := &run{}
	c := newClient(t, srv, r, func(c *openai.Config) { c.Retry.MaxAttempts = 2; c.ConnectTimeout = time.Second })
	_, err := c.Generate(r.ctx(context.Background()), request())
	wantKind(t, err, model.ErrNetwork)
	if k := r.kinds(); len(k) != 2 || k[0] != model.ErrNetwork || k[1] != model.ErrNetwork {
		t.Errorf("attempts %+v", r.attempts)
	}
}

type captureTransport struct{ req *http.Request }

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.req = r
	return &http.Response{StatusCode: 401, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
		Body: io.NopCloser(strings.NewReader(errorBody("invalid_request_error", "invalid_api_key", "bad key")))}, nil
}

// Without a BaseURL the client talks to OpenAI itself: its URL, the
// current output-bound field and a prompt cache key.
func TestOpenAIDefaults(t *testing.T) {
	ct := &captureTransport{}
	c, err := openai.New(openai.Config{APIKey: "sk-x", Model: "gpt-5", MaxTokens: 300, HTTPClient: &http.Client{Transport: ct}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(context.Background(), request())
	wantKind(t, err, model.ErrAuth)
	if u := ct.req.URL.String(); u != "https://api.openai.com/v1/chat/completions" {
		t.Errorf("url %s", u)
	}
	b, _ := io.ReadAll(ct.req.Body)
	var w struct {
		MaxCompletionTokens int    `json:"max_completion_tokens"`
		MaxTokens           *int   `json:"max_tokens"`
		PromptCacheKey      string `json:"prompt_cache_key"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	if w.MaxCompletionTokens != 2000 || w.MaxTokens != nil || w.PromptCacheKey != "fractal/worker/root.2" {
		t.Errorf("body %s", b)
	}
}
