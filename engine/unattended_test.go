package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fractal-harness/fractal/engine"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/script"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/state"
)

func call(name string, args map[string]any) script.Call { return script.Call{Name: name, Args: args} }

func turn(calls ...script.Call) script.Turn { return script.Turn{ToolCalls: calls} }

// costsTurns replaces the costs worker's script, and adds a Meta that
// decides after a session end (offers start_worker) with the given turns.
func adversary(t *testing.T, worker []script.Turn, meta []script.Turn) (engine.Task, *script.Script) {
	t.Helper()
	tk, sc := loadDemo(t)
	tk.Policy.RetryCount, tk.Policy.Permissions = 1, policy.Permissions{}
	costs := sessionOf(t, sc, model.Worker, "cost lines")
	costs.Turns = worker
	if meta != nil {
		sc.Sessions = append([]script.Session{{Role: model.Meta, Offers: "start_worker", Turns: meta}}, sc.Sessions...)
	}
	return tk, sc
}

func transcript(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, engine.TranscriptsFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func costsAccepted(t *testing.T, dir string) bool {
	st, err := engine.Fold(context.Background(), dir, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range st.Attempt {
		if strings.HasPrefix(a.Owner, "brief/costs") && a.Status == state.AttemptPassed {
			return true
		}
	}
	return false
}

var declareCosts = turn(call("declare_done", map[string]any{"summary": "Cost lines with change against Q2.", "items": []any{
	map[string]any{"kind": "check", "index": 1, "pass": true, "quote": "# Q3 costs (EUR m)", "source": map[string]any{"file": "work/brief/costs/costs.md", "line": 1, "origin": "computed"}},
	map[string]any{"kind": "check", "index": 2, "pass": true, "quote": "- Total: 1.32 -> 1.45 (+9.8%)", "source": map[string]any{"file": "work/brief/costs/costs.md", "line": 6, "origin": "inputs/costs.csv"}},
}}))

var writeCosts = turn(call("write_file", map[string]any{"path": "work/brief/costs/costs.md", "content": "# Q3 costs (EUR m)\n\n- Logistics: 0.62 -> 0.71 (+14.5%)\n- Marketing: 0.40 -> 0.38 (-5.0%)\n- Customer support: 0.30 -> 0.36 (+20.0%)\n- Total: 1.32 -> 1.45 (+9.8%), faster than sales (+7.6%)\n"}))

// DA-B1 (b): declaring done at once with nothing written is refused by the
// self-assessment gate, and the part is never accepted.
func TestAdversaryDoneAtOnce(t *testing.T) {
	tk, sc := adversary(t, []script.Turn{declareCosts, declareCosts, declareCosts, declareCosts}, nil)
	dir, res := run(t, tk, sc)
	if res.Stage == state.StageDone || costsAccepted(t, dir) {
		t.Fatal("work that was never written was accepted")
	}
	if !strings.Contains(transcript(t, dir), "E-SELF-NO-SOURCE") {
		t.Fatal("the self-assessment gate did not say why")
	}
}

// DA-B1 (b): a self-assessment that quotes text absent from the artifact
// is refused.
func TestAdversaryFabricatedQuote(t *testing.T) {
	lie := turn(call("declare_done", map[string]any{"summary": "done", "items": []any{
		map[string]any{"kind": "check", "index": 1, "pass": true, "quote": "# Q3 costs (EUR m)", "source": map[string]any{"file": "work/brief/costs/costs.md", "line": 1, "origin": "computed"}},
		map[string]any{"kind": "check", "index": 2, "pass": true, "quote": "- Total: 9.99 -> 12.00 (+20.1%)", "source": map[string]any{"file": "work/brief/costs/costs.md", "line": 6, "origin": "inputs/costs.csv"}},
	}}))
	tk, sc := adversary(t, []script.Turn{writeCosts, lie, lie, lie, lie}, nil)
	dir, _ := run(t, tk, sc)
	if costsAccepted(t, dir) {
		t.Fatal("a made-up quote was accepted")
	}
	if !strings.Contains(transcript(t, dir), "E-SELF-QUOTE-ABSENT") {
		t.Fatal("the quote check did not say why")
	}
}

// DA-B1: a deliverable that is an input copied, or a template with its
// placeholders left in, fails the rule checks however well its
// self-assessment reads.
func TestAdversaryCopyAndTemplate(t *testing.T) {
	csv, err := os.ReadFile("../demo/inputs/costs.csv")
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"copied input": string(csv) + "\n",
		"template":     "# Q3 costs (EUR m)\n\n- Logistics: TBD\n- Marketing: [insert figure]\n- Support: TODO\n- Total: 1.32 -> 1.45 (+9.8%)\n",
	} {
		t.Run(name, func(t *testing.T) {
			first := strings.SplitN(content, "\n", 2)[0]
			write := turn(call("write_file", map[string]any{"path": "work/brief/costs/costs.md", "content": content}))
			declare := turn(call("declare_done", map[string]any{"summary": "done", "items": []any{
				map[string]any{"kind": "check", "index": 1, "pass": true, "quote": first, "source": map[string]any{"file": "work/brief/costs/costs.md", "line": 1, "origin": "inputs/costs.csv"}},
				map[string]any{"kind": "check", "index": 2, "pass": true, "quote": first, "source": map[string]any{"file": "work/brief/costs/costs.md", "line": 1, "origin": "inputs/costs.csv"}},
			}}))
			tk, sc := adversary(t, []script.Turn{write, declare}, nil)
			dir, _ := run(t, tk, sc)
			st, _ := engine.Fold(context.Background(), dir, true)
			a := st.Attempt["brief/costs#1"]
			if a == nil || a.Status == state.AttemptPassed || len(a.Gates.Rules) == 0 {
				t.Fatalf("%s passed: %+v", name, a)
			}
		})
	}
}

// DA-A5, F-T4: a worker that tries to edit its checks (the contract file)
// or the done criteria (the harness) is refused; contracts stay as they
// were, and the refusals are in the journal.
func TestAdversaryEditsItsChecks(t *testing.T) {
	tk, sc := loadDemo(t)
	var contractFile string
	for _, tc := range tk.Contracts {
		contractFile = "contracts/" + tc.Contract.ID + ".yaml"
	}
	costs := sessionOf(t, sc, model.Worker, "cost lines")
	costs.Turns = append([]script.Turn{turn(
		call("write_file", map[string]any{"path": contractFile, "content": "intent: anything\nchecks: []\n"}),
		call("write_file", map[string]any{"path": "harness/done_criteria.yaml", "content": "[]\n"}),
	)}, costs.Turns...)
	dir, _ := run(t, tk, sc)
	b, err := os.ReadFile(filepath.Join(dir, contractFile))
	if err != nil || strings.Contains(string(b), "anything") {
		t.Fatalf("the contract file changed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "harness", "done_criteria.yaml")); err == nil {
		t.Fatal("the done criteria were written")
	}
	tx := transcript(t, dir)
	if !strings.Contains(tx, "E-BOUNDARY-WRITE") || !strings.Contains(tx, "E-HARNESS-DIRECT") {
		t.Fatal("the refusals were not explained")
	}
	// DA-A5: refused and audited.
	audited := countEvents(events(t, dir), func(ev state.Event) bool {
		return ev.Type == state.TRefused && ev.Refused.Code == "E-HARNESS-DIRECT"
	})
	if audited == 0 {
		t.Fatal("the direct harness write was not recorded")
	}
}

// DA-A5: twenty identical tool calls trip the watchdog at the fifth; the
// session ends, the trip is an event and a message to Meta, which decides
// (here: start a fresh worker, which does the work). The host restarts
// nothing on its own.
func TestAdversaryToolLoop(t *testing.T) {
	var loop []script.Turn
	for range 20 {
		loop = append(loop, turn(call("read_file", map[string]any{"path": "inputs/costs.csv"})))
	}
	tk, sc := adversary(t, loop, []script.Turn{turn(call("start_worker", map[string]any{"message": "You were reading the same file over and over. Write costs.md now."}))})
	// The second session gets the honest script.
	sc.Sessions = append([]script.Session{{Role: model.Worker, Match: "cost lines", Instance: "brief/costs", Attempt: 1, Turns: nil}}, sc.Sessions...)
	sc.Sessions = sc.Sessions[1:]
	honest := []script.Turn{writeCosts, declareCosts}
	costs := sessionOf(t, sc, model.Worker, "cost lines")
	costs.Turns = loop
	sc.Sessions = append([]script.Session{{Role: model.Worker, Match: "You were reading", Turns: honest}}, sc.Sessions...)
	dir, res := run(t, tk, &relayScript{sc})
	evs := events(t, dir)
	trips := countEvents(evs, func(ev state.Event) bool {
		return ev.Type == state.TWatchdogTrip && ev.WatchdogTrip.Kind == "tool_loop"
	})
	ended := countEvents(evs, func(ev state.Event) bool {
		return ev.Type == state.TSessionEnded && ev.SessionEnded.Signal == "watchdog"
	})
	decided := countEvents(evs, func(ev state.Event) bool {
		return ev.Type == state.TMetaDecision && ev.MetaDecision.Action == "start_worker"
	})
	if trips != 1 || ended != 1 || decided != 1 {
		t.Fatalf("trips %d, watchdog session ends %d, Meta decisions %d", trips, ended, decided)
	}
	reads := countEvents(evs, func(ev state.Event) bool {
		return ev.Type == state.TToolCallStarted && ev.ToolCallStarted.Instance == "brief/costs" && ev.ToolCallStarted.Tool == "read_file"
	})
	if reads > 6 {
		t.Fatalf("the loop went on for %d calls", reads)
	}
	if res.Stage != state.StageDone {
		t.Fatalf("stage %s %v", res.Stage, res.Questions)
	}
}

// relayScript routes a worker session that starts with a message from Meta
// to the scripted sessions matching that message, so a relay's second
// session can have its own script.
type relayScript struct{ sc *script.Script }

func (r *relayScript) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Role == model.Worker && len(req.Messages) > 0 && strings.Contains(req.Messages[0].Text, "Message for you: ") {
		i := strings.Index(req.Messages[0].Text, "Message for you: ")
		req.Intent = req.Messages[0].Text[i+len("Message for you: "):]
	}
	return r.sc.Generate(ctx, req)
}

// DA-A1: a worker hands off; Meta starts the next session, which begins
// from progress.md (append-only: write_file cannot change it) and its
// message, and finishes. progress.md keeps a marker per session.
func TestRelayHandoff(t *testing.T) {
	first := []script.Turn{
		turn(call("progress", map[string]any{"note": "Plan: read costs.csv, write costs.md with the change of each line."})),
		turn(call("write_file", map[string]any{"path": "work/brief/costs/progress.md", "content": "rewritten"})),
		turn(call("handoff", map[string]any{"summary": "read the inputs", "next": "write costs.md"})),
	}
	tk, sc := adversary(t, first, []script.Turn{turn(call("start_worker", map[string]any{"message": "Continue: write costs.md."}))})
	sc.Sessions = append([]script.Session{{Role: model.Worker, Match: "Continue: write", Turns: []script.Turn{writeCosts, declareCosts}}}, sc.Sessions...)
	dir, res := run(t, tk, &relayScript{sc})
	if res.Stage != state.StageDone {
		t.Fatalf("stage %s %v", res.Stage, res.Questions)
	}
	prog, err := os.ReadFile(filepath.Join(dir, "work/brief/costs", engine.ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	p := string(prog)
	for _, want := range []string{"## Session 1", "Plan: read costs.csv", "Handoff: read the inputs", "## Session 2", "Declared done"} {
		if !strings.Contains(p, want) {
			t.Errorf("progress.md lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "rewritten") || !strings.Contains(transcript(t, dir), "E-APPEND-ONLY") {
		t.Error("progress.md was rewritten")
	}
	// The second session started from progress.md and its message.
	if !strings.Contains(transcript(t, dir), `Plan: read costs.csv`) {
		t.Error("the next session did not see the plan")
	}
}

// DA-A1: a session past its context budget is ended by the host as a
// hand-off; Meta decides what happens next.
func TestContextBudgetHandoff(t *testing.T) {
	tk, sc := adversary(t, []script.Turn{
		{ToolCalls: []script.Call{call("read_file", map[string]any{"path": "inputs/costs.csv"})}, Usage: &model.Usage{Input: 900_000, Output: 10}},
		writeCosts, declareCosts,
	}, []script.Turn{turn(call("start_worker", map[string]any{"message": "Continue: write costs.md."}))})
	sc.Sessions = append([]script.Session{{Role: model.Worker, Match: "Continue: write", Turns: []script.Turn{writeCosts, declareCosts}}}, sc.Sessions...)
	dir, res := run(t, tk, &relayScript{sc})
	if res.Stage != state.StageDone {
		t.Fatalf("stage %s %v", res.Stage, res.Questions)
	}
	if countEvents(events(t, dir), func(ev state.Event) bool {
		return ev.Type == state.TSessionEnded && ev.SessionEnded.Signal == "context_exhausted"
	}) != 1 {
		t.Fatal("the context budget did not end the session")
	}
}

// hang blocks one worker's model calls until the context ends: a silent
// stall.
type hang struct {
	m     model.Model
	match string
}

func (h hang) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Role == model.Worker && strings.Contains(req.Intent, h.match) && req.Turn() == 1 {
		<-ctx.Done()
		return model.Response{}, ctx.Err()
	}
	return h.m.Generate(ctx, req)
}

// DA-A5: a worker that stalls silently trips the watchdog's no-progress
// threshold (an event and a message to Meta); the stuck call ends at the
// model-call deadline, and the run does not stay running forever.
func TestAdversarySilentStall(t *testing.T) {
	tk, sc := loadDemo(t)
	tk.Policy.RetryCount, tk.Policy.Permissions = 0, policy.Permissions{}
	tk.Policy.NoProgress, tk.Policy.ModelTimeout = 80*time.Millisecond, 600*time.Millisecond
	dir := filepath.Join(t.TempDir(), "run")
	e, err := engine.Create(dir, tk, engine.Config{Models: models(hang{m: sc, match: "cost lines"}), Home: home(t), StallTick: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background())
	_ = e.Close()
	if err != nil || res.Stage == state.StageRunning {
		t.Fatalf("%v %s", err, res.Stage)
	}
	if countEvents(events(t, dir), func(ev state.Event) bool {
		return ev.Type == state.TWatchdogTrip && ev.WatchdogTrip.Kind == "no_progress" && ev.WatchdogTrip.Instance == "brief/costs"
	}) == 0 {
		t.Fatal("the stall was not reported")
	}
}

// panics is a model whose answers to one worker crash the process's
// goroutine.
type panics struct {
	m     model.Model
	match string
}

func (p panics) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Role == model.Worker && strings.Contains(req.Intent, p.match) {
		panic("worker process died")
	}
	return p.m.Generate(ctx, req)
}

// A worker that dies mid-session: its attempt fails, its parent decides,
// and the run ends instead of staying "running" forever.
func TestAdversaryWorkerDies(t *testing.T) {
	tk, sc := loadDemo(t)
	tk.Policy.RetryCount, tk.Policy.Permissions = 1, policy.Permissions{}
	_, res := run(t, tk, panics{m: sc, match: "cost lines"})
	if res.Stage != state.StageAwaitingUser || !strings.Contains(strings.Join(res.Questions, " "), "crashed") {
		t.Fatalf("stage %s %v", res.Stage, res.Questions)
	}
}

// DA-B4: a question to the user in framework words is refused so Meta
// rephrases; in autonomous mode the default is taken after the wait and
// the delivery report says so.
func TestUserQuestionPlainAndDefaulted(t *testing.T) {
	ask := func(q string) script.Turn {
		return turn(call("ask_user", map[string]any{"question": q, "silent_failure": "the brief may show the wrong quarter",
			"options": []any{map[string]any{"label": "Q3", "value": "Q3", "default": true}, map[string]any{"label": "Q2", "value": "Q2"}}}))
	}
	tk, sc := adversary(t, []script.Turn{turn(call("blocked", map[string]any{"reason": "which quarter?"}))},
		[]script.Turn{ask("Should the worker's contract cover Q3?"), ask("Which quarter should the cost summary cover?")})
	sc.Sessions = append([]script.Session{{Role: model.Worker, Match: "default was taken", Turns: []script.Turn{writeCosts, declareCosts}}}, sc.Sessions...)
	tk.Policy.AnswerWait = time.Millisecond
	dir, res := run(t, tk, &relayScript{sc})
	if res.Stage != state.StageDone {
		t.Fatalf("stage %s %v", res.Stage, res.Questions)
	}
	tx := transcript(t, dir)
	if !strings.Contains(tx, "E-USER-MESSAGE") {
		t.Fatal("the jargon was not refused")
	}
	rep, _ := os.ReadFile(filepath.Join(dir, "deliverable", "REPORT.md"))
	if !strings.Contains(string(rep), "Which quarter should the cost summary cover?") || !strings.Contains(string(rep), "default") {
		t.Fatalf("the report does not say the default was taken:\n%s", rep)
	}
}

// DA-A2: the Watcher reads windows of the worker's stream and tells Meta
// facts with evidence; an observation without valid evidence is refused;
// the worker never sees it.
func TestWatcher(t *testing.T) {
	tk, sc := adversary(t, []script.Turn{
		turn(call("read_file", map[string]any{"path": "inputs/costs.csv"})),
		turn(call("read_file", map[string]any{"path": "inputs/sales.csv"})),
		turn(call("handoff", map[string]any{"summary": "read", "next": "write"})),
	}, []script.Turn{turn(call("start_worker", map[string]any{"message": "Continue: write costs.md."}))})
	sc.Sessions = append([]script.Session{
		{Role: model.Worker, Match: "Continue: write", Turns: []script.Turn{writeCosts, declareCosts}},
		{Role: model.Watcher, Turns: []script.Turn{
			turn(call("observe", map[string]any{"observations": []any{map[string]any{"note": "reads sales data for a costs task", "evidence": "nowhere.md"}}})),
			turn(call("observe", map[string]any{"observations": []any{map[string]any{"note": "reads sales data for a costs task", "evidence": "streams/brief__costs.log:3"}}})),
		}},
	}, sc.Sessions...)
	tk.Policy.WatchEvery = 2
	dir, res := run(t, tk, &relayScript{sc})
	if res.Stage != state.StageDone {
		t.Fatalf("stage %s %v", res.Stage, res.Questions)
	}
	evs := events(t, dir)
	if countEvents(evs, func(ev state.Event) bool {
		return ev.Type == state.TObservation && ev.Observation.Evidence == "streams/brief__costs.log:3"
	}) != 1 {
		t.Fatal("no observation with its evidence")
	}
	tx := transcript(t, dir)
	if !strings.Contains(tx, "E-EVIDENCE") {
		t.Error("an observation without evidence was not refused")
	}
	// Meta saw it; no worker request carries it.
	for _, line := range strings.Split(tx, "\n") {
		if strings.Contains(line, `"role":"worker"`) && strings.Contains(line, "reads sales data") && !strings.Contains(line, `"role":"watcher"`) {
			t.Fatal("the observation reached the worker")
		}
	}
	if !strings.Contains(tx, "the Watcher saw: reads sales data") {
		t.Error("Meta was not told")
	}
}

// DA-B4, DC4: in interactive mode the person answers on the terminal —
// Meta's question (plain words, options, a default) and the escalation of
// a request beyond the parent's contract, which the person settles
// without widening anything.
func TestInteractiveTerminal(t *testing.T) {
	tk, sc := adversary(t, []script.Turn{
		turn(call("request_help", map[string]any{"need": "tools", "items": []any{"shell"}, "reason": "a macro would be quicker"})),
		turn(call("blocked", map[string]any{"reason": "which quarter?"})),
	}, []script.Turn{turn(call("ask_user", map[string]any{"question": "Which quarter should the cost summary cover?", "silent_failure": "the summary may show the wrong quarter",
		"options": []any{map[string]any{"label": "Third quarter", "value": "Q3", "default": true}, map[string]any{"label": "Second quarter", "value": "Q2"}}}))})
	sc.Sessions = append([]script.Session{
		{Role: model.Worker, Match: "The person answered", Turns: []script.Turn{writeCosts, declareCosts}},
		{Role: model.Meta, Offers: "answer_help", Turns: []script.Turn{turn(call("answer_help", map[string]any{"advice": "work from costs.csv by hand"}))}},
	}, sc.Sessions...)
	tk.Policy.Mode = policy.Interactive
	var out strings.Builder
	dir := filepath.Join(t.TempDir(), "run")
	e, err := engine.Create(dir, tk, engine.Config{Models: models(&relayScript{sc}), Home: home(t), In: strings.NewReader("\n2\n"), Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background())
	_ = e.Close()
	if err != nil || res.Stage != state.StageDone {
		t.Fatalf("%v %s %v", err, res.Stage, res.Questions)
	}
	if !strings.Contains(out.String(), "Which quarter should the cost summary cover?") || !strings.Contains(out.String(), "asks for more than it was given") {
		t.Fatalf("terminal:\n%s", out.String())
	}
	evs := events(t, dir)
	if countEvents(evs, func(ev state.Event) bool { return ev.Type == state.TUserMessage && ev.UserMessage.Answer == "Q2" }) != 1 {
		t.Error("the person's answer was not recorded")
	}
	if countEvents(evs, func(ev state.Event) bool {
		return ev.Type == state.THelpDecided && ev.HelpDecided.By == "user" && !ev.HelpDecided.Approved
	}) != 1 {
		t.Error("the escalation did not reach the person, or widened the contract")
	}
}

// DA-A5: the watchdog's timers cover reviewer sessions and Meta turns too;
// a trip is an event, and the review still completes (nothing is killed).
func TestWatchdogTimers(t *testing.T) {
	tk, sc := loadDemo(t)
	tk.Policy.ReviewerSession, tk.Policy.MetaTurn = 20*time.Millisecond, 20*time.Millisecond
	dir := filepath.Join(t.TempDir(), "run")
	e, err := engine.Create(dir, tk, engine.Config{Models: models(sc.WithLatency(40 * time.Millisecond)), Home: home(t), StallTick: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background())
	_ = e.Close()
	if err != nil || res.Stage != state.StageDone {
		t.Fatalf("%v %s", err, res.Stage)
	}
	evs := events(t, dir)
	for _, kind := range []string{"reviewer_session", "meta_turn"} {
		if countEvents(evs, func(ev state.Event) bool { return ev.Type == state.TWatchdogTrip && ev.WatchdogTrip.Kind == kind }) == 0 {
			t.Errorf("no %s trip", kind)
		}
	}
}
