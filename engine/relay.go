package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fractal-harness/fractal/check"
	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/discuss"
	"github.com/fractal-harness/fractal/gate"
	"github.com/fractal-harness/fractal/harness"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/tool"
	"github.com/fractal-harness/fractal/tool/fs"
	"github.com/fractal-harness/fractal/usermsg"
	"github.com/fractal-harness/fractal/watchdog"
)

// The exit signals of a Worker session (DA-A1), each its own tool: never
// told apart by free text.
const (
	toolHandoff  = "handoff"
	toolBlocked  = "blocked"
	toolProgress = "progress" // the "continue" signal: record progress, go on
)

// ProgressFile is each building instance's relay log, in its folder.
const ProgressFile = "progress.md"

var (
	handoffSpec = model.ToolSpec{Name: toolHandoff, Description: "End this session and hand the work to the next one: say what is done and what the next session should do first.",
		Schema: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"},"next":{"type":"string"}},"required":["summary","next"]}`)}
	blockedSpec = model.ToolSpec{Name: toolBlocked, Description: "End this session because the work cannot go on without something outside your reach; say exactly what.",
		Schema: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"}},"required":["reason"]}`)}
	progressSpec = model.ToolSpec{Name: toolProgress, Description: "Record progress in progress.md and keep working (the first session writes its plan here). progress.md is append-only: write_file cannot change it.",
		Schema: json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]}`)}
	startWorkerSpec = model.ToolSpec{Name: "start_worker", Description: "Start the next worker session, with a message it will read first.",
		Schema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)}
	giveUpSpec = model.ToolSpec{Name: "give_up", Description: "End this attempt: the part cannot be done as asked. Say why; the parent decides what happens next.",
		Schema: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"}},"required":["reason"]}`)}
	askUserSpec = model.ToolSpec{Name: "ask_user", Description: "Ask the person who gave the task, in plain words (no internal terms), with editable options and one default, and what goes wrong silently if the default is wrong.",
		Schema: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"},"options":{"type":"array","items":{"type":"object","properties":{"label":{"type":"string"},"value":{"type":"string"},"default":{"type":"boolean"}},"required":["label","value"]}},"silent_failure":{"type":"string"}},"required":["question","options","silent_failure"]}`)}
)

// sessionEnd ends a Worker session for a reason of the host's or the
// worker's choosing.
type sessionEnd struct {
	signal, reason string
}

func (s *sessionEnd) Error() string { return s.signal + ": " + s.reason }

// declaration is an accepted declare_done.
type declaration struct {
	summary   string
	self      []state.SelfCheck
	accounted map[int]string
}

// build is F-D5's build as relay sessions (DA-A1): each Worker session
// starts fresh from the contract, the tail of progress.md and its inbox;
// it ends with declare_done (gated by the self-assessment), handoff,
// blocked, or by the host (context budget, watchdog, turns). A session end
// that is not a completion goes to Meta, which must take a position; the
// host never starts a worker on its own.
func (e *Engine) build(ctx context.Context, id, attempt string) error {
	var (
		c        contract.Contract
		in       state.Instance
		a        state.Attempt
		pol      = e.policy()
		sessions int
	)
	e.view(func(s *state.State) {
		in = *s.Inst[id]
		c = s.Contract[in.Contract]
		a = *s.Attempt[attempt]
		sessions = s.Sessions[attempt]
	})
	if err := e.enter(id, state.Build); err != nil {
		return err
	}
	if a.Checkpoint == "" {
		if err := e.checkpoint(id, attempt, in.Boundary); err != nil {
			return err
		}
	}
	abs := filepath.Join(e.dir, filepath.FromSlash(in.Boundary))
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	e.progMu.Lock()
	delete(e.violations, id) // counted per attempt
	e.progMu.Unlock()
	var inbox []string
	for n := sessions + 1; ; n++ {
		if n > pol.MaxSessions {
			return fmt.Errorf("the work did not finish within %d sessions", pol.MaxSessions)
		}
		done, end, tokens, err := e.workerSession(ctx, id, attempt, n, c, inbox)
		if err != nil {
			return err
		}
		if done != nil {
			return e.submit(ctx, id, attempt, c, in.Boundary, abs, done)
		}
		// Layer (a): the host evaluates the done criteria at every session end.
		ev := check.Evaluate(ctx, c, abs, check.Options{})
		var passing, failing []int
		for _, r := range ev.Results {
			if c.Checks[r.Check].Kind == contract.Rubric {
				continue
			}
			if r.Pass && r.Err == "" {
				passing = append(passing, r.Check)
			} else {
				failing = append(failing, r.Check)
			}
		}
		if err := e.note(state.Event{Type: state.TSessionEnded, SessionEnded: &state.SessionEnded{Instance: id, Attempt: attempt, Session: n,
			Signal: end.signal, Reason: end.reason, Passing: passing, Failing: failing, Tokens: tokens}}); err != nil {
			return err
		}
		dec, err := e.metaDecide(ctx, id, n, c, end, describeFailures(c, ev))
		if err != nil {
			return err
		}
		switch dec.Action {
		case "start_worker":
			inbox = []string{dec.Message}
		case "give_up":
			return fmt.Errorf("the attempt was given up by Meta: %s", dec.Message)
		case "ask_user":
			inbox = []string{dec.Message}
		}
	}
}

