package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/fractal-harness/fractal/model"
)

// emptySchema is the input schema of a tool that declares none: the API
// requires an object schema on every tool.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// params maps a model.Request onto the Messages API.
//
// Prompt caching: the request's stable prefix (tools, then system) gets a
// cache breakpoint on the last tool definition and on the system block, so
// every turn of a relay session reads it from the cache. A third
// breakpoint on the last block of the conversation caches the history
// itself: the next turn, whose messages extend this one's, reads all of it
// and pays the cache-write price only for what it adds. Anthropic allows
// four breakpoints; prefixes shorter than the model's minimum cacheable
// length are simply not cached (no error).
func (c *Client) params(req model.Request) (sdk.MessageNewParams, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = c.cfg.MaxTokens
	}
	p := sdk.MessageNewParams{
		Model:     c.cfg.Model,
		MaxTokens: int64(maxTokens),
	}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	if id := UserID(req); id != "" {
		p.Metadata = sdk.MetadataParam{UserID: param.NewOpt(id)}
	}

	for i, t := range req.Tools {
		if t.Name == "" {
			return p, fmt.Errorf("tool %d has no name", i)
		}
		schema := bytes.TrimSpace(t.Schema)
		if len(schema) == 0 || bytes.Equal(schema, []byte("null")) {
			schema = emptySchema
		}
		if !json.Valid(schema) || schema[0] != '{' {
			return p, fmt.Errorf("tool %q: schema is not a JSON object", t.Name)
		}
		tp := &sdk.ToolParam{
			Name: t.Name,
			// The schema goes to the wire verbatim: the SDK's typed schema
			// only models properties/required, and a tool's schema may use
			// any JSON Schema keyword.
			InputSchema: param.Override[sdk.ToolInputSchemaParam](json.RawMessage(schema)),
		}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		if i == len(req.Tools)-1 {
			tp.CacheControl = sdk.NewCacheControlEphemeralParam()
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tp})
	}

	var last []sdk.ContentBlockParamUnion
	for i, m := range req.Messages {
		var blocks []sdk.ContentBlockParamUnion
		switch m.Role {
		case "user":
			// Tool results first: the API wants them at the start of the
			// user turn that follows the tool calls.
			for _, r := range m.ToolResults {
				if r.CallID == "" {
					return p, fmt.Errorf("message %d: tool result without call id", i)
				}
				tr := &sdk.ToolResultBlockParam{ToolUseID: r.CallID}
				if r.Content != "" { // an empty text block is rejected by the API
					tr.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: r.Content}}}
				}
				if r.IsError {
					tr.IsError = param.NewOpt(true)
				}
				blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolResult: tr})
			}
			if m.Text != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Text))
			}
			if len(m.ToolCalls) > 0 {
				return p, fmt.Errorf("message %d: a user message cannot carry tool calls", i)
			}
		case "assistant":
			if m.Text != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Text))
			}
			for _, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Name == "" {
					return p, fmt.Errorf("message %d: tool call without id or name", i)
				}
				blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, toolInput(tc), tc.Name))
			}
			if len(m.ToolResults) > 0 {
				return p, fmt.Errorf("message %d: an assistant message cannot carry tool results", i)
			}
		default:
			return p, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		if len(blocks) == 0 {
			// A message with no content is rejected by the API and says
			// nothing to the model; leaving it out keeps the turn valid.
			continue
		}
		last = blocks
		if m.Role == "user" {
			p.Messages = append(p.Messages, sdk.NewUserMessage(blocks...))
		} else {
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
		}
	}
	if len(p.Messages) == 0 {
		return p, fmt.Errorf("no message with content")
	}
	// The variants are pointers, so this marks the block in p.Messages.
	if cc := last[len(last)-1].GetCacheControl(); cc != nil {
		*cc = sdk.NewCacheControlEphemeralParam()
	}
	return p, nil
}

// toolInput is a recorded call's input as the API takes it: a JSON object.
// A call whose arguments were malformed was sanitized to "{}" (the text is
// in Invalid and the tool result told the model); anything else that is not
// an object is sent as {} too, because the API rejects the whole request
// otherwise.
func toolInput(tc model.ToolCall) json.RawMessage {
	a := bytes.TrimSpace(tc.Args)
	if len(a) == 0 || a[0] != '{' || !json.Valid(a) {
		return json.RawMessage("{}")
	}
	return json.RawMessage(a)
}

// UserID is the metadata.user_id sent with every request:
// "fractal/<role>/<instance>", so that Anthropic's usage reports can group
// cost by role and instance. It is the only metadata the Messages API
// takes. Empty when the request names neither.
func UserID(req model.Request) string {
	if req.Role == "" && req.Instance == "" {
		return ""
	}
	return "fractal/" + string(req.Role) + "/" + req.Instance
}
