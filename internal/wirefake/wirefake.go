// Package wirefake serves a model.Model (usually a scripted one) over the
// real wire protocols — Anthropic Messages and OpenAI Chat Completions,
// streamed as Server-Sent Events the way each provider documents — so that
// whole runs can be driven end to end through the official SDK clients.
//
// It is test infrastructure: it reads from each request only what a
// scripted model selects on (role and instance from the request metadata,
// the contract intent and attempt number from the prompt, the turn from the
// number of assistant messages).
package wirefake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/fractal-harness/fractal/model"
)

var (
	intentRe  = regexp.MustCompile(`(?s)[Ii]ntent:\n(.*?)\n\n`)
	attemptRe = regexp.MustCompile(`This is attempt (\d+)\.`)
)

// request rebuilds what the scripted model needs from the wire.
func request(user string, firstUserText string, assistants int, tools []string) model.Request {
	req := model.Request{Attempt: 1}
	for _, t := range tools {
		req.Tools = append(req.Tools, model.ToolSpec{Name: t})
	}
	if rest, ok := strings.CutPrefix(user, "fractal/"); ok {
		role, inst, _ := strings.Cut(rest, "/")
		req.Role, req.Instance = model.Role(role), inst
	}
	if m := intentRe.FindStringSubmatch(firstUserText); m != nil {
		req.Intent = m[1]
	}
	if m := attemptRe.FindStringSubmatch(firstUserText); m != nil {
		req.Attempt, _ = strconv.Atoi(m[1])
	}
	for range assistants {
		req.Messages = append(req.Messages, model.Message{Role: "assistant"})
	}
	req.Messages = append(req.Messages, model.Message{Role: "user", Text: firstUserText})
	return req
}

// Server is a fake provider endpoint. Requests counts the calls served.
type Server struct {
	*httptest.Server
	Requests atomic.Int64
	// Fail makes the next Fail requests answer with FailStatus (and a
	// retry-after of 0 seconds), as an overloaded or rate-limited server
	// would.
	Fail       atomic.Int64
	FailStatus int
}

// failing answers with the configured error while failures remain.
func (s *Server) failing(w http.ResponseWriter, body string) bool {
	if s.Fail.Add(-1) < 0 {
		s.Fail.Store(0)
		return false
	}
	w.Header().Set("content-type", "application/json")
	w.Header().Set("retry-after", "0")
	w.WriteHeader(s.FailStatus)
	io.WriteString(w, body)
	return true
}

// Anthropic serves m as the Anthropic Messages API (POST /v1/messages).
func Anthropic(m model.Model) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		if s.failing(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`) {
			return
		}
		var body struct {
			Model    string `json:"model"`
			Metadata struct {
				UserID string `json:"user_id"`
			} `json:"metadata"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, 400)
			return
		}
		first, assistants := "", 0
		for _, msg := range body.Messages {
			if msg.Role == "assistant" {
				assistants++
			} else if first == "" {
				first = textOf(msg.Content)
			}
		}
		var tools []string
		for _, t := range body.Tools {
			tools = append(tools, t.Name)
		}
		resp, err := m.Generate(r.Context(), request(body.Metadata.UserID, first, assistants, tools))
		if err != nil {
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, err.Error())
			return
		}
		w.Header().Set("content-type", "text/event-stream")
		ev := func(name string, v any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
			w.(http.Flusher).Flush()
		}
		ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_fake", "type": "message", "role": "assistant", "model": body.Model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": resp.Usage.Input, "output_tokens": 1, "cache_read_input_tokens": resp.Usage.CacheRead, "cache_creation_input_tokens": resp.Usage.CacheWrite}}})
		ev("ping", map[string]any{"type": "ping"})
		i := 0
		if resp.Text != "" {
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, piece := range split(resp.Text, 40) {
				ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": piece}})
			}
			ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
			i++
		}
		for _, c := range resp.ToolCalls {
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": "toolu_" + c.ID, "name": c.Name, "input": map[string]any{}}})
			args := string(c.Args)
			if c.Invalid != "" {
				args = c.Invalid
			}
			for _, piece := range split(args, 25) {
				ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
			}
			ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
			i++
		}
		stop := "end_turn"
		if len(resp.ToolCalls) > 0 {
			stop = "tool_use"
		}
		ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": resp.Usage.Output}})
		ev("message_stop", map[string]any{"type": "message_stop"})
	}))
	return s
}

// OpenAI serves m as OpenAI Chat Completions (POST /chat/completions under
// the base URL).
func OpenAI(m model.Model) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		if s.failing(w, `{"error":{"message":"overloaded","type":"server_error"}}`) {
			return
		}
		var body struct {
			Model    string `json:"model"`
			User     string `json:"user"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, 400)
			return
		}
		first, assistants := "", 0
		for _, msg := range body.Messages {
			switch msg.Role {
			case "assistant":
				assistants++
			case "user":
				if first == "" {
					first = textOf(msg.Content)
				}
			}
		}
		var tools []string
		for _, t := range body.Tools {
			tools = append(tools, t.Function.Name)
		}
		resp, err := m.Generate(r.Context(), request(body.User, first, assistants, tools))
		if err != nil {
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, err.Error())
			return
		}
		w.Header().Set("content-type", "text/event-stream")
		chunk := func(delta map[string]any, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": body.Model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		chunk(map[string]any{"role": "assistant", "content": ""}, nil)
		for _, piece := range split(resp.Text, 40) {
			chunk(map[string]any{"content": piece}, nil)
		}
		for i, c := range resp.ToolCalls {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": "call_" + c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
			args := string(c.Args)
			if c.Invalid != "" {
				args = c.Invalid
			}
			for _, piece := range split(args, 25) {
				chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": piece}}}}, nil)
			}
		}
		finish := "stop"
		if len(resp.ToolCalls) > 0 {
			finish = "tool_calls"
		}
		chunk(map[string]any{}, finish)
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": body.Model, "choices": []any{},
			"usage": map[string]any{"prompt_tokens": resp.Usage.Input, "completion_tokens": resp.Usage.Output, "total_tokens": resp.Usage.Input + resp.Usage.Output}})
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
	}))
	return s
}

// textOf reads a message's text: a plain string or the text blocks of a
// content array.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// split cuts s into pieces of at most n bytes, as a stream would deliver it
// (possibly inside a multi-byte character: clients must reassemble bytes).
func split(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
