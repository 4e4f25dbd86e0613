package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/scope"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/tool"
	"github.com/fractal-harness/fractal/usermsg"
)

const (
	toolRequestHelp = "request_help"
	toolAnswerHelp  = "answer_help"
)

var requestHelpSpec = model.ToolSpec{
	Name: toolRequestHelp,
	Description: "Ask for more than your delegation contract gives you, when the work cannot be done without it: " +
		"need is tools (items: tool names), read (items: folders to read), budget (tokens) or time (ms). " +
		"Say why. At most three requests; an approval is a temporary revision that never goes beyond what your parent has.",
	Schema: json.RawMessage(`{"type":"object","properties":{"need":{"type":"string","enum":["tools","read","budget","time"]},` +
		`"items":{"type":"array","items":{"type":"string"}},"tokens":{"type":"integer"},"ms":{"type":"integer"},"reason":{"type":"string"}},"required":["need","reason"]}`),
}

var answerHelpSpec = model.ToolSpec{
	Name:        toolAnswerHelp,
	Description: "Answer the request: advice the part can act on within what it already has (what to do instead, what to leave out and report).",
	Schema:      json.RawMessage(`{"type":"object","properties":{"advice":{"type":"string"}},"required":["advice"]}`),
}

// readable is what a contract lets an instance read besides its boundary.
func readable(c scope.DelegationContract, boundary string) []string {
	var out []string
	for _, r := range c.Scope.Read {
		if r != boundary {
			out = append(out, r)
		}
	}
	return out
}

// requestHelp is negotiation (DC4). The host numbers the rounds (at most
// three; the fourth is refused without consulting anyone); a rule engine
// approves what lies within the parent's contract as a temporary revision;
// anything beyond it is escalated to the parent's Meta, which can advise
// but never grant more than the parent has. Every round is in the journal.
func (e *Engine) requestHelp(ctx context.Context, id string, raw json.RawMessage) string {
	var args struct {
		Need   string   `json:"need"`
		Items  []string `json:"items"`
		Tokens int64    `json:"tokens"`
		Ms     int64    `json:"ms"`
		Reason string   `json:"reason"`
	}
	if err := strictJSON(raw, &args); err != nil {
		return "E-ARGS: request_help: " + err.Error()
	}
	if strings.TrimSpace(args.Reason) == "" {
		return "E-ARGS: request_help needs a reason"
	}
	var round int
	e.view(func(s *state.State) { round = s.Inst[id].HelpRounds + 1 })
	req := &state.HelpRequested{Instance: id, Round: round, Need: args.Need, Items: args.Items, Tokens: args.Tokens, Ms: args.Ms, Reason: args.Reason}
	if err := e.note(state.Event{Type: state.THelpRequested, HelpRequested: req}); err != nil {
		if v, ok := err.(*state.Violation); ok && v.Code == state.EHelpRounds {
			return fmt.Sprintf("Refused: you have used your %d requests for help. Adapt with what your contract gives you, or finish what you can and say in declare_done what could not be done.", state.MaxHelpRounds)
		}
		return "E-HOST: " + err.Error()
	}
	dec := e.ruleHelp(id, req)
	if dec == nil {
		dec = e.escalateHelp(ctx, id, req)
	}
	if err := e.note(state.Event{Type: state.THelpDecided, HelpDecided: dec}); err != nil {
		return "Refused: " + err.Error()
	}
	if dec.Approved {
		return "Approved (" + dec.Note + "). This revision holds for this attempt."
	}
	left := state.MaxHelpRounds - round
	return fmt.Sprintf("Refused: %s (%d request(s) left)", dec.Note, left)
}

