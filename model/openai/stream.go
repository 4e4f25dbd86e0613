package openai

import (
	"fmt"
	"strings"

	sdk "github.com/openai/openai-go/v3"

	"github.com/fractal-harness/fractal/model"
)

// assembler builds one Response from streamed chunks.
//
// Tool calls arrive as deltas keyed by index: the first delta of a call
// carries its id and name, later ones pieces of the argument text. The
// pieces are concatenated raw and validated only when the stream ends, so
// malformed arguments are caught (and reported through ToolCall.Invalid)
// instead of reaching a tool.
type assembler struct {
	model   string
	text    strings.Builder
	refusal strings.Builder
	calls   []call
	finish  string // finish_reason of choice 0; "" until it arrives
	usage   model.Usage
	hasUse  bool
}

type call struct {
	index int64
	id    string
	name  string
	args  []byte
}

func (a *assembler) add(ch *sdk.ChatCompletionChunk) {
	if ch.Model != "" {
		a.model = ch.Model
	}
	// The usage chunk has "choices": [] (OpenAI) or null (some servers);
	// either way it is the chunk whose usage is not null. Servers that
	// report usage on every chunk report it cumulatively, so the last
	// one wins.
	if ch.JSON.Usage.Valid() {
		u := &ch.Usage
		cached := int(u.PromptTokensDetails.CachedTokens)
		// prompt_tokens includes the cached tokens; Usage counts them
		// apart (as Anthropic does) so that Total is not inflated.
		a.usage = model.Usage{
			Input:      int(u.PromptTokens) - cached,
			Output:     int(u.CompletionTokens),
			CacheRead:  cached,
			CacheWrite: int(u.PromptTokensDetails.CacheWriteTokens),
		}
		if a.usage.Input < 0 {
			a.usage.Input = 0
		}
		a.hasUse = true
	}
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if c.Index != 0 {
			continue // n is never set, so only choice 0 is ours
		}
		d := &c.Delta
		a.text.WriteString(d.Content)
		a.refusal.WriteString(d.Refusal)
		for j := range d.ToolCalls {
			tc := &d.ToolCalls[j]
			k := a.call(tc.Index, tc.ID)
			if tc.ID != "" && k.id == "" {
				k.id = tc.ID
			}
			// The name arrives whole in the first delta; a server that
			// repeats it must not double it, one that splits it is
			// joined.
			if n := tc.Function.Name; n != "" && n != k.name {
				k.name += n
			}
			k.args = append(k.args, tc.Function.Arguments...)
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
	}
}

// call finds the call a delta belongs to. A delta whose index is taken by
// a call with another id starts a new call: some servers put every call at
// index 0 and tell them apart only by id.
func (a *assembler) call(index int64, id string) *call {
	for i := len(a.calls) - 1; i >= 0; i-- {
		k := &a.calls[i]
		if k.index == index {
			if id != "" && k.id != "" && id != k.id {
				break
			}
			return k
		}
	}
	a.calls = append(a.calls, call{index: index})
	return &a.calls[len(a.calls)-1]
}

// stopReason speaks the vocabulary of model.Response (Anthropic's, which
// the engine and the scripted model use): "end_turn", "tool_use",
// "max_tokens".
func (a *assembler) stopReason() string {
	switch a.finish {
	case "stop":
		if len(a.calls) > 0 {
			return "tool_use" // some servers say "stop" after tool calls
		}
		return "end_turn"
	case "tool_calls", "function_call":
		return "tool_use"
	case "length":
		return "max_tokens"
	}
	return a.finish
}

func (a *assembler) response(fallbackModel string) model.Response {
	r := model.Response{
		Text:       a.text.String(),
		Usage:      a.usage,
		StopReason: a.stopReason(),
		Model:      a.model,
	}
	if r.Model == "" {
		r.Model = fallbackModel
	}
	for i := range a.calls {
		k := &a.calls[i]
		id := k.id
		if id == "" {
			// Some local servers send no call id; the conversation needs
			// one to pair the result with the call.
			id = fmt.Sprintf("call_%d", i)
		}
		tc := model.ToolCall{ID: id, Name: k.name, Args: k.args}
		tc.Sanitize()
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	return r
}
