// Package model defines the one seam between fractal and a language model:
// a Model produces one assistant turn from a conversation and a tool set.
//
// Providers (Anthropic, OpenAI-compatible) and the scripted model used by the
// demo and the tests implement Model. The engine never sees a provider's own
// types.
package model

import (
	"context"
	"encoding/json"
)

// Role is one of the four model roles (DA-A2).
type Role string

// The roles.
const (
	Meta     Role = "meta"
	Worker   Role = "worker"
	Reviewer Role = "reviewer"
	Watcher  Role = "watcher"
)

// Roles lists every role.
var Roles = []Role{Meta, Worker, Reviewer, Watcher}

// Valid reports whether r is a known role.
func (r Role) Valid() bool {
	for _, k := range Roles {
		if k == r {
			return true
		}
	}
	return false
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"` // JSON Schema of the arguments object
}

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	// Invalid holds the argument text when it was not valid JSON; Args is
	// then "{}". The host answers such a call with an error the model can
	// correct instead of running it.
	Invalid string `json:"invalid,omitempty"`
}

// Sanitize moves argument text that is not valid JSON into Invalid, so
// the call can be recorded, shown back to the model and refused cleanly.
func (c *ToolCall) Sanitize() {
	if len(c.Args) == 0 {
		c.Args = json.RawMessage("{}")
		return
	}
	if !json.Valid(c.Args) {
		c.Invalid, c.Args = string(c.Args), json.RawMessage("{}")
	}
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Message is one entry of the conversation. An assistant message carries
// Text and ToolCalls; a user message carries Text and, after tool calls, the
// ToolResults answering them.
type Message struct {
	Role        string       `json:"role"` // "user" or "assistant"
	Text        string       `json:"text,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
}

// Request is one turn's input. The metadata fields (Role, Instance, Intent,
// Attempt) are for routing, scripted replay and providers' request metadata.
type Request struct {
	Role      Role       `json:"role"`
	Instance  string     `json:"instance"`
	Intent    string     `json:"intent"`            // the intent of the instance's contract
	Attempt   int        `json:"attempt"`           // 1-based attempt number of the instance's task
	Session   int        `json:"session,omitempty"` // 1-based relay session of a worker's attempt
	System    string     `json:"system"`
	Messages  []Message  `json:"messages"`
	Tools     []ToolSpec `json:"tools,omitempty"`
	MaxTokens int        `json:"max_tokens,omitempty"`
}

// Turn is the number of assistant messages already in the conversation: 0
// for the first turn of a session.
func (r Request) Turn() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// Usage counts tokens for one answer.
type Usage struct {
	Input      int `json:"input" yaml:"input"`
	Output     int `json:"output" yaml:"output"`
	CacheRead  int `json:"cache_read,omitempty" yaml:"cache_read"`
	CacheWrite int `json:"cache_write,omitempty" yaml:"cache_write"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.Input + o.Input, u.Output + o.Output, u.CacheRead + o.CacheRead, u.CacheWrite + o.CacheWrite}
}

// Total is every token counted.
func (u Usage) Total() int { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Response is one assistant turn.
type Response struct {
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	Usage      Usage      `json:"usage"`
	StopReason string     `json:"stop_reason,omitempty"`
	Model      string     `json:"model,omitempty"`
}

// Model produces one turn. Implementations must honour ctx: a cancelled
// context stops the call and returns ctx.Err() (possibly wrapped).
type Model interface {
	Generate(ctx context.Context, req Request) (Response, error)
}

// Func adapts a function to Model.
type Func func(ctx context.Context, req Request) (Response, error)

// Generate calls f.
func (f Func) Generate(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }
