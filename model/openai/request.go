package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/fractal-harness/fractal/model"
)

// params maps a model.Request onto Chat Completions.
func (c *Client) params(req model.Request) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{
		Model: c.cfg.Model,
		// The usage-only chunk before [DONE] is the only place a stream
		// reports tokens.
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = c.cfg.MaxTokens
	}
	if maxTokens > 0 {
		if c.maxTokensField == MaxCompletionTokens {
			p.MaxCompletionTokens = param.NewOpt(int64(maxTokens))
		} else {
			p.MaxTokens = param.NewOpt(int64(maxTokens))
		}
	}
	if id := UserID(req); id != "" {
		p.User = param.NewOpt(id)
		if c.cfg.BaseURL == "" {
			// OpenAI routes requests with the same key to the same cache,
			// so a relay session's turns find their shared prefix. Only
			// sent to OpenAI itself: other servers do not document it.
			p.PromptCacheKey = param.NewOpt(id)
		}
	}
	if c.cfg.Store {
		// OpenAI accepts metadata only on stored completions; without
		// store it rejects the request, so the two go together.
		p.Store = param.NewOpt(true)
		p.Metadata = shared.Metadata{"fractal_role": string(req.Role), "fractal_instance": req.Instance}
	}

	if req.System != "" {
		p.Messages = append(p.Messages, sdk.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case "user":
			if len(m.ToolCalls) > 0 {
				return p, fmt.Errorf("message %d: a user message cannot carry tool calls", i)
			}
			// Tool results are messages of role "tool" that must directly
			// follow the assistant message that asked for them.
			for _, r := range m.ToolResults {
				if r.CallID == "" {
					return p, fmt.Errorf("message %d: tool result without call id", i)
				}
				content := r.Content
				if r.IsError {
					// Chat Completions has no error flag on a tool result;
					// say it in the content so the model still knows.
					content = "error: " + content
				}
				p.Messages = append(p.Messages, sdk.ToolMessage(content, r.CallID))
			}
			if m.Text != "" {
				p.Messages = append(p.Messages, sdk.UserMessage(m.Text))
			}
		case "assistant":
			if len(m.ToolResults) > 0 {
				return p, fmt.Errorf("message %d: an assistant message cannot carry tool results", i)
			}
			if m.Text == "" && len(m.ToolCalls) == 0 {
				continue // nothing to say; some servers reject an empty message
			}
			a := sdk.ChatCompletionAssistantMessageParam{}
			if m.Text != "" {
				a.Content.OfString = param.NewOpt(m.Text)
			}
			for _, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Name == "" {
					return p, fmt.Errorf("message %d: tool call without id or name", i)
				}
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: arguments(tc)},
					},
				})
			}
			p.Messages = append(p.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return p, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	if len(p.Messages) == 0 {
		return p, fmt.Errorf("no message with content")
	}

	for i, t := range req.Tools {
		if t.Name == "" {
			return p, fmt.Errorf("tool %d has no name", i)
		}
		schema, err := parameters(t.Schema)
		if err != nil {
			return p, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fd.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fd))
	}
	return p, nil
}

// parameters decodes a tool's JSON Schema for the SDK, which takes a map.
// Numbers decode as float64, exact for every integer a schema uses (the
// SDK's encoder would write a json.Number as a string).
func parameters(raw json.RawMessage) (shared.FunctionParameters, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return shared.FunctionParameters{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("schema is not a JSON object")
	}
	return m, nil
}

// arguments is a recorded call's argument text. A call whose arguments
// were malformed was sanitized to "{}" (the text is in Invalid, and the
// tool result told the model); the valid form is sent back because some
// servers (Ollama) parse the arguments of past calls and reject the whole
// request when they do not parse.
func arguments(tc model.ToolCall) string {
	a := bytes.TrimSpace(tc.Args)
	if len(a) == 0 || !json.Valid(a) {
		return "{}"
	}
	return string(a)
}

// UserID is the `user` field sent with every request:
// "fractal/<role>/<instance>", so that usage can be grouped by role and
// instance. Empty when the request names neither.
func UserID(req model.Request) string {
	if req.Role == "" && req.Instance == "" {
		return ""
	}
	return "fractal/" + string(req.Role) + "/" + req.Instance
}