// ruleHelp approves a request that stays within the parent's contract, or
// returns nil to escalate it.
func (e *Engine) ruleHelp(id string, r *state.HelpRequested) *state.HelpDecided {
	var dec *state.HelpDecided
	e.view(func(s *state.State) {
		in := s.Inst[id]
		p := s.Inst[in.Parent]
		cur, pc := in.Packet.Contract, p.Packet.Contract
		rev := cur
		rev.Capabilities.Allowed = slices.Clone(cur.Capabilities.Allowed)
		rev.Scope.Read = slices.Clone(cur.Scope.Read)
		approve := func(note string) {
			if scope.ValidateNarrowing(pc, rev) == nil {
				dec = &state.HelpDecided{Instance: id, Round: r.Round, Approved: true, By: "rules", Revision: &rev, Note: note}
			}
		}
		switch r.Need {
		case "tools":
			for _, t := range r.Items {
				if !slices.Contains(rev.Capabilities.Allowed, t) {
					rev.Capabilities.Allowed = append(rev.Capabilities.Allowed, t)
				}
			}
			slices.Sort(rev.Capabilities.Allowed)
			approve("tools granted: " + strings.Join(r.Items, ", "))
		case "read":
			for _, d := range r.Items {
				if !slices.Contains(rev.Scope.Read, d) {
					rev.Scope.Read = append(rev.Scope.Read, d)
				}
			}
			approve("may now read: " + strings.Join(r.Items, ", "))
		case "budget":
			if r.Tokens > 0 && r.Tokens <= s.FreeTokens(p.ID) {
				rev.Budget.MaxTokens += r.Tokens
				approve(fmt.Sprintf("%d more tokens", r.Tokens))
			}
		case "time":
			nd := in.Packet.Deadline.Add(time.Duration(r.Ms) * time.Millisecond)
			if r.Ms > 0 && (p.Packet.Deadline.IsZero() || !nd.After(p.Packet.Deadline)) {
				dec = &state.HelpDecided{Instance: id, Round: r.Round, Approved: true, By: "rules", Deadline: nd, Note: "deadline moved to " + nd.Format(time.RFC3339)}
			}
		}
	})
	return dec
}

// escalateHelp asks the parent's Meta about a request beyond the parent's
// own contract. Meta cannot grant it — no one in the tree has it to give —
// but it can tell the part how to proceed without it.
func (e *Engine) escalateHelp(ctx context.Context, id string, r *state.HelpRequested) *state.HelpDecided {
	dec := &state.HelpDecided{Instance: id, Round: r.Round, By: "meta", Note: "this is beyond what your parent's contract allows"}
	var (
		parent, boundary, intent string
		attemptNo                int
	)
	e.view(func(s *state.State) {
		in := s.Inst[id]
		parent = in.Parent
		p := s.Inst[parent]
		boundary = p.Boundary
		intent = s.Contract[in.Contract].Intent
		if a := s.CurrentAttempt(id); a != nil {
			attemptNo = a.Number
		}
	})
	if parent == state.Session {
		return dec
	}
	prompt := fmt.Sprintf("A part of your work asks for more than your own contract allows, so it cannot be granted.\nThe part's task:\n%s\n\nIt asks for %s %s (%d tokens, %d ms) because: %s\n\nAdvise it how to proceed within what it has; call answer_help once.",
		intent, r.Need, strings.Join(r.Items, ", "), r.Tokens, r.Ms, r.Reason)
	env := tool.Env{Instance: parent, RunRoot: e.dir, Boundary: boundary, Readable: []string{InputsDir}}
	ss := e.newSession(parent, model.Meta, metaSystem, prompt, []model.ToolSpec{answerHelpSpec}, readOnlyTools, env, intent, attemptNo)
	// The parent is frozen while its children run: its Meta answers
	// without tools of its own.
	ss.tools = mustRegistry()
	ss.req.Tools = []model.ToolSpec{answerHelpSpec}
	err := ss.loop(ctx, map[string]hostTool{toolAnswerHelp: func(call model.ToolCall) (bool, error) {
		var a struct {
			Advice string `json:"advice"`
		}
		if err := strictJSON(call.Args, &a); err != nil || strings.TrimSpace(a.Advice) == "" {
			return false, tool.Errorf("E-ARGS", "answer_help needs advice")
		}
		dec.Note += "; advice: " + a.Advice
		return true, nil
	}})
	if err != nil {
		dec.Note += " (no advice could be had: " + err.Error() + ")"
	}
	// DC4: in interactive mode the person is consulted too. No one can
	// grant more than the parent has, so the person decides how the part
	// goes on without it.
	var pol policy.Policy
	e.view(func(s *state.State) { pol = s.Policy })
	if pol.Mode == policy.Interactive {
		m := usermsg.Message{Kind: usermsg.Question,
			Text:          fmt.Sprintf("A part of the work (%s) asks for more than it was given: %s %s. It cannot be given within the limits you set. How should it go on?", firstLine(intent), r.Need, strings.Join(r.Items, ", ")),
			Options:       []usermsg.Option{{Label: "Carry on without it", Value: "carry on without it", Default: true}, {Label: "Stop that part", Value: "stop that part and report what is missing"}},
			SilentFailure: "the part may deliver less than asked, and say so in its report"}
		if usermsg.Validate(m) == nil {
			if ans, ok, err := e.askTerminal(ctx, id, m); ok && err == nil {
				dec.By = "user"
				dec.Note += "; the person says: " + ans
			}
		}
	}
	return dec
}
