package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fractal-harness/fractal/check"
	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/scope"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/tool"
	"github.com/fractal-harness/fractal/tool/fs"
	"github.com/fractal-harness/fractal/tool/inventory"
	"github.com/fractal-harness/fractal/watchdog"
)

// The host's own tools: they end a loop rather than act on files, so the
// engine answers them itself.
const (
	toolDeclareDone = "declare_done"
	toolSubmitPlan  = "submit_plan"
	toolSubmitGrade = "submit_grade"
)

// maxCorrections bounds how often a model may answer a host tool with
// arguments the host cannot use before the attempt fails.
const maxCorrections = 3

var (
	workerTools   = mustRegistry(fs.ReadFile(), fs.WriteFile(), fs.ListDir(), inventory.Tool())
	readOnlyTools = mustRegistry(readOnlyToolList()...)
)

func readOnlyToolList() []tool.Tool { return []tool.Tool{fs.ReadFile(), fs.ListDir()} }

// packetTools is the registry of the worker tools a packet's contract
// grants (F-D4.5, DC3): nothing else is even offered to the model.
func packetTools(p state.Packet) *tool.Registry {
	var ts []tool.Tool
	for _, name := range contractTools(p.Contract) {
		if t, ok := workerTools.Get(name); ok {
			ts = append(ts, t)
		}
	}
	return mustRegistry(ts...)
}

func mustRegistry(ts ...tool.Tool) *tool.Registry {
	r, err := tool.NewRegistry(ts...)
	if err != nil {
		panic(err)
	}
	return r
}

var declareDoneSpec = model.ToolSpec{
	Name:        toolDeclareDone,
	Description: "Say the work is finished. Give a short summary and, for every check of your contract, whether it passes and the evidence (a quotation from your files, with the file name). The host then evaluates the checks itself.",
	Schema: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"},` +
		`"self_assessment":{"type":"array","items":{"type":"object","properties":{"check":{"type":"integer","description":"check number, from 1"},"pass":{"type":"boolean"},"evidence":{"type":"string"}},"required":["check","pass","evidence"]}},` +
		`"sop":{"type":"array","description":"for each step of your SOP, where you did it","items":{"type":"object","properties":{"step":{"type":"integer"},"where":{"type":"string"}},"required":["step","where"]}}},` +
		`"required":["summary","self_assessment"]}`),
}

var submitPlanSpec = model.ToolSpec{
	Name:        toolSubmitPlan,
	Description: "Submit the plan: child contracts (each with an id, an intent and checks whose paths are relative to the child's own folder <your folder>/<id>), their dependencies, which of your checks each child check serves (check_map; numbers from 1), which of your checks can only be verified after merging (after_merge), and which child files to copy into your folder once all are accepted (promote).",
	Schema: json.RawMessage(`{"type":"object","properties":{` +
		`"tasks":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"intent":{"type":"string"},"checks":{"type":"array","items":{"type":"object"}},"deps":{"type":"array","items":{"type":"string"}},"agent":{"type":"string","description":"blueprint id of the kind of agent to start (optional)"}},"required":["id","intent","checks"]}},` +
		`"check_map":{"type":"array","items":{"type":"object","properties":{"parent_check":{"type":"integer"},"task":{"type":"string"},"child_check":{"type":"integer"}},"required":["parent_check","task","child_check"]}},` +
		`"after_merge":{"type":"array","items":{"type":"integer"}},` +
		`"promote":{"type":"array","items":{"type":"object","properties":{"task":{"type":"string"},"from":{"type":"string"},"to":{"type":"string"}},"required":["task","from","to"]}}},` +
		`"required":["tasks"]}`),
}

var submitGradeSpec = model.ToolSpec{
	Name:        toolSubmitGrade,
	Description: "Submit your one verdict on the statement: pass true or false, and a rationale that cites the files and lines you read.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"pass":{"type":"boolean"},"rationale":{"type":"string"}},"required":["pass","rationale"]}`),
}

const workerSystem = `You are a Worker in fractal, a harness for long office tasks. You do the work of one contract directly, with the tools you are given.
Rules: write only inside your folder; read the inputs before you rely on them; never invent data that is not in the inputs; every claim in your self-assessment must quote the file that proves it. When every check passes, call declare_done.`

const metaSystem = `You are Meta in fractal, a harness for long office tasks. Your contract is too large to do in one piece: split it into child contracts, each small, independent where possible, with structural checks a machine can evaluate. Every one of your checks must be served by a child check or verified after merging. Children write only in their own folders; promote the files your own checks need into your folder.`

