package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fractal-harness/fractal/demo"
	"github.com/fractal-harness/fractal/engine"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/script"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/task"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// loadDemo returns the bundled demo task and script.
func loadDemo(t *testing.T) (engine.Task, *script.Script) {
	t.Helper()
	data, err := fs.ReadFile(demo.Files, "task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := task.Parse(data, "task.yaml", demo.Files, "")
	if err != nil {
		t.Fatal(err)
	}
	sdata, err := fs.ReadFile(demo.Files, "script.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := script.Parse(sdata, "script.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec.Task.Model = "script:test"
	return spec.Task, sc
}

// home is a fresh fractal home, so the daily ledger starts empty.
func home(t *testing.T) string { return filepath.Join(t.TempDir(), "home") }

func models(m model.Model) func(model.Role) model.Model {
	return func(model.Role) model.Model { return m }
}

// run creates and runs a task to its end in a temp folder.
func run(t *testing.T, tk engine.Task, m model.Model) (string, engine.Result) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	e, err := engine.Create(dir, tk, engine.Config{Models: models(m), Home: home(t)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background())
	if cerr := e.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir, res
}

// events reads a run's journal.
func events(t *testing.T, dir string) []state.Event {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, engine.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []state.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev state.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// F-D4, F-D5, F-D6, F-D8, F-D9, F-A1: the demo decomposes into four child
// contracts, one is rejected once and retried, the last starts only after
// its predecessors are accepted, the Reviewer grades the root's rubric, and
// the deliverable lands in the run folder.
func TestDemoRun(t *testing.T) {
	tk, sc := loadDemo(t)
	dir, res := run(t, tk, sc)
	if res.Stage != state.StageDone {
		t.Fatalf("stage %s: %v", res.Stage, res.Questions)
	}
	if len(res.Deliverable) != 2 || res.Deliverable[0] != "deliverable/brief.md" || res.Deliverable[1] != "deliverable/REPORT.md" {
		t.Fatalf("deliverable %v", res.Deliverable)
	}
	brief, err := os.ReadFile(filepath.Join(dir, "deliverable", "brief.md"))
	if err != nil || !strings.Contains(string(brief), "## Recommendation") {
		t.Fatalf("deliverable: %v %q", err, brief)
	}
	st, err := engine.Fold(context.Background(), dir, true)
	if err != nil {
		t.Fatal(err)
	}
	root := st.Inst["brief"]
	if root == nil || len(root.Plan.Tasks) < 3 {
		t.Fatal("the root did not decompose into at least three children")
	}
	sales := st.Inst["brief"].Tasks["sales"]
	if len(sales.Attempts) != 2 || st.Attempt[sales.Attempts[0]].Status != state.AttemptFailed || st.Attempt[sales.Attempts[1]].Status != state.AttemptPassed {
		t.Fatalf("sales attempts: %v", sales.Attempts)
	}
	// F-D8: every attempt has a checkpoint; every task is accepted.
	for _, a := range st.Attempt {
		if a.Checkpoint == "" && st.Inst[a.Owner].Plan == nil {
			t.Errorf("attempt %s has no checkpoint", a.ID)
		}
	}
	evs := events(t, dir)
	firstSubmit, assemble, accepted := -1, -1, map[string]int{}
	parallel := 0
	for i, ev := range evs {
		switch ev.Type {
		case state.TEvidenceSubmitted:
			if firstSubmit < 0 {
				firstSubmit = i
			}
		case state.TDelegated:
			if ev.Delegated.Parent == "brief" && firstSubmit < 0 {
				parallel++
			}
			if ev.Delegated.Task == "assemble" {
				assemble = i
			}
		case state.TVerdict:
			if ev.Verdict.Verdict == policy.Accept {
				accepted[ev.Verdict.Task]++
			}
		}
	}
	// F-D9 rule 5: the three independent analyses run side by side.
	if parallel != 3 {
		t.Errorf("%d siblings started before the first submission, want 3", parallel)
	}
	// F-D9 rule 1: assemble starts after all three are accepted.
	for _, dep := range []string{"sales", "costs", "customers"} {
		if accepted[dep] != 1 {
			t.Errorf("%s accepted %d times", dep, accepted[dep])
		}
	}
	for i, ev := range evs[:assemble] {
		_ = i
		if ev.Type == state.TVerdict && ev.Verdict.Task == "assemble" {
			t.Fatal("assemble judged before it started")
		}
	}
	// The Reviewer graded the rubric with a rationale (F-T4 rubric).
	var rubric *state.EvidenceSubmitted
	for _, ev := range evs {
		if ev.Type == state.TEvidenceSubmitted && ev.EvidenceSubmitted.Instance == "brief" {
			rubric = ev.EvidenceSubmitted
		}
	}
	if rubric == nil || rubric.Evidence.Results[4].Rationale == "" || !rubric.Evidence.Results[4].Pass {
		t.Fatalf("root evidence: %+v", rubric)
	}
	if st.RoleUsage[model.Reviewer].Total() == 0 || st.RoleUsage[model.Meta].Total() == 0 || st.RoleUsage[model.Worker].Total() == 0 {
		t.Errorf("usage by role: %+v", st.RoleUsage)
	}
}

// concurrency records the most model calls in flight at once.
type concurrency struct {
	m         model.Model
	cur, peak atomic.Int64
}

func (c *concurrency) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	n := c.cur.Add(1)
	for {
		p := c.peak.Load()
		if n <= p || c.peak.CompareAndSwap(p, n) {
			break
		}
	}
	defer c.cur.Add(-1)
	return c.m.Generate(ctx, req)
}

// F-D9 rule 5: the pool bounds model calls in flight; a pool of 1 is serial.
func TestPoolLimit(t *testing.T) {
	for _, pool := range []int{1, 2} {
		tk, sc := loadDemo(t)
		tk.Policy.Pool = pool
		c := &concurrency{m: sc.WithLatency(20 * time.Millisecond)}
		_, res := run(t, tk, c)
		if res.Stage != state.StageDone {
			t.Fatalf("pool %d: %s", pool, res.Stage)
		}
		if got := c.peak.Load(); got > int64(pool) || (pool > 1 && got < 2) {
			t.Errorf("pool %d: peak %d calls in flight", pool, got)
		}
	}
}

// I-Boundary, F-A3: a worker that writes into a sibling's folder, through
// "..", or through a symlink out of its folder is refused; the refusals are
// events, the model is told, and nothing lands outside.
func TestBoundaryRefusals(t *testing.T) {
	h := home(t)
	tk, sc := loadDemo(t)
	// The costs worker's first attempt tries three escapes, then does its
	// work; its second attempt just does the work.
	var at int
	for i := range sc.Sessions {
		if sc.Sessions[i].Match == "cost lines" {
			at = i
		}
	}
	escape := script.Turn{ToolCalls: []script.Call{
		{Name: "write_file", Args: map[string]any{"path": "work/brief/sales/sales.md", "content": "overwritten"}},
		{Name: "write_file", Args: map[string]any{"path": "work/brief/costs/../../../outside.md", "content": "x"}},
		{Name: "write_file", Args: map[string]any{"path": "work/brief/costs/link/x.md", "content": "x"}},
		{Name: "list_dir", Args: map[string]any{"path": "work/brief/costs"}},
	}}
	first := sc.Sessions[at]
	first.Attempt = 1
	first.Turns = append([]script.Turn{escape}, first.Turns...)
	sc.Sessions = append(sc.Sessions[:at], append([]script.Session{first}, sc.Sessions[at:]...)...)
	dir := filepath.Join(t.TempDir(), "run")
	e, err := engine.Create(dir, tk, engine.Config{Models: models(sc), Home: h})
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "work/brief/costs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "work/brief/costs/link")); err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background())
	_ = e.Close()
	if err != nil || res.Stage != state.StageDone {
		t.Fatalf("%v %s", err, res.Stage)
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 0 || exists(filepath.Join(filepath.Dir(dir), "outside.md")) {
		t.Fatal("a write escaped")
	}
	codes := map[string]int{}
	for _, ev := range events(t, dir) {
		if ev.Type == state.TRefused {
			codes[ev.Refused.Code]++
		}
	}
	if codes["E-BOUNDARY-WRITE"] < 2 {
		t.Errorf("refusals recorded: %v", codes)
	}
	tx, err := os.ReadFile(filepath.Join(dir, engine.TranscriptsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"E-BOUNDARY-WRITE", "E-PATH"} {
		if !strings.Contains(string(tx), want) {
			t.Errorf("the model was not told %s", want)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "work/brief/sales/sales.md"))
	if string(b) == "overwritten" {
		t.Fatal("a sibling's file was overwritten")
	}
	// DC5: the attempt that tried to escape was not accepted, though its
	// checks passed; the rule checks said why.
	st, err := engine.Fold(context.Background(), dir, true)
	if err != nil {
		t.Fatal(err)
	}
	a1 := st.Attempt["brief/costs#1"]
	if a1.Status != state.AttemptFailed || len(a1.Gates.Rules) == 0 || !strings.Contains(a1.Gates.Rules[0], "outside its folder") {
		t.Fatalf("escaping attempt: %s %+v", a1.Status, a1.Gates)
	}
	if st.Attempt["brief/costs#2"].Status != state.AttemptPassed {
		t.Fatal("the honest second attempt was not accepted")
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// A script that runs out, and arguments that are not JSON, are clear
// errors in the run — the attempt fails, the policy decides, and the run
// ends waiting for the user — never a panic.
func TestBrokenModelOutput(t *testing.T) {
	tk, sc := loadDemo(t)
	tk.Policy.RetryCount, tk.Policy.Permissions = 1, policy.Permissions{}
	for i := range sc.Sessions {
		s := &sc.Sessions[i]
		if s.Match == "cost lines" {
			// Malformed arguments four times: the corrections run out.
			bad := script.Turn{ToolCalls: []script.Call{{Name: "declare_done", ArgsJSON: `{"summary": "x", `}}}
			s.Turns = []script.Turn{bad, bad, bad, bad}
		}
		if s.Match == "customer interviews" {
			s.Turns = s.Turns[:1] // exhausted after one turn
		}
	}
	_, res := run(t, tk, sc)
	if res.Stage != state.StageAwaitingUser || len(res.Questions) == 0 {
		t.Fatalf("stage %s questions %v", res.Stage, res.Questions)
	}
	all := strings.Join(res.Questions, "\n")
	for _, want := range []string{"exhausted", "declare_done"} {
		if !strings.Contains(all, want) {
			t.Errorf("questions do not explain %q: %s", want, all)
		}
	}
}

// F-D6: with retries spent and reassignment not permitted, r replans: Meta
// plans again and the new plan's children do the work.
func TestReplan(t *testing.T) {
	tk, sc := loadDemo(t)
	tk.Policy.RetryCount, tk.Policy.Permissions = 0, policy.Permissions{Replan: true}
	_, res := run(t, tk, sc)
	if res.Stage != state.StageDone {
		t.Fatalf("stage %s %v", res.Stage, res.Questions)
	}
}

// F-D6: with retries spent, r reassigns the task to a fresh instance.
func TestReassign(t *testing.T) {
	tk, sc := loadDemo(t)
	tk.Policy.RetryCount, tk.Policy.Permissions = 0, policy.Permissions{Reassign: true}
	dir, res := run(t, tk, sc)
	if res.Stage != state.StageDone {
		t.Fatalf("stage %s %v", res.Stage, res.Questions)
	}
	st, err := engine.Fold(context.Background(), dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Inst["brief/sales"].Retired || st.Inst["brief/sales@2"] == nil {
		t.Fatal("the rejected task was not reassigned to a fresh instance")
	}
}

// DA-A4: a second process cannot open a live run; a finished run reopens
// and reports done without doing anything.
func TestRunLockAndReopen(t *testing.T) {
	h := home(t)
	tk, sc := loadDemo(t)
	dir := filepath.Join(t.TempDir(), "run")
	e, err := engine.Create(dir, tk, engine.Config{Models: models(sc), Home: h})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Open(dir, engine.Config{Models: models(sc), Home: h}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second open: %v", err)
	}
	if _, err := engine.Create(dir, tk, engine.Config{Models: models(sc), Home: h}); err == nil {
		t.Fatal("Create over an existing run succeeded")
	}
	if _, err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = e.Close()
	n := len(events(t, dir))
	e2, err := engine.Open(dir, engine.Config{Models: models(sc), Home: h})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e2.Run(context.Background())
	_ = e2.Close()
	if err != nil || res.Stage != state.StageDone {
		t.Fatalf("%v %s", err, res.Stage)
	}
	if m := len(events(t, dir)); m != n {
		t.Fatalf("reopening a done run appended %d events", m-n)
	}
}

// A run stopped by its context (Ctrl-C) resumes to the same result, and
// accepts no task twice.
func TestCancelAndResume(t *testing.T) {
	h := home(t)
	tk, sc := loadDemo(t)
	slow := sc.WithLatency(30 * time.Millisecond)
	dir := filepath.Join(t.TempDir(), "run")
	e, err := engine.Create(dir, tk, engine.Config{Models: models(slow), Home: h})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if _, err := e.Run(ctx); err == nil {
		t.Fatal("a cancelled run reported success")
	}
	_ = e.Close()
	e2, err := engine.Open(dir, engine.Config{Models: models(sc), Home: h})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e2.Run(context.Background())
	_ = e2.Close()
	if err != nil || res.Stage != state.StageDone {
		t.Fatalf("%v %s", err, res.Stage)
	}
	assertAcceptedOnce(t, dir)
}

// assertAcceptedOnce: no task of any plan is accepted twice, and every
// top-level task is accepted.
func assertAcceptedOnce(t *testing.T, dir string) {
	t.Helper()
	if _, err := engine.Fold(context.Background(), dir, true); err != nil {
		t.Fatalf("verify: %v", err)
	}
	type key struct{ by, task, plan string }
	plan := map[string]int{}
	seen := map[key]int{}
	for _, ev := range events(t, dir) {
		switch ev.Type {
		case state.TPlanRecorded:
			plan[ev.PlanRecorded.Instance]++
		case state.TVerdict:
			if ev.Verdict.Verdict == policy.Accept {
				k := key{ev.Verdict.By, ev.Verdict.Task, string(rune('0' + plan[ev.Verdict.By]))}
				seen[k]++
				if seen[k] > 1 {
					t.Errorf("task %s of %s accepted twice", k.task, k.by)
				}
			}
		}
	}
}

// Hard budgets (issue #3): a run whose token budget cannot cover the next
// call's worst case refuses the call with a recorded E-BUDGET, never
// exceeds the budget, and stops for the user instead of retrying.
func TestBudgetRefusal(t *testing.T) {
	tk, sc := loadDemo(t)
	tk.Policy.Budget.Tokens = 14_000
	dir, res := run(t, tk, sc)
	if res.Stage != state.StageAwaitingUser {
		t.Fatalf("stage %s", res.Stage)
	}
	if !strings.Contains(strings.Join(res.Questions, " "), "E-BUDGET") {
		t.Fatalf("questions %v", res.Questions)
	}
	st, err := engine.Fold(context.Background(), dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if int64(st.Usage.Total()) > tk.Policy.Budget.Tokens || st.Reserved != 0 {
		t.Fatalf("used %d, reserved %d of %d", st.Usage.Total(), st.Reserved, tk.Policy.Budget.Tokens)
	}
	refused := 0
	for _, ev := range events(t, dir) {
		if ev.Type == state.TRefused && ev.Refused.Code == "E-BUDGET" {
			refused++
		}
		if ev.Type == state.TDecision && ev.Decision.Action == policy.Retry && strings.Contains(ev.Decision.Reason, "budget") {
			t.Fatal("retried a task the budget cannot pay for")
		}
	}
	if refused == 0 {
		t.Fatal("no E-BUDGET refusal recorded")
	}
}

// Issue #3, bad model output: an unknown tool, an empty answer and an
// answer cut at max_tokens each become a structured error the model sees
// on its next turn; nothing of a cut answer runs; the work then goes on.
func TestBadModelOutputCorrected(t *testing.T) {
	tk, sc := loadDemo(t)
	for i := range sc.Sessions {
		s := &sc.Sessions[i]
		if s.Match != "cost lines" {
			continue
		}
		bad := []script.Turn{
			{ToolCalls: []script.Call{{Name: "summon_data", Args: map[string]any{"x": 1}}}},
			{Text: ""},
			{StopReason: "max_tokens", ToolCalls: []script.Call{{Name: "write_file", Args: map[string]any{"path": "work/brief/costs/cut.md", "content": "half"}}}},
		}
		s.Turns = append(bad, s.Turns...)
	}
	dir, res := run(t, tk, sc)
	if res.Stage != state.StageDone {
		t.Fatalf("stage %s %v", res.Stage, res.Questions)
	}
	if exists(filepath.Join(dir, "work/brief/costs/cut.md")) {
		t.Fatal("a tool call from a cut answer ran")
	}
	tx, _ := os.ReadFile(filepath.Join(dir, engine.TranscriptsFile))
	for _, want := range []string{"E-UNKNOWN-TOOL", "Use the tools", "E-CUT"} {
		if !strings.Contains(string(tx), want) {
			t.Errorf("the model was not told %q", want)
		}
	}
}
