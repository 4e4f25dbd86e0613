package intake_test

// Fixtures shared by the tests: a small office task (a one-page brief
// from a CSV), its questions, constraints, contract and harness, and
// helpers to build scripted models in Go and to watch the recorded steps.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/discuss"
	"github.com/fractal-harness/fractal/harness"
	"github.com/fractal-harness/fractal/intake"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/script"
	"github.com/fractal-harness/fractal/policy"
)

const rawTask = "Please write a one-page brief for the sales director from sales.csv.\nIt must include the total revenue per region.\n"

const salesCSV = "region,month,revenue\nNorth,2025-01,1200\nSouth,2025-01,900\nNorth,2025-02,1300\n"

// newRun makes a run folder with inputs/sales.csv.
func newRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "inputs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inputs", "sales.csv"), []byte(salesCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The round-1 questions: the task leaves the period, what to leave out
// and how figures are backed up open.
func questions() []map[string]any {
	return []map[string]any{
		{
			"id": "period", "text": "Which months should the brief cover?",
			"options": []map[string]any{
				{"label": "January to March 2025", "value": "The brief covers January to March 2025.", "default": true},
				{"label": "All of 2024", "value": "The brief covers January to December 2024."},
			},
			"silent_failure": "Figures from the wrong months would look plausible, and nobody would notice.",
		},
		{
			"id": "leave_out", "text": "Is there anything the brief must leave out?",
			"options": []map[string]any{
				{"label": "Nothing", "value": "Nothing needs to be left out.", "default": true},
				{"label": "Customer names", "value": "Leave out the names of customers."},
			},
			"silent_failure": "Something confidential could end up in the brief.",
		},
		{
			"id": "sourcing", "text": "How should the figures be backed up?",
			"options": []map[string]any{
				{"label": "Name the file", "value": "Every figure must name sales.csv as its source.", "default": true},
				{"label": "No citations", "value": "Figures need no citation."},
			},
			"silent_failure": "A figure without a source cannot be checked, and a wrong one would pass.",
		},
	}
}

// constraints are the six constraints of the brief, quoting the task and
// the default answers of round 1.
func constraints() []harness.Constraint {
	a1 := harness.AnswersSource(1)
	return []harness.Constraint{
		{ID: "C1", Kind: harness.Audience, Text: "Written for the sales director.", Quote: "brief for the sales director", Source: harness.TaskSource},
		{ID: "C2", Kind: harness.Form, Text: "One page at most.", Quote: "write a one-page brief", Source: harness.TaskSource},
		{ID: "C3", Kind: harness.TimeWindow, Text: "Covers January to March 2025.", Quote: "The brief covers January to March 2025", Source: a1},
		{ID: "C4", Kind: harness.MustInclude, Text: "The total revenue per region.", Quote: "include the total revenue per region", Source: harness.TaskSource},
		{ID: "C5", Kind: harness.Exclude, Text: harness.NoneStated, Quote: "Nothing needs to be left out", Source: a1},
		{ID: "C6", Kind: harness.Quality, Text: "Every figure names sales.csv as its source.", Quote: "Every figure must name sales.csv as its source", Source: a1},
	}
}

func contracts() []discuss.Proposed {
	return []discuss.Proposed{{
		Name:   "brief",
		Intent: "A one-page brief for the sales director on the total revenue per region.",
		Checks: []contract.Check{
			{Kind: contract.FileExists, Path: "brief.md"},
			{Kind: contract.Contains, Path: "brief.md", Text: "Revenue by region"},
		},
	}}
}

func proposal(fastPath bool, cs []harness.Constraint) map[string]any {
	return args(map[string]any{"fast_path": fastPath, "contracts": contracts(), "constraints": cs})
}

// outcome is what an autonomous discussion of rawTask yields: round 1
// answered by its defaults.
func outcome(t *testing.T) discuss.Outcome {
	t.Helper()
	var qs []discuss.Question
	b, _ := json.Marshal(questions())
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	for i := range qs {
		qs[i].Editable = true
	}
	r := discuss.Round{N: 1, Questions: qs}
	r.Answers = discuss.Defaults(r, discuss.DefaultWait)
	o := discuss.Outcome{Contracts: contracts(), Constraints: constraints(), Rounds: []discuss.Round{r}}
	if err := o.Validate(discuss.Sources(rawTask, o.Rounds)); err != nil {
		t.Fatal(err)
	}
	return o
}

// bootstrapRun is a run folder as Discuss leaves it: the task and the
// clarification files written.
func bootstrapRun(t *testing.T) (string, discuss.Outcome) {
	t.Helper()
	dir := newRun(t)
	o := outcome(t)
	write(t, dir, "inputs/task.md", rawTask)
	for name, text := range map[string]string{
		harness.QuestionsFile(1): discuss.QuestionsMarkdown(o.Rounds[0]),
		harness.AnswersSource(1): discuss.AnswersMarkdown(o.Rounds[0]),
	} {
		write(t, dir, name, text)
	}
	return dir, o
}

func write(t *testing.T, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(dir, rel string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
	return err == nil
}

// The harness of the brief: every stated constraint in methodology.md,
// the worker prompt and sop/draft.md; C4 also in done_criteria.yaml.
const methodology = `# Method: one-page brief on revenue per region

| Constraint | Kind | Lands in |
|---|---|---|
| C1 | audience | methodology.md, worker_prompt_taskpart.md, sop/draft.md |
| C2 | form | methodology.md, worker_prompt_taskpart.md, sop/draft.md |
| C3 | time_window | methodology.md, worker_prompt_taskpart.md, sop/draft.md |
| C4 | must_include | methodology.md, worker_prompt_taskpart.md, sop/draft.md, done_criteria.yaml |
| C5 | exclude | none stated |
| C6 | quality | methodology.md, worker_prompt_taskpart.md, sop/draft.md |

Before using any input file, read the input inventory, inputs/inventory.md.

1. Sum the revenue of sales.csv per region for January to March 2025. [C3] [C4]
2. Write one page for the sales director. [C1] [C2]
3. Name sales.csv as the source of every figure. [C6]
`

const workerPrompt = `You write a brief for the sales director [C1], one page at most [C2], covering January to March 2025 [C3].
It holds the total revenue per region [C4], and every figure names sales.csv [C6].
`

const sopDraft = `1. Read inputs/inventory.md, then sales.csv.
2. Keep the rows of January to March 2025. [C3]
3. Sum the revenue per region into a table under "## Revenue by region". [C4]
4. Write the brief for the sales director [C1] on one page [C2], naming sales.csv after every figure. [C6]
`

// sopDraftNoC2 leaves out the form constraint: C2 lands in two places.
const sopDraftNoC2 = `1. Read inputs/inventory.md, then sales.csv.
2. Keep the rows of January to March 2025. [C3]
3. Sum the revenue per region into a table under "## Revenue by region". [C4]
4. Write the brief for the sales director [C1], naming sales.csv after every figure. [C6]
`

const criteria = `- kind: file_exists
  path: brief.md
- kind: contains
  path: brief.md
  text: "## Revenue by region"
  note: "[C4] the revenue table"
`

// criteria400 asks a one-page brief for 400 lines: structurally valid,
// but it can never pass for the deliverable the person asked for.
const criteria400 = criteria + `- kind: file_min_lines
  path: brief.md
  min: 400
`

func hw(path, content, reason string) script.Call {
	return call(harness.ToolName, map[string]any{"path": path, "content": content, "reason": reason})
}

func call(name string, a map[string]any) script.Call { return script.Call{Name: name, Args: a} }

func turn(calls ...script.Call) script.Turn { return script.Turn{ToolCalls: calls} }

// args turns any JSON-encodable value into a tool call's arguments.
func args(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return m
}

func writeAll() script.Turn {
	return turn(
		hw(harness.Methodology, methodology, "the method and the constraint table"),
		hw(harness.WorkerPrompt, workerPrompt, "the task part of the instructions"),
		hw("sop/draft.md", sopDraft, "the steps of the brief"),
		hw(harness.DoneCriteria, criteria, "structural checks of the brief"),
	)
}

func pass() script.Turn {
	return turn(call(intake.ToolSubmitVerdict, map[string]any{"verdict": "pass", "issues": []any{}, "summary": "The harness follows the task and the answers."}))
}

// newScript validates a script built in Go.
func newScript(t *testing.T, sessions ...script.Session) *script.Script {
	t.Helper()
	s := &script.Script{Version: 1, Sessions: sessions}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// recorder keeps every request a model got, to look at prompts.
type recorder struct {
	mu   sync.Mutex
	m    model.Model
	reqs []model.Request
}

func (r *recorder) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.m.Generate(ctx, req)
}

// first returns the first request of role with attempt n.
func (r *recorder) first(role model.Role, intent string, n int) *model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, q := range r.reqs {
		if q.Role == role && q.Intent == intent && q.Attempt == n {
			return &r.reqs[i]
		}
	}
	return nil
}

// journal collects steps and checks, for every step that names a file
// with a digest, that the file does not hold that content yet: the step
// is recorded before its effect.
type journal struct {
	t     *testing.T
	dir   string
	steps []intake.Step
	fail  func(intake.Step) error
}

func (j *journal) record(s intake.Step) error {
	if s.SHA256 != "" {
		if b, err := os.ReadFile(filepath.Join(j.dir, filepath.FromSlash(s.Path))); err == nil {
			if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) == s.SHA256 {
				j.t.Errorf("step %s for %s recorded after its effect", s.Kind, s.Path)
			}
		}
	}
	if j.fail != nil {
		if err := j.fail(s); err != nil {
			return err
		}
	}
	j.steps = append(j.steps, s)
	return nil
}

