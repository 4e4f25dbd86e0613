package anthropic

import (
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/fractal-harness/fractal/model"
)

// assembler builds one Response from the events of a streamed message.
//
// It does not use the SDK's Message.Accumulate: that helper turns
// input_json_delta pieces that do not form valid JSON into an empty input
// ({}), so a tool would run with no arguments instead of the model being
// told its arguments were malformed. The raw pieces are kept here and
// validated when the message ends.
type assembler struct {
	started bool // message_start seen
	stopped bool // message_stop seen
	model   string
	stop    string
	refusal sdk.RefusalStopDetails
	usage   model.Usage

	text     strings.Builder
	lastText int64 // index of the text block last written to text; -1 before any
	blocks   []block
}

// block is one content block, found by its index.
type block struct {
	index int64
	kind  string // "text", "tool_use", or another type that is ignored
	id    string
	name  string
	// input is the concatenation of the raw input_json_delta pieces.
	input    []byte
	sawDelta bool
	// startInput is the input object of content_block_start, used when no
	// delta follows (a call without arguments may arrive complete).
	startInput string
}

func newAssembler() *assembler { return &assembler{lastText: -1} }

func (a *assembler) block(index int64) *block {
	// Blocks arrive in index order, so the last one is almost always it.
	for i := len(a.blocks) - 1; i >= 0; i-- {
		if a.blocks[i].index == index {
			return &a.blocks[i]
		}
	}
	return nil
}

// add folds one event in. An error means the stream broke the protocol.
// Unknown event types are ignored, as the API asks of clients (ping events
// are already dropped by the SDK's decoder).
func (a *assembler) add(ev *sdk.MessageStreamEventUnion) error {
	switch ev.Type {
	case "message_start":
		a.started = true
		a.model = ev.Message.Model
		u := ev.Message.Usage
		a.usage = model.Usage{
			Input:      int(u.InputTokens),
			Output:     int(u.OutputTokens),
			CacheRead:  int(u.CacheReadInputTokens),
			CacheWrite: int(u.CacheCreationInputTokens),
		}
	case "content_block_start":
		if a.block(ev.Index) != nil {
			return fmt.Errorf("content_block_start for block %d twice", ev.Index)
		}
		cb := &ev.ContentBlock
		b := block{index: ev.Index, kind: cb.Type, id: cb.ID, name: cb.Name}
		if cb.Type == "tool_use" {
			b.startInput = cb.JSON.Input.Raw()
		}
		a.blocks = append(a.blocks, b)
		if cb.Type == "text" && cb.Text != "" {
			a.writeText(ev.Index, cb.Text)
		}
	case "content_block_delta":
		b := a.block(ev.Index)
		if b == nil {
			return fmt.Errorf("content_block_delta for block %d before its start", ev.Index)
		}
		switch ev.Delta.Type {
		case "text_delta":
			if b.kind == "text" {
				a.writeText(ev.Index, ev.Delta.Text)
			}
		case "input_json_delta":
			if b.kind == "tool_use" {
				b.input = append(b.input, ev.Delta.PartialJSON...)
				b.sawDelta = true
			}
		}
		// thinking, signature and citation deltas carry nothing the
		// harness uses.
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.stop = string(ev.Delta.StopReason)
		}
		if ev.Delta.JSON.StopDetails.Valid() {
			a.refusal = ev.Delta.StopDetails
		}
		// message_delta usage is cumulative: it replaces, never adds to,
		// what message_start said. Input and cache counts are only
		// present in newer API versions; keep message_start's otherwise.
		u := &ev.Usage
		a.usage.Output = int(u.OutputTokens)
		if u.JSON.InputTokens.Valid() && u.InputTokens > 0 {
			a.usage.Input = int(u.InputTokens)
		}
		if u.JSON.CacheReadInputTokens.Valid() && u.CacheReadInputTokens > 0 {
			a.usage.CacheRead = int(u.CacheReadInputTokens)
		}
		if u.JSON.CacheCreationInputTokens.Valid() && u.CacheCreationInputTokens > 0 {
			a.usage.CacheWrite = int(u.CacheCreationInputTokens)
		}
	case "message_stop":
		a.stopped = true
	}
	return nil
}

// writeText appends a text delta. Text blocks separated by other blocks
// (text, tool_use, text) are joined with a blank line, so their words do
// not run together in the one Text of the Response.
func (a *assembler) writeText(index int64, s string) {
	if s == "" {
		return
	}
	if a.lastText != index && a.text.Len() > 0 {
		a.text.WriteString("\n\n")
	}
	a.lastText = index
	a.text.WriteString(s)
}

// response is the assembled turn. Tool calls come in block order; a call
// whose streamed input is not valid JSON keeps the raw text in Invalid and
// "{}" in Args (model.ToolCall.Sanitize), so the host refuses it and tells
// the model instead of running it with empty arguments.
func (a *assembler) response(fallbackModel string) model.Response {
	r := model.Response{
		Text:       a.text.String(),
		Usage:      a.usage,
		StopReason: a.stop,
		Model:      a.model,
	}
	if r.Model == "" {
		r.Model = fallbackModel
	}
	for i := range a.blocks {
		b := &a.blocks[i]
		if b.kind != "tool_use" {
			continue
		}
		args := b.input
		if !b.sawDelta {
			args = []byte(b.startInput)
		}
		tc := model.ToolCall{ID: b.id, Name: b.name, Args: args}
		tc.Sanitize()
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	return r
}