func (e *Engine) policy() (p policyView) {
	e.view(func(s *state.State) {
		p = policyView{MaxSessions: s.Policy.MaxSessions, SessionTokens: s.Policy.SessionTokens, Mode: string(s.Policy.Mode), AnswerWait: s.Policy.AnswerWait}
	})
	if p.MaxSessions <= 0 {
		p.MaxSessions = 20
	}
	return p
}

type policyView struct {
	MaxSessions   int
	SessionTokens int
	Mode          string
	AnswerWait    time.Duration
}

// workerSession runs one relay session. It returns the declaration when
// the worker declared done and passed the self-assessment gate, or how
// the session ended otherwise.
func (e *Engine) workerSession(ctx context.Context, id, attempt string, n int, c contract.Contract, inbox []string) (*declaration, *sessionEnd, int, error) {
	var (
		in       state.Instance
		a        state.Attempt
		parentBd string
	)
	e.view(func(s *state.State) {
		in = *s.Inst[id]
		a = *s.Attempt[attempt]
		parentBd = s.Inst[in.Parent].Boundary
	})
	progPath := filepath.Join(e.dir, filepath.FromSlash(in.Boundary), ProgressFile)
	if err := appendFile(progPath, fmt.Sprintf("\n## Session %d (attempt %d, %s)\n", n, a.Number, e.cfg.Clock().UTC().Format(time.RFC3339))); err != nil {
		return nil, nil, 0, err
	}
	prompt := e.workerPrompt(c, in.Boundary, parentBd, a, in.Packet.Contract) + "\n\n" + relayContext(progPath, n, inbox)
	env := tool.Env{Instance: id, RunRoot: e.dir, Boundary: in.Boundary, Readable: readable(in.Packet.Contract, in.Boundary)}
	host := []model.ToolSpec{declareDoneSpec, handoffSpec, blockedSpec, progressSpec, requestHelpSpec}
	ss := e.newSession(id, model.Worker, workerSystem, prompt, host, packetTools(in.Packet), env, c.Intent, a.Number)
	ss.req.Session = n
	ss.stream = e.streamPath(id)
	fmt.Fprintf(ss.streamLog(), "== session %d of attempt %d\n", n, a.Number)
	budget := e.policy().SessionTokens
	ss.afterTurn = func(resp model.Response) error {
		if budget > 0 && resp.Usage.Input+resp.Usage.Output > budget {
			return &sessionEnd{signal: "context_exhausted", reason: fmt.Sprintf("the session used %d tokens of context, over its %d", resp.Usage.Input+resp.Usage.Output, budget)}
		}
		if trip := e.takeTrip(id); trip != "" {
			return &sessionEnd{signal: "watchdog", reason: trip}
		}
		e.maybeWatch(ctx, id, ss)
		return nil
	}
	ss.replies = map[string]func(model.ToolCall) string{
		toolRequestHelp: func(call model.ToolCall) string {
			reply := e.requestHelp(ctx, id, call.Args)
			// An approved revision changes what the worker may use from
			// its next turn on.
			var p state.Packet
			e.view(func(s *state.State) { p = s.Inst[id].Packet })
			ss.tools = packetTools(p)
			ss.env.Readable = readable(p.Contract, in.Boundary)
			ss.req.Tools = append(ss.tools.Specs(), host...)
			return reply
		},
		toolProgress: func(call model.ToolCall) string {
			var args struct {
				Note string `json:"note"`
			}
			if err := strictJSON(call.Args, &args); err != nil || strings.TrimSpace(args.Note) == "" {
				return "E-ARGS: progress needs a note"
			}
			if err := appendFile(progPath, "- "+strings.TrimSpace(args.Note)+"\n"); err != nil {
				return "E-HOST: " + err.Error()
			}
			e.progressed(id)
			return "recorded in progress.md"
		},
	}
	var done *declaration
	var end *sessionEnd
	endWith := func(signal, text, line string) (bool, error) {
		if err := appendFile(progPath, line+"\n"); err != nil {
			return false, err
		}
		end = &sessionEnd{signal: signal, reason: text}
		return true, nil
	}
	err := ss.loop(ctx, map[string]hostTool{
		toolDeclareDone: func(call model.ToolCall) (bool, error) {
			d, err := e.declare(id, c, in, call.Args)
			if err != nil {
				return false, err
			}
			done = d
			_ = appendFile(progPath, "Declared done: "+oneLine(d.summary)+"\n")
			return true, nil
		},
		toolHandoff: func(call model.ToolCall) (bool, error) {
			var args struct{ Summary, Next string }
			if err := strictJSON(call.Args, &args); err != nil || strings.TrimSpace(args.Summary) == "" {
				return false, tool.Errorf("E-ARGS", "handoff needs a summary and what comes next")
			}
			return endWith("handoff", args.Summary+" Next: "+args.Next, "Handoff: "+oneLine(args.Summary)+" Next: "+oneLine(args.Next))
		},
		toolBlocked: func(call model.ToolCall) (bool, error) {
			var args struct{ Reason string }
			if err := strictJSON(call.Args, &args); err != nil || strings.TrimSpace(args.Reason) == "" {
				return false, tool.Errorf("E-ARGS", "blocked needs a reason")
			}
			return endWith("blocked", args.Reason, "Blocked: "+oneLine(args.Reason))
		},
	})
	var se *sessionEnd
	switch {
	case errors.As(err, &se):
		_ = appendFile(progPath, "Ended by the host: "+se.Error()+"\n")
		return nil, se, ss.lastContext, nil
	case err != nil && ctx.Err() == nil && errors.Is(err, errTurns):
		_ = appendFile(progPath, "Ended by the host: out of turns\n")
		return nil, &sessionEnd{signal: "turns", reason: err.Error()}, ss.lastContext, nil
	case err != nil:
		return nil, nil, 0, err
	}
	return done, end, ss.lastContext, nil
}