const reviewerSystem = `You are the Reviewer in fractal: independent, one-shot. You grade one statement about the work in front of you. Read the files; trust nothing that is not in them; fabricated content is a failure. Submit exactly one verdict with submit_grade.`

// session is one model loop: a conversation with one role for one instance.
type session struct {
	e        *Engine
	id       string
	role     model.Role
	req      model.Request
	tools    *tool.Registry
	env      tool.Env
	maxTurns int
	// replies are host tools that answer without ending the session or
	// counting as a correction (request_help, progress).
	replies map[string]func(model.ToolCall) string
	// afterTurn, if set, runs after each answer; an error ends the loop.
	afterTurn func(model.Response) error
	// stream, if set, is the run-relative log of the session's turns (the
	// Watcher reads it).
	stream      string
	streamLines int
	turns       int
	// lastContext is the last answer's input plus output tokens: how much
	// context the session holds.
	lastContext int
	// onTool, if set, sees every capability tool call and its result (the
	// final reading checks what Meta really opened).
	onTool func(model.ToolCall, model.ToolResult)
}

// errTurns ends a session that ran out of turns.
var errTurns = errors.New("out of turns")

// streamLog opens the session's stream for appending (a no-op writer when
// it has none).
func (ss *session) streamLog() io.Writer {
	if ss.stream == "" {
		return io.Discard
	}
	return streamWriter{ss: ss}
}

type streamWriter struct{ ss *session }

func (w streamWriter) Write(p []byte) (int, error) {
	abs := filepath.Join(w.ss.e.dir, filepath.FromSlash(w.ss.stream))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return 0, err
	}
	w.ss.streamLines += strings.Count(string(p), "\n")
	return len(p), appendFile(abs, string(p))
}

