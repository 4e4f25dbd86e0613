package intake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/tool"
	"github.com/fractal-harness/fractal/tool/fs"
)

// maxNudges bounds the answers without a tool call a session tolerates:
// a model that only talks has stopped working, and its text goes nowhere.
const maxNudges = 3

// maxCuts bounds the answers cut off at the token limit.
const maxCuts = 3

// reply is a host tool's answer to one call.
type reply struct {
	text  string
	isErr bool // a refusal the model can act on
	done  bool // the session ends after this call
}

func refuse(err error) reply { return reply{text: err.Error(), isErr: true} }

// hostTool answers a call of a tool the host implements itself. An error
// is fatal to the flow (a recording or IO failure), never a refusal.
type hostTool func(ctx context.Context, call model.ToolCall) (reply, error)

// session is one model conversation: one role, one job.
type session struct {
	m        model.Model
	req      model.Request
	tools    *tool.Registry // ordinary tools, run with env
	env      tool.Env
	host     map[string]hostTool
	maxTurns int
}

func newSession(cfg *Config, role model.Role, intent string, attempt int, system, prompt string, tools *tool.Registry, host map[string]hostTool, hostSpecs []model.ToolSpec) *session {
	if tools == nil {
		tools, _ = tool.NewRegistry()
	}
	return &session{
		m: cfg.Model,
		req: model.Request{
			Role: role, Instance: Instance, Intent: intent, Attempt: attempt,
			System: system, Messages: []model.Message{{Role: "user", Text: prompt}},
			Tools: append(tools.Specs(), hostSpecs...), MaxTokens: maxTokens,
		},
		tools: tools,
		// Read-only: no boundary, so nothing is writable through env;
		// the harness is written only by harness_write, which ignores it.
		env:      tool.Env{Instance: Instance, RunRoot: cfg.Dir, Readable: []string{inputsDir, "harness"}},
		host:     host,
		maxTurns: cfg.MaxTurns,
	}
}

// readTools are the ordinary tools of Meta's sessions: reading the inputs
// (and, in bootstrap, the harness written so far). Nothing here writes.
func readTools() *tool.Registry {
	r, err := tool.NewRegistry(fs.ReadFile(), fs.ListDir())
	if err != nil {
		panic(err) // two fixed, distinct names
	}
	return r
}

// errNoFinish is wrapped by the error of a session that stopped without
// calling the tool that ends it.
var errNoFinish = errors.New("the session did not finish")

// run plays turns until a host tool ends the session. Model errors,
// recording failures and host faults end it with an error; so does a
// model that runs out of turns, only talks, or keeps being cut off.
func (s *session) run(ctx context.Context) error {
	nudges, cuts := 0, 0
	for turn := 0; turn < s.maxTurns; turn++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		resp, err := s.m.Generate(ctx, s.req)
		if err != nil {
			return fmt.Errorf("intake: %s model call: %w", s.req.Role, err)
		}
		for i := range resp.ToolCalls {
			resp.ToolCalls[i].Sanitize()
		}
		s.req.Messages = append(s.req.Messages, model.Message{Role: "assistant", Text: resp.Text, ToolCalls: resp.ToolCalls})
		if resp.StopReason == "max_tokens" {
			// A cut answer may hold half a tool call: none of it runs.
			cuts++
			if cuts > maxCuts {
				return fmt.Errorf("intake: %w: the %s's answers were cut at the token limit %d times", errNoFinish, s.req.Role, cuts)
			}
			var results []model.ToolResult
			for _, c := range resp.ToolCalls {
				results = append(results, model.ToolResult{CallID: c.ID, IsError: true, Content: "E-CUT: not run: your answer was cut off at the token limit"})
			}
			s.req.Messages = append(s.req.Messages, model.Message{Role: "user", ToolResults: results,
				Text: fmt.Sprintf("E-CUT: your answer was cut off at the %d-token limit, so none of it was acted on. Do less in one answer: one file per call.", maxTokens)})
			continue
		}
		if len(resp.ToolCalls) == 0 {
			nudges++
			if nudges > maxNudges {
				return fmt.Errorf("intake: %w: the %s answered %d times without calling a tool", errNoFinish, s.req.Role, nudges)
			}
			s.req.Messages = append(s.req.Messages, model.Message{Role: "user",
				Text: "Nobody reads text outside the tools. Use the tools: act, or end with the tool that finishes your part (" + strings.Join(s.hostNames(), ", ") + ")."})
			continue
		}
		var results []model.ToolResult
		done := false
		for _, call := range resp.ToolCalls {
			r, err := s.call(ctx, call, done)
			if err != nil {
				return err
			}
			results = append(results, model.ToolResult{CallID: call.ID, Content: r.text, IsError: r.isErr})
			done = done || r.done
		}
		if done {
			return nil
		}
		s.req.Messages = append(s.req.Messages, model.Message{Role: "user", ToolResults: results})
	}
	return fmt.Errorf("intake: %w: the %s did not finish within %d turns", errNoFinish, s.req.Role, s.maxTurns)
}

// call answers one tool call. ended is set once a call of this answer
// has ended the session: later calls are not run, since their results
// would reach no one.
func (s *session) call(ctx context.Context, call model.ToolCall, ended bool) (reply, error) {
	switch {
	case ended:
		return reply{text: "not run: the session already ended", isErr: true}, nil
	case call.Invalid != "":
		return reply{text: fmt.Sprintf("E-ARGS: the arguments of %s are not valid JSON: %.200q. Send one JSON object matching the tool's schema.", call.Name, call.Invalid), isErr: true}, nil
	}
	if h, ok := s.host[call.Name]; ok {
		return h(ctx, call)
	}
	t, ok := s.tools.Get(call.Name)
	if !ok {
		return reply{text: fmt.Sprintf("E-TOOL: there is no tool %q; your tools are %s", call.Name, strings.Join(s.toolNames(), ", ")), isErr: true}, nil
	}
	res, err := t.Call(ctx, s.env, call.Args)
	if err != nil {
		if te, ok := tool.AsError(err); ok {
			return refuse(te), nil
		}
		return reply{}, fmt.Errorf("intake: %s: %w", call.Name, err)
	}
	return reply{text: res.Content}, nil
}

func (s *session) hostNames() []string {
	var out []string
	for n := range s.host {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (s *session) toolNames() []string {
	var out []string
	for _, sp := range s.req.Tools {
		out = append(out, sp.Name)
	}
	return out
}