// relayContext is what a new session reads first (DA-A1): the plan (the
// first session's notes), the last sessions' notes and its inbox. It is
// bounded, however many sessions came before: the cost of a hand-off does
// not grow with the length of the task.
func relayContext(progPath string, n int, inbox []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This is session %d. ", n)
	if n == 1 {
		b.WriteString("Begin by recording your plan with the progress tool.\n")
	} else {
		b.WriteString("Earlier sessions worked on this before you. Start from progress.md and the files; where they disagree, the files win.\n")
	}
	if data, err := os.ReadFile(progPath); err == nil && n > 1 {
		b.WriteString("\nprogress.md (the plan and the latest sessions):\n")
		b.WriteString(progressExcerpt(string(data), 3, 6000))
	}
	for _, m := range inbox {
		fmt.Fprintf(&b, "\nMessage for you: %s\n", m)
	}
	return b.String()
}

// progressExcerpt keeps the first session's section (the plan) and the last
// keep sections, capped at max bytes.
func progressExcerpt(text string, keep, limit int) string {
	parts := strings.Split(text, "\n## Session ")
	var out []string
	if len(parts) > 0 {
		out = append(out, parts[0])
	}
	if len(parts) > 1 {
		out = append(out, "## Session "+parts[1])
	}
	start := max(2, len(parts)-keep)
	if start > 2 {
		out = append(out, fmt.Sprintf("(%d sessions omitted; read %s for all of them)", start-2, ProgressFile))
	}
	for _, p := range parts[start:] {
		out = append(out, "## Session "+p)
	}
	s := strings.Join(out, "\n")
	if len(s) > limit {
		s = s[:limit/2] + "\n…\n" + s[len(s)-limit/2:]
	}
	return s
}