// logTurn writes one answer and its tool results to the stream, a line
// each, clipped, for the Watcher.
func (ss *session) logTurn(resp model.Response, results []model.ToolResult) {
	if ss.stream == "" {
		return
	}
	var b strings.Builder
	if t := strings.TrimSpace(resp.Text); t != "" {
		fmt.Fprintf(&b, "turn %d said: %s\n", ss.turns, clip(oneLine(t), 300))
	}
	for _, c := range resp.ToolCalls {
		fmt.Fprintf(&b, "turn %d called %s %s\n", ss.turns, c.Name, clip(oneLine(string(c.Args)), 300))
	}
	for _, r := range results {
		fmt.Fprintf(&b, "turn %d result: %s\n", ss.turns, clip(oneLine(r.Content), 300))
	}
	_, _ = ss.streamLog().Write([]byte(b.String()))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (e *Engine) newSession(id string, role model.Role, system, prompt string, host []model.ToolSpec, tools *tool.Registry, env tool.Env, intent string, attemptNo int) *session {
	specs := append(tools.Specs(), host...)
	var maxTurns int
	e.view(func(s *state.State) { maxTurns = s.Policy.MaxTurns })
	return &session{e: e, id: id, role: role, tools: tools, env: env, maxTurns: maxTurns, req: model.Request{
		Role: role, Instance: id, Intent: intent, Attempt: attemptNo, System: system,
		Messages: []model.Message{{Role: "user", Text: prompt}}, Tools: specs, MaxTokens: 8192,
	}}
}

// hostTool handles one call of a host tool. done ends the loop; a non-nil
// refusal is sent back to the model as an error it can correct.
type hostTool func(call model.ToolCall) (done bool, refusal error)

// loop runs turns until a host tool says done. Other tool calls run through
// runTool. A model error, running out of turns or of corrections fails.
func (ss *session) loop(ctx context.Context, host map[string]hostTool) error {
	// The watchdog times every session of a role that has a limit (DA-A5).
	if dog := ss.e.dog; dog != nil {
		kind, key := watchdog.Kind(""), ss.id
		switch ss.role {
		case model.Worker:
			kind = watchdog.WorkerSession
		case model.Reviewer:
			kind, key = watchdog.ReviewerSession, ss.id+"#review"
		case model.Meta:
			kind, key = watchdog.MetaTurn, ss.id+"#meta"
		}
		if kind != "" {
			dog.Started(kind, key, ss.e.cfg.Clock())
			defer dog.Finished(kind, key, ss.e.cfg.Clock())
		}
	}
	corrections, nudges := 0, 0
	for turn := 0; turn < ss.maxTurns; turn++ {
		resp, err := ss.e.callModel(ctx, ss.id, ss.role, ss.req)
		if err != nil {
			return err
		}
		ss.turns++
		ss.lastContext = resp.Usage.Input + resp.Usage.Output
		ss.req.Messages = append(ss.req.Messages, model.Message{Role: "assistant", Text: resp.Text, ToolCalls: resp.ToolCalls})
		if resp.StopReason == "max_tokens" {
			// A cut answer may hold half a tool call: nothing of it runs.
			corrections++
			if corrections > maxCorrections {
				return fmt.Errorf("the %s's answer was cut at max_tokens %d times", ss.role, corrections)
			}
			var results []model.ToolResult
			for _, c := range resp.ToolCalls {
				results = append(results, model.ToolResult{CallID: c.ID, IsError: true, Content: "E-CUT: not run: your answer was cut off at the token limit"})
			}
			ss.req.Messages = append(ss.req.Messages, model.Message{Role: "user", ToolResults: results,
				Text: fmt.Sprintf("E-CUT: your answer was cut off at the %d-token limit, so none of it was acted on. Do less in one answer: write long files in parts (write_file with append).", ss.req.MaxTokens)})
			continue
		}
		if len(resp.ToolCalls) == 0 {
			nudges++
			if nudges > maxCorrections {
				return fmt.Errorf("the %s answered %d times without calling a tool", ss.role, nudges)
			}
			ss.req.Messages = append(ss.req.Messages, model.Message{Role: "user", Text: "Use the tools: act, or end with the tool that finishes your part."})
			continue
		}
		var results []model.ToolResult
		finished := false
		for _, call := range resp.ToolCalls {
			if call.Invalid != "" {
				corrections++
				if corrections > maxCorrections {
					return fmt.Errorf("%s: arguments were not valid JSON %d times", call.Name, corrections)
				}
				results = append(results, model.ToolResult{CallID: call.ID, IsError: true,
					Content: fmt.Sprintf("E-ARGS: the arguments of %s are not valid JSON: %.200q. Send one JSON object matching the tool's schema.", call.Name, call.Invalid)})
				continue
			}
			if r, ok := ss.replies[call.Name]; ok {
				results = append(results, model.ToolResult{CallID: call.ID, Content: r(call)})
				continue
			}
			if h, ok := host[call.Name]; ok {
				if finished {
					results = append(results, model.ToolResult{CallID: call.ID, Content: "ignored: the session already ended", IsError: true})
					continue
				}
				done, refusal := h(call)
				if refusal != nil {
					corrections++
					if corrections > maxCorrections {
						return fmt.Errorf("%s refused %d times, last: %v", call.Name, corrections, refusal)
					}
					results = append(results, model.ToolResult{CallID: call.ID, Content: refusal.Error(), IsError: true})
					continue
				}
				if done {
					finished = true
				}
				results = append(results, model.ToolResult{CallID: call.ID, Content: "accepted"})
				continue
			}
			res := ss.e.runTool(ctx, ss.id, ss.role, ss.tools, ss.env, call)
			if ss.onTool != nil {
				ss.onTool(call, res)
			}
			results = append(results, res)
		}
		ss.logTurn(resp, results)
		if finished {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return errStopped
		}
		ss.req.Messages = append(ss.req.Messages, model.Message{Role: "user", ToolResults: results})
		if ss.afterTurn != nil {
			if err := ss.afterTurn(resp); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("the %s did not finish within %d turns: %w", ss.role, ss.maxTurns, errTurns)
}

func (e *Engine) workerPrompt(c contract.Contract, boundary, parentBd string, a state.Attempt, contractOf scope.DelegationContract) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Contract %s\nIntent:\n%s\n\n", c.ID, c.Intent)
	fmt.Fprintf(&b, "Your folder (the only place you may write): %s\n", boundary)
	fmt.Fprintf(&b, "You may read: %s (the task's inputs: %s) and %s (your parent's folder, with the accepted work of other parts).\n\n", InputsDir, e.inputList(), parentBd)
	b.WriteString("Checks (paths are relative to your folder):\n")
	for i, ch := range c.Checks {
		fmt.Fprintf(&b, "%d. %s\n", i+1, ch.Describe())
	}
	if a.Feedback != "" {
		fmt.Fprintf(&b, "\nThis is attempt %d. %s\n", a.Number, a.Feedback)
	}
	b.WriteString(e.harnessPrompt())
	b.WriteString("\n" + scope.Render(contractOf))
	b.WriteString("\nWhen every check passes, call declare_done with a self-assessment for every check")
	if len(contractOf.SOP) > 0 {
		b.WriteString(" and, for every SOP step, where you did it")
	}
	b.WriteString(". If your contract is not enough for the work, call request_help (at most three times).")
	return b.String()
}

// inputList names the files under inputs/ for prompts.
func (e *Engine) inputList() string {
	var names []string
	root := filepath.Join(e.dir, InputsDir)
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(e.dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// evaluate computes evidence for c on the instance's boundary; rubric
// checks go to an independent Reviewer session each (fails closed).
func (e *Engine) evaluate(ctx context.Context, id string, c contract.Contract, boundary string) contract.Evidence {
	abs := filepath.Join(e.dir, filepath.FromSlash(boundary))
	return check.Evaluate(ctx, c, abs, check.Options{Rubric: func(ctx context.Context, i int, ch contract.Check) (bool, string, error) {
		return e.review(ctx, id, c, boundary, i, ch)
	}})
}

// review asks the Reviewer to grade one rubric statement. It is given the
// contract and the files, never anyone's opinion of them. No verdict, an
// error or a malformed verdict is a failure (fails closed).
func (e *Engine) review(ctx context.Context, id string, c contract.Contract, boundary string, i int, ch contract.Check) (bool, string, error) {
	abs := filepath.Join(e.dir, filepath.FromSlash(boundary))
	files := check.Artifacts(abs)
	prompt := fmt.Sprintf("Contract intent:\n%s\n\nStatement to grade (check %d):\n%s\n\nThe work is in %s; its files: %s.\nRead what you need with read_file, then call submit_grade once.",
		c.Intent, i+1, ch.Text, boundary, strings.Join(files, ", "))
	env := tool.Env{Instance: id, RunRoot: e.dir, Boundary: boundary, Readable: []string{InputsDir}}
	var attemptNo int
	e.view(func(s *state.State) {
		if a := s.CurrentAttempt(id); a != nil {
			attemptNo = a.Number
		}
	})
	ss := e.newSession(id, model.Reviewer, reviewerSystem, prompt, []model.ToolSpec{submitGradeSpec}, readOnlyTools, env, c.Intent, attemptNo)
	var (
		pass      bool
		rationale string
	)
	err := ss.loop(ctx, map[string]hostTool{toolSubmitGrade: func(call model.ToolCall) (bool, error) {
		var args struct {
			Pass      *bool  `json:"pass"`
			Rationale string `json:"rationale"`
		}
		if err := strictJSON(call.Args, &args); err != nil {
			return false, tool.Errorf("E-ARGS", "submit_grade: %v", err)
		}
		if args.Pass == nil || strings.TrimSpace(args.Rationale) == "" {
			return false, tool.Errorf("E-ARGS", "submit_grade needs both pass and a rationale")
		}
		pass, rationale = *args.Pass, args.Rationale
		return true, nil
	}})
	if err != nil {
		return false, "", fmt.Errorf("the review did not complete: %w", err)
	}
	return pass, rationale, nil
}

// plan is F-D5's plan: Meta splits the contract into a DAG of child
// contracts with a check map; the host validates it and the Guard judges
// it before it is recorded.
func (e *Engine) plan(ctx context.Context, id, attempt string) error {
	var (
		c     contract.Contract
		in    state.Instance
		a     state.Attempt
		depth int
		maxD  int
		gran  int
	)
	e.view(func(s *state.State) {
		in = *s.Inst[id]
		c = s.Contract[in.Contract]
		a = *s.Attempt[attempt]
		depth, maxD, gran = in.Depth, s.Policy.MaxDepth, s.Policy.GranularityThreshold
	})
	if err := e.enter(id, state.Plan); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Contract %s\nIntent:\n%s\n\nYour folder: %s. Inputs: %s.\nYour checks (paths relative to your folder):\n", c.ID, c.Intent, in.Boundary, e.inputList())
	for i, ch := range c.Checks {
		fmt.Fprintf(&b, "%d. %s\n", i+1, ch.Describe())
	}
	fmt.Fprintf(&b, "\nYou are at depth %d of at most %d. A child contract with more than %d checks will be split again.\n", depth, maxD, gran)
	if a.Feedback != "" {
		fmt.Fprintf(&b, "This is attempt %d. %s\n", a.Number, a.Feedback)
	}
	b.WriteString("Call submit_plan with the child contracts.")
	env := tool.Env{Instance: id, RunRoot: e.dir, Boundary: in.Boundary, Readable: []string{InputsDir}}
	ss := e.newSession(id, model.Meta, metaSystem, b.String(), []model.ToolSpec{submitPlanSpec}, readOnlyTools, env, c.Intent, a.Number)
	err := ss.loop(ctx, map[string]hostTool{toolSubmitPlan: func(call model.ToolCall) (bool, error) {
		return true, e.recordPlan(ctx, id, in, c, call.Args)
	}})
	if err != nil {
		return err
	}
	return e.enter(id, state.Idle)
}

type planArgs struct {
	Tasks []struct {
		ID     string           `json:"id"`
		Intent string           `json:"intent"`
		Checks []contract.Check `json:"checks"`
		Deps   []string         `json:"deps"`
		Agent  string           `json:"agent"`
	} `json:"tasks"`
	CheckMap []struct {
		ParentCheck int    `json:"parent_check"`
		Task        string `json:"task"`
		ChildCheck  int    `json:"child_check"`
	} `json:"check_map"`
	AfterMerge []int           `json:"after_merge"`
	Promote    []state.Promote `json:"promote"`
}

// recordPlan turns submit_plan's arguments into contracts and a plan. Any
// problem is returned to Meta to correct; nothing is recorded until the
// whole plan is valid, except contracts, whose registration is idempotent.
func (e *Engine) recordPlan(ctx context.Context, id string, in state.Instance, c contract.Contract, raw json.RawMessage) error {
	var args planArgs
	if err := strictJSON(raw, &args); err != nil {
		return tool.Errorf("E-ARGS", "submit_plan: %v", err)
	}
	plan := &state.PlanRecorded{Instance: id, AfterMerge: []int{}, Promote: args.Promote}
	var cs []contract.Contract
	for i, t := range args.Tasks {
		if !validName(t.ID) {
			return tool.Errorf("E-ARGS", "submit_plan: task %d: id %q must be letters, digits, '-' or '_'", i+1, t.ID)
		}
		child := contract.New(t.Intent, t.Checks)
		if err := child.Validate(); err != nil {
			return tool.Errorf("E-ARGS", "submit_plan: task %s: %v", t.ID, err)
		}
		if t.Agent != "" {
			if _, ok := e.blueprints[t.Agent]; !ok {
				return tool.Errorf("E-ARGS", "submit_plan: task %s: no blueprint defines agent %q (have: %s)", t.ID, t.Agent, strings.Join(slices.Sorted(maps.Keys(e.blueprints)), ", "))
			}
		}
		cs = append(cs, child)
		plan.Tasks = append(plan.Tasks, state.PlanTask{ID: t.ID, ContractID: child.ID, Deps: t.Deps, Boundary: in.Boundary + "/" + t.ID, Agent: t.Agent})
	}
	for _, l := range args.CheckMap {
		plan.CheckMap = append(plan.CheckMap, state.CheckLink{ParentCheck: l.ParentCheck - 1, Task: l.Task, ChildCheck: l.ChildCheck - 1})
	}
	for _, n := range args.AfterMerge {
		plan.AfterMerge = append(plan.AfterMerge, n-1)
	}
	for _, child := range cs {
		if err := e.note(state.Event{Type: state.TContractRegistered, ContractRegistered: &state.ContractRegistered{Contract: child, Source: state.FromDecomposition, By: id}}); err != nil {
			return planRefusal(err)
		}
		e.writeContractLater(child)
	}
	if err := e.commit(ctx, state.Event{Type: state.TPlanRecorded, PlanRecorded: plan}); err != nil {
		return planRefusal(err)
	}
	return nil
}

func planRefusal(err error) error {
	var v *state.Violation
	if errors.As(err, &v) {
		return tool.Errorf(string(v.Code), "submit_plan refused: %s", v.Detail)
	}
	return err
}

// strictJSON decodes a model's arguments, refusing unknown fields so a
// misspelt key is reported instead of silently ignored.
func strictJSON(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return errors.New("no arguments")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments are not valid: %v", err)
	}
	if dec.More() {
		return errors.New("arguments hold more than one JSON value")
	}
	return nil
}