func (j *journal) kinds() []string {
	var out []string
	for _, s := range j.steps {
		out = append(out, s.Kind)
	}
	return out
}

func (j *journal) of(kind string) []intake.Step {
	var out []intake.Step
	for _, s := range j.steps {
		if s.Kind == kind {
			out = append(out, s)
		}
	}
	return out
}

// verify checks that every recorded file exists with the digest of its
// last record: what the journal says was written is what is on disk.
func (j *journal) verify() {
	j.t.Helper()
	last := map[string]intake.Step{}
	for _, s := range j.steps {
		if s.SHA256 != "" {
			last[s.Path] = s
		}
	}
	for p, s := range last {
		b, err := os.ReadFile(filepath.Join(j.dir, filepath.FromSlash(p)))
		if err != nil {
			j.t.Errorf("%s recorded but absent: %v", p, err)
			continue
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != s.SHA256 || len(b) != s.Size {
			j.t.Errorf("%s on disk differs from its record", p)
		}
	}
}

func config(t *testing.T, dir string, m model.Model) (intake.Config, *journal) {
	j := &journal{t: t, dir: dir}
	return intake.Config{
		Model: m, Dir: dir, Mode: policy.Autonomous, Record: j.record, Wait: 10 * time.Millisecond,
		Clock: func() time.Time { return time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC) },
	}, j
}

func hasProblem(ps []string, sub string) bool {
	for _, p := range ps {
		if strings.Contains(p, sub) {
			return true
		}
	}
	return false
}

// toolResults returns the tool results Meta got in a request's history,
// in order.
func toolResults(req *model.Request) []model.ToolResult {
	var out []model.ToolResult
	for _, m := range req.Messages {
		out = append(out, m.ToolResults...)
	}
	return out
}

// lastRequest returns the last request of role and intent.
func (r *recorder) last(role model.Role, intent string) *model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.reqs) - 1; i >= 0; i-- {
		if r.reqs[i].Role == role && r.reqs[i].Intent == intent {
			return &r.reqs[i]
		}
	}
	return nil
}
