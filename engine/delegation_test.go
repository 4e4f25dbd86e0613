package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/engine"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/script"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/state"
)

// sessionOf returns the script session of a role whose match is m.
func sessionOf(t *testing.T, sc *script.Script, role model.Role, m string) *script.Session {
	t.Helper()
	for i := range sc.Sessions {
		if sc.Sessions[i].Role == role && sc.Sessions[i].Match == m && sc.Sessions[i].Attempt == 0 {
			return &sc.Sessions[i]
		}
	}
	t.Fatalf("no %s session %q", role, m)
	return nil
}

func countEvents(evs []state.Event, keep func(state.Event) bool) int {
	n := 0
	for _, ev := range evs {
		if keep(ev) {
			n++
		}
	}
	return n
}

// DC4: a child asks for help three times — once within its parent's
// contract (approved by the rules), twice beyond it (escalated to Meta,
// which can only advise) — and is refused the fourth time by the host
// without anyone being asked. Every round is in the journal.
func TestNegotiationRounds(t *testing.T) {
	tk, sc := loadDemo(t)
	costs := sessionOf(t, sc, model.Worker, "cost lines")
	ask := func(args map[string]any) script.Turn {
		return script.Turn{ToolCalls: []script.Call{{Name: "request_help", Args: args}}}
	}
	costs.Turns = append([]script.Turn{
		ask(map[string]any{"need": "budget", "tokens": 1000, "reason": "the cost file needs a second look"}),
		ask(map[string]any{"need": "tools", "items": []any{"shell"}, "reason": "I want to run a spreadsheet macro"}),
		ask(map[string]any{"need": "tools", "items": []any{"shell"}, "reason": "still want the macro"}),
		ask(map[string]any{"need": "tools", "items": []any{"shell"}, "reason": "one more time"}),
	}, costs.Turns...)
	sc.Sessions = append([]script.Session{{Role: model.Meta, Offers: "answer_help", Turns: []script.Turn{{ToolCalls: []script.Call{{
		Name: "answer_help", Args: map[string]any{"advice": "compute the changes by hand from costs.csv; no macro is needed"}}}}}}}, sc.Sessions...)
	dir, res := run(t, tk, sc)
	if res.Stage != state.StageDone {
		t.Fatalf("stage %s %v", res.Stage, res.Questions)
	}
	evs := events(t, dir)
	var decided []*state.HelpDecided
	for _, ev := range evs {
		if ev.Type == state.THelpDecided {
			decided = append(decided, ev.HelpDecided)
		}
	}
	if n := countEvents(evs, func(ev state.Event) bool { return ev.Type == state.THelpRequested }); n != 3 || len(decided) != 3 {
		t.Fatalf("%d requests and %d decisions recorded, want 3 and 3", n, len(decided))
	}
	if !decided[0].Approved || decided[0].By != "rules" || decided[0].Revision == nil {
		t.Errorf("round 1: %+v", decided[0])
	}
	for _, d := range decided[1:] {
		if d.Approved || d.By != "meta" || !strings.Contains(d.Note, "by hand") {
			t.Errorf("round %d: %+v", d.Round, d)
		}
	}
	if n := countEvents(evs, func(ev state.Event) bool { return ev.Type == state.TRefused && ev.Refused.Code == "E-HELP-ROUNDS" }); n != 1 {
		t.Errorf("%d fourth-round refusals", n)
	}
	tx, _ := os.ReadFile(filepath.Join(dir, engine.TranscriptsFile))
	if !strings.Contains(string(tx), "used your 3 requests") {
		t.Error("the child was not told its requests are spent")
	}
	st, _ := engine.Fold(context.Background(), dir, true)
	for _, tl := range st.Inst["brief/costs"].Packet.Contract.Tools() {
		if tl == "shell" {
			t.Fatal("a tool beyond the parent was granted")
		}
	}
}