// declare checks a declare_done: the arguments, then layer (b) of DA-B1 —
// the self-assessment must cover every check, each passing, each with a
// quote found in the file it names and a provenance tag.
func (e *Engine) declare(id string, c contract.Contract, in state.Instance, raw json.RawMessage) (*declaration, error) {
	var args struct {
		Summary string          `json:"summary"`
		Items   []gate.SelfItem `json:"items"`
		SOP     []struct {
			Step  int    `json:"step"`
			Where string `json:"where"`
		} `json:"sop"`
	}
	if err := strictJSON(raw, &args); err != nil {
		return nil, tool.Errorf("E-ARGS", "declare_done: %v", err)
	}
	// Only the files the self-assessment names are read, through the same
	// confinement as read_file: a quote can be verified only in a file the
	// worker may read.
	files := map[string]string{}
	env := tool.Env{Instance: id, RunRoot: e.dir, Boundary: in.Boundary, Readable: readable(in.Packet.Contract, in.Boundary)}
	for _, it := range args.Items {
		f := it.Source.File
		if _, done := files[f]; done || f == "" {
			continue
		}
		pl, err := fs.LocateRead(env, f)
		if err != nil {
			continue
		}
		b, err := pl.Root.ReadFile(pl.Name)
		_ = pl.Close()
		if err == nil && len(b) < 4<<20 {
			files[pl.Rel] = string(b)
		}
	}
	// A top-level contract built directly answers for the task's
	// constraints too (DA-B1); a part of a decomposed task answers for its
	// own checks, and the constraints are judged on the merged work.
	var constraints []string
	e.view(func(s *state.State) {
		if in.Parent == state.Session {
			for _, k := range s.Constraints {
				if k.Text != "none stated" {
					constraints = append(constraints, k.ID+": "+k.Text)
				}
			}
		}
	})
	if probs := gate.CheckSelfAssessment(c, constraints, args.Items, files); len(probs) > 0 {
		var msgs []string
		for _, p := range probs {
			msgs = append(msgs, string(p.Code)+" "+p.Item+": "+p.Message)
		}
		return nil, tool.Errorf("E-SELF", "declare_done refused: %s", strings.Join(msgs, "; "))
	}
	d := &declaration{summary: args.Summary, accounted: map[int]string{}}
	for _, it := range args.Items {
		if it.Kind == gate.KindCheck {
			d.self = append(d.self, state.SelfCheck{Check: it.Index - 1, Pass: it.Pass, Evidence: fmt.Sprintf("%q (%s:%d, from %s)", it.Quote, it.Source.File, it.Source.Line, it.Source.Origin)})
		}
	}
	for _, st := range args.SOP {
		d.accounted[st.Step] = st.Where
	}
	return d, nil
}

// submit evaluates the checks, runs the submission gates and hands the
// evidence to the parent.
func (e *Engine) submit(ctx context.Context, id, attempt string, c contract.Contract, boundary, abs string, d *declaration) error {
	if err := syncTree(abs); err != nil {
		return fmt.Errorf("make the work durable: %w", err)
	}
	ev := e.evaluate(ctx, id, c, boundary)
	if ctx.Err() != nil {
		return errStopped
	}
	g := e.gates(ctx, id, c, ev, submission{summary: d.summary, accounted: d.accounted})
	if ctx.Err() != nil {
		return errStopped
	}
	return e.commit(ctx, state.Event{Type: state.TEvidenceSubmitted, EvidenceSubmitted: &state.EvidenceSubmitted{Instance: id, Attempt: attempt, Evidence: ev, SelfReport: d.self, Summary: d.summary, Gates: g}})
}