// DC5, fails closed: a reviewer that submits malformed verdicts, and one
// that never submits one, leave checks-passing work NOT accepted.
func TestReviewerFailsClosed(t *testing.T) {
	for name, turns := range map[string][]script.Turn{
		"malformed verdict": {
			{ToolCalls: []script.Call{{Name: "submit_verdict", Args: map[string]any{"verdict": "pass"}}}},
			{ToolCalls: []script.Call{{Name: "submit_verdict", Args: map[string]any{"verdict": "great", "issues": []any{}, "summary": "x"}}}},
			{ToolCalls: []script.Call{{Name: "submit_verdict", ArgsJSON: `{"verdict": "pass", `}}},
			{ToolCalls: []script.Call{{Name: "submit_verdict", Args: map[string]any{"verdict": "pass"}}}},
		},
		"never submits": {{Text: "Looks fine to me."}, {Text: "Approved."}, {Text: "LGTM"}, {Text: "pass"}},
		"crashes":       nil, // the script has no turn: every review errors
	} {
		t.Run(name, func(t *testing.T) {
			tk, sc := loadDemo(t)
			tk.Policy.RetryCount, tk.Policy.Permissions = 0, policy.Permissions{}
			for i := range sc.Sessions {
				if sc.Sessions[i].Offers == "submit_verdict" {
					if turns == nil {
						sc.Sessions[i].Offers = "no_such_tool" // no session answers: the model call errors
					} else {
						sc.Sessions[i].Turns = turns
					}
				}
			}
			dir, res := run(t, tk, sc)
			if res.Stage != state.StageAwaitingUser {
				t.Fatalf("stage %s", res.Stage)
			}
			st, err := engine.Fold(context.Background(), dir, true)
			if err != nil {
				t.Fatal(err)
			}
			a := st.Attempt["brief/costs#1"]
			if a == nil || a.Evidence == nil || !contract.Sat(st.Contract[st.Inst["brief/costs"].Contract], *a.Evidence) {
				t.Fatalf("costs attempt: %+v", a)
			}
			if a.Status == state.AttemptPassed || a.Gates.Passed() || !strings.HasPrefix(a.Gates.Review, "not accepted") {
				t.Fatalf("a failed review let work through: %s %q", a.Status, a.Gates.Review)
			}
			for _, ev := range events(t, dir) {
				if ev.Type == state.TVerdict && ev.Verdict.Verdict == policy.Accept {
					t.Fatalf("%s accepted without a passed review", ev.Verdict.Child)
				}
			}
		})
	}
}

// wideTask is a root that delegates n leaf contracts of the given agent
// kind, each leaf writing one file in two turns.
func wideTask(n int, agent string) (engine.Task, *script.Script) {
	pol := policy.Default()
	pol.Pool, pol.MaxConcurrent, pol.RetryCount = 16, 4, 0
	pol.Permissions = policy.Permissions{}
	var checks []contract.Check
	var tasks, cmap []any
	sc := &script.Script{Version: 1}
	for i := range n {
		id := fmt.Sprintf("t%02d", i)
		checks = append(checks, contract.Check{Kind: contract.FileExists, Path: id + "/out.md"})
		task := map[string]any{"id": id, "intent": "wide leaf " + id, "checks": []any{map[string]any{"kind": "file_exists", "path": "out.md"}}}
		if agent != "" {
			task["agent"] = agent
		}
		tasks = append(tasks, task)
		cmap = append(cmap, map[string]any{"parent_check": i + 1, "task": id, "child_check": 1})
		sc.Sessions = append(sc.Sessions, script.Session{Role: model.Worker, Instance: "wide/" + id, Turns: []script.Turn{
			{ToolCalls: []script.Call{{Name: "write_file", Args: map[string]any{"path": "work/wide/" + id + "/out.md", "content": "done\n"}}}},
			{ToolCalls: []script.Call{{Name: "declare_done", Args: map[string]any{"summary": "done", "items": []any{map[string]any{"kind": "check", "index": 1, "pass": true, "quote": "done",
				"source": map[string]any{"file": "work/wide/" + id + "/out.md", "line": 1, "origin": "computed"}}}}}}},
		}})
	}
	sc.Sessions = append(sc.Sessions,
		script.Session{Role: model.Meta, Instance: "wide", Turns: []script.Turn{{ToolCalls: []script.Call{{Name: "submit_plan", Args: map[string]any{"tasks": tasks, "check_map": cmap}}}}}},
		script.Session{Role: model.Reviewer, Offers: "submit_verdict", Turns: []script.Turn{{ToolCalls: []script.Call{{Name: "submit_verdict", Args: map[string]any{"verdict": "pass", "issues": []any{}, "summary": "ok"}}}}}},
	)
	return engine.Task{Title: "wide", Policy: pol, Model: "script:test", Contracts: []engine.TopContract{{Name: "wide", Contract: contract.New("wide root", checks)}}}, sc
}

// DC6 under load: many children spawned as fast as the engine can; each
// cap holds exactly — at most max_concurrent children at once, exactly the
// daily limit of spawns of a kind (counted in the fractal home's ledger,
// across runs), and no more tokens promised to children than the parent
// has. A refused spawn is an event and a question, never a crash.
func TestCapsUnderLoad(t *testing.T) {
	h := home(t)
	if err := os.MkdirAll(filepath.Join(h, "blueprints"), 0o755); err != nil {
		t.Fatal(err)
	}
	bp := "id: burst\ncapabilities: {inherit: full}\nbudget: {max_tokens: 100000, max_concurrent: 1, daily_limit: 12}\nconstraints: {no_spawn: true}\nscope: {read: [inputs, work], write: [work]}\nsop: []\n"
	if err := os.WriteFile(filepath.Join(h, "blueprints", "burst.yaml"), []byte(bp), 0o644); err != nil {
		t.Fatal(err)
	}
	tk, sc := wideTask(30, "burst")
	dir := filepath.Join(t.TempDir(), "run")
	e, err := engine.Create(dir, tk, engine.Config{Models: models(sc.WithLatency(2 * time.Millisecond)), Home: h})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background())
	_ = e.Close()
	if err != nil || res.Stage != state.StageAwaitingUser || !strings.Contains(strings.Join(res.Questions, " "), "spawns today") {
		t.Fatalf("%v %s %v", err, res.Stage, res.Questions)
	}
	running, peak, spawns := 0, 0, 0
	st := state.New()
	for _, ev := range events(t, dir) {
		if err := st.Step(ev); err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case state.TDelegated:
			if ev.Delegated.Parent == "wide" {
				running++
				spawns++
				// Promised tokens never exceed the parent's budget.
				root := st.Inst["wide"]
				if promised := root.Packet.Contract.Budget.MaxTokens - st.FreeTokens("wide"); promised > root.Packet.Contract.Budget.MaxTokens {
					t.Fatalf("root promised %d of %d tokens", promised, root.Packet.Contract.Budget.MaxTokens)
				}
			}
		case state.TEvidenceSubmitted, state.TAttemptEnded:
			if st.Inst[instanceOf(ev)].Parent == "wide" {
				running--
			}
		}
		peak = max(peak, running)
	}
	if peak != 4 {
		t.Errorf("peak %d children at once, want exactly the cap of 4", peak)
	}
	if spawns != 12 {
		t.Errorf("%d spawns of burst, want exactly the daily limit of 12", spawns)
	}
	led, _ := os.ReadFile(filepath.Join(h, "ledger", time.Now().UTC().Format("2006-01-02")+".log"))
	if strings.Count(string(led), "burst\n") != 12 {
		t.Errorf("ledger: %s", led)
	}
	// The ledger holds across runs: a second run today cannot spawn any.
	tk2, sc2 := wideTask(3, "burst")
	e2, err := engine.Create(filepath.Join(t.TempDir(), "run2"), tk2, engine.Config{Models: models(sc2), Home: h})
	if err != nil {
		t.Fatal(err)
	}
	res2, err := e2.Run(context.Background())
	_ = e2.Close()
	if err != nil || res2.Stage != state.StageAwaitingUser {
		t.Fatalf("second run: %v %s", err, res2.Stage)
	}
}

func instanceOf(ev state.Event) string {
	if ev.EvidenceSubmitted != nil {
		return ev.EvidenceSubmitted.Instance
	}
	return ev.AttemptEnded.Instance
}

// slowFor delays the answers to one instance's worker.
type slowFor struct {
	m     model.Model
	match string
	delay time.Duration
}

func (s slowFor) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Role == model.Worker && strings.Contains(req.Intent, s.match) {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return model.Response{}, ctx.Err()
		}
	}
	return s.m.Generate(ctx, req)
}