// metaDecide puts a session end before Meta, which must take a position:
// start another worker session, give the attempt up, or ask the user. Meta
// is reminded until it does (a bounded number of times; then the attempt
// fails, so nothing waits forever).
func (e *Engine) metaDecide(ctx context.Context, id string, n int, c contract.Contract, end *sessionEnd, failing string) (*state.MetaDecision, error) {
	var (
		in       state.Instance
		attempt  int
		notes    []string
		progress string
	)
	e.view(func(s *state.State) {
		in = *s.Inst[id]
		if a := s.CurrentAttempt(id); a != nil {
			attempt = a.Number
		}
	})
	notes = e.takeNotes(id)
	if b, err := os.ReadFile(filepath.Join(e.dir, filepath.FromSlash(in.Boundary), ProgressFile)); err == nil {
		progress = progressExcerpt(string(b), 2, 3000)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The worker's session %d on this part ended.\nPart: %s\nExit signal: %s\nWhy: %s\n", n, firstLine(c.Intent), end.signal, end.reason)
	if failing != "" {
		fmt.Fprintf(&b, "Checks not yet passing (evaluated by the host just now): %s\n", failing)
	} else {
		b.WriteString("Every check passes now, but the worker did not declare done.\n")
	}
	for _, nt := range notes {
		fmt.Fprintf(&b, "Observation: %s\n", nt)
	}
	fmt.Fprintf(&b, "\nprogress.md:\n%s\n\nTake a position: start_worker (with a message), give_up, or ask_user.", progress)
	env := tool.Env{Instance: id, RunRoot: e.dir, Boundary: in.Boundary, Readable: []string{InputsDir, harness.Dir}}
	// With a task harness, Meta may revise it — through the audited tool
	// only — and must then tell the worker (DA-A5).
	tools := readOnlyTools
	var changes []harness.AuditRecord
	if e.hasHarness() {
		w := harness.NewWriter(filepath.Join(e.dir, harness.Dir), func(r harness.AuditRecord) error {
			changes = append(changes, r)
			return e.commit(ctx, state.Event{Type: state.THarnessChanged, HarnessChanged: &state.HarnessChanged{Path: r.Path, Size: r.Size, SHA256: r.SHA256, Reason: r.Reason, Author: r.Author, Large: r.Large}})
		}).WithClock(e.cfg.Clock)
		tools = mustRegistry(append(readOnlyToolList(), w.Tool("meta"))...)
		b.WriteString("\nYou may revise the task harness with harness_write; then you must start the worker with a message saying what changed.")
	}
	ss := e.newSession(id, model.Meta, metaSystem, b.String(), []model.ToolSpec{startWorkerSpec, giveUpSpec, askUserSpec}, tools, env, c.Intent, attempt)
	dec := &state.MetaDecision{Instance: id, Session: n}
	mustTell := func() error {
		if len(changes) > 0 {
			return tool.Errorf("E-HARNESS-UNTOLD", "you changed the task harness (%s): a write alone schedules nothing; start the worker with a message saying what changed", changes[len(changes)-1].Path)
		}
		return nil
	}
	err := ss.loop(ctx, map[string]hostTool{
		"start_worker": func(call model.ToolCall) (bool, error) {
			var a struct{ Message string }
			if err := strictJSON(call.Args, &a); err != nil {
				return false, tool.Errorf("E-ARGS", "start_worker: %v", err)
			}
			dec.Action, dec.Message = "start_worker", a.Message
			return true, nil
		},
		"give_up": func(call model.ToolCall) (bool, error) {
			if err := mustTell(); err != nil {
				return false, err
			}
			var a struct{ Reason string }
			if err := strictJSON(call.Args, &a); err != nil || strings.TrimSpace(a.Reason) == "" {
				return false, tool.Errorf("E-ARGS", "give_up needs a reason")
			}
			dec.Action, dec.Message = "give_up", a.Reason
			return true, nil
		},
		"ask_user": func(call model.ToolCall) (bool, error) {
			if err := mustTell(); err != nil {
				return false, err
			}
			answer, err := e.askUser(ctx, call.Args)
			if err != nil {
				return false, err
			}
			dec.Action, dec.Message = "ask_user", answer
			return true, nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("no position was taken by Meta after the session ended: %w", err)
	}
	if note := e.revisionReview(ctx, id, changes); note != "" {
		dec.Message += " " + note
	}
	if err := e.note(state.Event{Type: state.TMetaDecision, MetaDecision: dec}); err != nil {
		return nil, err
	}
	return dec, nil
}

// askUser sends the user a question (DA-B4): plain words, editable options
// with one default, and what goes wrong silently if the default is wrong.
// Jargon is refused so Meta rephrases. In autonomous mode the default is
// taken after the policy's wait, and the note says so (it goes into the
// delivery report); in interactive mode the run stops for the answer.
func (e *Engine) askUser(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Question string `json:"question"`
		Options  []struct {
			Label   string `json:"label"`
			Value   string `json:"value"`
			Default bool   `json:"default"`
		} `json:"options"`
		SilentFailure string `json:"silent_failure"`
	}
	if err := strictJSON(raw, &args); err != nil {
		return "", tool.Errorf("E-ARGS", "ask_user: %v", err)
	}
	m := usermsg.Message{Kind: usermsg.Question, Text: args.Question, SilentFailure: args.SilentFailure}
	for _, o := range args.Options {
		m.Options = append(m.Options, usermsg.Option{Label: o.Label, Value: o.Value, Default: o.Default})
	}
	if err := usermsg.Validate(m); err != nil {
		return "", tool.Errorf("E-USER-MESSAGE", "rephrase for the person, in plain words: %v", err)
	}
	pol := e.policy()
	um := &state.UserMessage{Kind: "question", Text: m.Text}
	for _, o := range m.Options {
		um.Options = append(um.Options, o.Value)
		if o.Default {
			um.Default = o.Value
		}
	}
	if pol.Mode == "interactive" {
		if ans, ok, err := e.askTerminal(ctx, "meta", m); ok {
			if err != nil {
				return "", err
			}
			um.Answer = ans
			if err := e.note(state.Event{Type: state.TUserMessage, UserMessage: um}); err != nil {
				return "", err
			}
			return "The person answered: " + ans, nil
		}
		// No terminal: the run stops for the answer.
		_ = e.note(state.Event{Type: state.TUserMessage, UserMessage: um})
		e.progMu.Lock()
		e.askedByMeta = true
		e.progMu.Unlock()
		e.raise([]string{m.Text})
		<-ctx.Done()
		return "", errStopped
	}
	select {
	case <-time.After(pol.AnswerWait):
	case <-ctx.Done():
		return "", errStopped
	}
	ans := usermsg.TakeDefault(m, pol.AnswerWait)
	um.Answer, um.Defaulted, um.Note = ans.Value, ans.Defaulted, ans.Note
	if err := e.note(state.Event{Type: state.TUserMessage, UserMessage: um}); err != nil {
		return "", err
	}
	return "The person did not answer in time; the default was taken: " + ans.Value, nil
}

func appendFile(p, text string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	return errors.Join(err, f.Close())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// streamPath is the run-relative stream file of an instance's worker: what
// the Watcher reads.
func (e *Engine) streamPath(id string) string {
	return "streams/" + strings.ReplaceAll(id, "/", "__") + ".log"
}

// takeTrip returns and clears a watchdog trip pending for an instance.
func (e *Engine) takeTrip(id string) string {
	e.progMu.Lock()
	defer e.progMu.Unlock()
	t := e.trips[id]
	delete(e.trips, id)
	return t
}

// takeNotes returns and clears the observations and trips waiting for Meta.
func (e *Engine) takeNotes(id string) []string {
	e.progMu.Lock()
	defer e.progMu.Unlock()
	n := e.notes[id]
	delete(e.notes, id)
	return n
}

func (e *Engine) addNote(id, note string) {
	e.progMu.Lock()
	defer e.progMu.Unlock()
	if e.notes == nil {
		e.notes = map[string][]string{}
	}
	e.notes[id] = append(e.notes[id], note)
}

// toolLoop feeds a worker's tool call to the watchdog (DA-A5); a trip is an
// event and a note for Meta, and ends the session at its next turn.
func (e *Engine) toolLoop(id, name string, args json.RawMessage, providerError bool) {
	if e.dog == nil {
		return
	}
	if trip := e.dog.ToolCall(id, name, watchdog.Canonical(args), e.cfg.Clock(), providerError); trip != nil {
		e.tripped(id, string(trip.Kind), trip.Detail)
		e.progMu.Lock()
		if e.trips == nil {
			e.trips = map[string]string{}
		}
		e.trips[id] = trip.Detail
		e.progMu.Unlock()
	}
}

func (e *Engine) tripped(id, kind, detail string) {
	_ = e.note(state.Event{Type: state.TWatchdogTrip, WatchdogTrip: &state.WatchdogTrip{Instance: id, Kind: kind, Detail: detail}})
	e.addNote(id, "watchdog ("+kind+"): "+detail)
}

// askTerminal asks the person on the run's terminal, when it has one (an
// interactive run started from the command line). One question at a time:
// concurrent parts wait their turn. ok is false without a terminal.
func (e *Engine) askTerminal(ctx context.Context, id string, m usermsg.Message) (string, bool, error) {
	if e.cfg.In == nil || e.cfg.Out == nil {
		return "", false, nil
	}
	q := discuss.Question{ID: id, Text: m.Text, SilentFailure: m.SilentFailure, Editable: true}
	for _, o := range m.Options {
		q.Options = append(q.Options, discuss.Option{Label: o.Label, Value: o.Value, Default: o.Default})
	}
	e.termMu.Lock()
	defer e.termMu.Unlock()
	a, err := discuss.Ask(ctx, e.cfg.In, e.cfg.Out, q)
	if err != nil {
		return "", true, err
	}
	return a.Value, true, nil
}