// DC7: a child past its timeout is stopped and recorded as a timeout for
// its parent to decide on; a child with no progress for its stall
// threshold raises a stall alert and is NOT stopped for it.
func TestTimeoutAndStall(t *testing.T) {
	h := home(t)
	if err := os.MkdirAll(filepath.Join(h, "blueprints"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(h, "blueprints", name+".yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("hasty", "id: hasty\ncapabilities: {inherit: full}\nbudget: {max_tokens: 100000, max_concurrent: 1, daily_limit: 50}\nconstraints: {timeout_ms: 300, stall_threshold_ms: 100}\nscope: {read: [inputs, work], write: [work]}\nsop: []\n")
	write("patient", "id: patient\ncapabilities: {inherit: full}\nbudget: {max_tokens: 100000, max_concurrent: 1, daily_limit: 50}\nconstraints: {timeout_ms: 60000, stall_threshold_ms: 100}\nscope: {read: [inputs, work], write: [work]}\nsop: []\n")
	tk, sc := loadDemo(t)
	tk.Policy.RetryCount, tk.Policy.Permissions = 1, policy.Permissions{}
	plan := sessionOf(t, sc, model.Meta, "one-page brief").Turns[1].ToolCalls[0].Args
	tasks := plan["tasks"].([]any)
	tasks[1].(map[string]any)["agent"] = "hasty"   // costs: 3 slow turns, 300 ms to live
	tasks[2].(map[string]any)["agent"] = "patient" // customers: slow but within its time
	m := slowFor{m: slowFor{m: sc, match: "cost lines", delay: 200 * time.Millisecond}, match: "customer interviews", delay: 150 * time.Millisecond}
	dir := filepath.Join(t.TempDir(), "run")
	e, err := engine.Create(dir, tk, engine.Config{Models: models(m), Home: h, StallTick: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background())
	_ = e.Close()
	if err != nil || res.Stage != state.StageAwaitingUser {
		t.Fatalf("%v %s %v", err, res.Stage, res.Questions)
	}
	evs := events(t, dir)
	timeouts := countEvents(evs, func(ev state.Event) bool {
		return ev.Type == state.TAttemptEnded && ev.AttemptEnded.Status == state.AttemptTimeout && strings.HasPrefix(ev.AttemptEnded.Instance, "brief/costs")
	})
	if timeouts != 2 {
		t.Errorf("%d timeouts of costs, want 2 (the attempt and its one retry)", timeouts)
	}
	if n := countEvents(evs, func(ev state.Event) bool {
		return ev.Type == state.TStallAlert && ev.StallAlert.Instance == "brief/customers"
	}); n == 0 {
		t.Error("no stall alert for the slow customers worker")
	}
	st, _ := engine.Fold(context.Background(), dir, true)
	if st.Attempt["brief/customers#1"].Status != state.AttemptPassed {
		t.Errorf("a stall alert stopped work: %s", st.Attempt["brief/customers#1"].Status)
	}
	if !strings.Contains(strings.Join(res.Questions, " "), "deadline") {
		t.Errorf("questions do not say the deadline passed: %v", res.Questions)
	}
}

// DC8: a run stopped in the middle of its delegations is restored with
// every live contract's remaining budget and deadline exactly as they
// were, and finishes.
func TestRestartRestoresBudgetsAndDeadlines(t *testing.T) {
	h := home(t)
	tk, sc := loadDemo(t)
	dir := filepath.Join(t.TempDir(), "run")
	e, err := engine.Create(dir, tk, engine.Config{Models: models(sc.WithLatency(25 * time.Millisecond)), Home: h})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	go func() {
		for {
			time.Sleep(5 * time.Millisecond)
			if st := e.State(); st.Inst["brief/costs"] != nil {
				once.Do(cancel)
				return
			}
		}
	}()
	if _, err := e.Run(ctx); err == nil {
		t.Fatal("the stopped run reported success")
	}
	before := e.State()
	_ = e.Close()
	e2, err := engine.Open(dir, engine.Config{Models: models(sc), Home: h})
	if err != nil {
		t.Fatal(err)
	}
	after := e2.State()
	live := 0
	for id, in := range before.Inst {
		a := before.CurrentAttempt(id)
		if id == state.Session || a == nil || a.Status != state.AttemptRunning {
			continue
		}
		live++
		got := after.Inst[id]
		b1, _ := json.Marshal(in.Packet)
		b2, _ := json.Marshal(got.Packet)
		if string(b1) != string(b2) {
			t.Errorf("%s: packet changed across the restart:\n%s\n%s", id, b1, b2)
		}
		if before.FreeTokens(id) != after.FreeTokens(id) || in.TreeTokens != got.TreeTokens {
			t.Errorf("%s: budget changed: free %d → %d, used %d → %d", id, before.FreeTokens(id), after.FreeTokens(id), in.TreeTokens, got.TreeTokens)
		}
	}
	if live == 0 {
		t.Fatal("the run was not stopped mid-delegation")
	}
	res, err := e2.Run(context.Background())
	_ = e2.Close()
	if err != nil || res.Stage != state.StageDone {
		t.Fatalf("%v %s", err, res.Stage)
	}
	assertAcceptedOnce(t, dir)
}
