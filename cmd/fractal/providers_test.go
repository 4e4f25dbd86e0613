package main

import (
	"bytes"

	goyaml "github.com/goccy/go-yaml"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fractal-harness/fractal/demo"
	"github.com/fractal-harness/fractal/internal/wirefake"
	"github.com/fractal-harness/fractal/model/script"
)

// writeDemoTask copies the demo's task and inputs into a folder, without
// its scripted model: the providers answer instead.
func writeDemoTask(t *testing.T) (taskFile string, sc *script.Script) {
	t.Helper()
	dir := t.TempDir()
	err := fs.WalkDir(demo.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(demo.Files, p)
		if err != nil {
			return err
		}
		if p == "task.yaml" {
			b = []byte(strings.Replace(string(b), "model: script:script.yaml\n", "", 1))
		}
		dst := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	sdata, _ := fs.ReadFile(demo.Files, "script.yaml")
	sc, err = script.Parse(sdata, "script.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "task.yaml"), sc
}

// Issue #3: a whole demo-sized run on each wire protocol, end to end,
// through the official SDK clients against in-process servers speaking
// Anthropic Messages and OpenAI Chat Completions; resume uses the
// configuration the run kept; status prices the usage.
func TestRunOnEachProtocol(t *testing.T) {
	for _, kind := range []string{"anthropic", "openai"} {
		t.Run(kind, func(t *testing.T) {
			taskFile, sc := writeDemoTask(t)
			var srv *wirefake.Server
			base := ""
			if kind == "anthropic" {
				srv = wirefake.Anthropic(sc)
				base = srv.URL
			} else {
				srv = wirefake.OpenAI(sc)
				base = srv.URL + "/v1"
			}
			defer srv.Close()
			// The first call meets an overloaded server: retried, and every
			// attempt recorded.
			srv.FailStatus = 529
			if kind == "openai" {
				srv.FailStatus = 503
			}
			srv.Fail.Store(1)
			cfg := filepath.Join(t.TempDir(), "fractal.yaml")
			body := "providers:\n  p: {kind: " + kind + ", base_url: \"" + base + "\", api_key_env: FRACTAL_TEST_KEY}\n" +
				"roles:\n  meta: [p/claude-opus-4-1]\n  reviewer: [p/claude-opus-4-1]\n  worker: [p/claude-sonnet-4-5]\n  watcher: [p/claude-haiku-4-5]\n"
			if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("FRACTAL_TEST_KEY", "test-key")
			dir := filepath.Join(t.TempDir(), "run")
			code, out, errs := cli(t, "run", taskFile, "--config", cfg, "--dir", dir)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errs)
			}
			if !strings.Contains(out, "deliverable: ") || srv.Requests.Load() < 10 {
				t.Fatalf("%d requests\n%s", srv.Requests.Load(), out)
			}
			b, err := os.ReadFile(filepath.Join(dir, "deliverable", "brief.md"))
			if err != nil || !strings.Contains(string(b), "## Recommendation") {
				t.Fatalf("deliverable: %v", err)
			}
			journal, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
			if n := strings.Count(string(journal), `"kind":"overloaded"`); n != 1 {
				t.Fatalf("%d failed attempts recorded, want 1", n)
			}
			if n, calls := strings.Count(string(journal), `"type":"model_attempt"`), strings.Count(string(journal), `"type":"model_call_finished"`); n != calls+1 {
				t.Fatalf("%d attempts recorded for %d calls and 1 retry", n, calls)
			}
			code, out, _ = cli(t, "status", dir)
			if code != 0 || !strings.Contains(out, "worker") || !strings.Contains(out, "$") || strings.Contains(out, "unpriced") {
				t.Fatalf("status:\n%s", out)
			}
			if code, out, errs := cli(t, "resume", dir); code != 0 {
				t.Fatalf("resume of a done run: %d %s %s", code, out, errs)
			}
		})
	}
}

// fractal models lists each role's bindings with prices; fractal doctor
// says plainly what is wrong with each endpoint.
func TestModelsAndDoctor(t *testing.T) {
	_, sc := writeDemoTask(t)
	good := wirefake.Anthropic(sc)
	defer good.Close()
	cfg := filepath.Join(t.TempDir(), "fractal.yaml")
	body := `providers:
  good: {kind: anthropic, base_url: "` + good.URL + `", api_key_env: FRACTAL_TEST_KEY}
  nokey: {kind: anthropic, api_key_env: FRACTAL_TEST_MISSING}
  down: {kind: openai, base_url: "http://127.0.0.1:1/v1", api_key_env: FRACTAL_TEST_KEY}
roles:
  meta: [good/claude-opus-4-1, nokey/claude-opus-4-1]
  reviewer: [good/claude-opus-4-1]
  worker: [down/gpt-5-mini]
  watcher: [good/mystery-model]
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FRACTAL_TEST_KEY", "k")
	t.Setenv("FRACTAL_TEST_MISSING", "")
	code, out, errs := cli(t, "models", "--config", cfg)
	if code != 0 || !strings.Contains(out, "good/claude-opus-4-1") || !strings.Contains(out, "15 / 75") || !strings.Contains(out, "unknown (set prices") || !strings.Contains(out, "$FRACTAL_TEST_MISSING (not set)") {
		t.Fatalf("models %d:\n%s%s", code, out, errs)
	}
	code, out, errs = cli(t, "doctor", "--config", cfg, "--timeout", "5s")
	if code != 1 {
		t.Fatalf("doctor exit %d:\n%s%s", code, out, errs)
	}
	for _, want := range []string{"no key: set $FRACTAL_TEST_MISSING", "cannot reach http://127.0.0.1:1/v1"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "good/claude-opus-4-1") {
		t.Errorf("doctor skipped a model:\n%s", out)
	}
	code, _, errs = cli(t, "models", "--config", filepath.Join(t.TempDir(), "none.yaml"))
	if code != 2 || !strings.Contains(errs, "cannot read config") {
		t.Fatalf("missing config: %d %s", code, errs)
	}
}

// F-D3.5, DA-B3, DA-B4: a run from a person's own words (a text file and
// an inputs folder) goes through the discussion — a question with options,
// its default taken and reported in an unattended run — and the task
// harness before work starts; interactively, the answers and the
// confirmation come from the terminal.
func TestRunFromWords(t *testing.T) {
	taskFile, _ := writeDemoTask(t)
	base := filepath.Dir(taskFile)
	words := filepath.Join(base, "task.md")
	scriptFile := filepath.Join(base, "script.yaml")

	dir := filepath.Join(t.TempDir(), "auto")
	code, out, errs := cli(t, "run", words, "--input", filepath.Join(base, "inputs"), "--model", "script:"+scriptFile, "--dir", dir, "--answer-wait", "10ms")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	q, _ := os.ReadFile(filepath.Join(dir, "inputs/clarify/round_1_questions.md"))
	a, _ := os.ReadFile(filepath.Join(dir, "inputs/clarify/round_1_answers.md"))
	rep, _ := os.ReadFile(filepath.Join(dir, "deliverable/REPORT.md"))
	if !strings.Contains(string(q), "How long may the brief be?") || !strings.Contains(string(a), "took the default") || !strings.Contains(string(rep), "taken by default") {
		t.Fatalf("questions:\n%s\nanswers:\n%s\nreport:\n%s", q, a, rep)
	}
	for _, f := range []string{"harness/methodology.md", "harness/sop/brief.md", "harness/worker_prompt_taskpart.md", "harness/done_criteria.yaml", "inputs/inventory.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s missing", f)
		}
	}

	dir2 := filepath.Join(t.TempDir(), "interactive")
	var o, e bytes.Buffer
	code = runIn([]string{"run", words, "--input", filepath.Join(base, "inputs"), "--model", "script:" + scriptFile, "--dir", dir2, "--interactive"},
		strings.NewReader("2\ny\n"), &o, &e)
	if code != 0 {
		t.Fatalf("interactive exit %d\n%s\n%s", code, o.String(), e.String())
	}
	a2, _ := os.ReadFile(filepath.Join(dir2, "inputs/clarify/round_1_answers.md"))
	if !strings.Contains(string(a2), "two pages") || strings.Contains(string(a2), "took the default") {
		t.Fatalf("interactive answers:\n%s", a2)
	}
	if !strings.Contains(o.String(), "How long may the brief be?") {
		t.Fatalf("the question was not asked on the terminal:\n%s", o.String())
	}
	// Bad input: an empty task, a missing input.
	empty := filepath.Join(base, "empty.txt")
	_ = os.WriteFile(empty, []byte("  \n"), 0o644)
	if code, _, errs := cli(t, "run", empty, "--model", "script:"+scriptFile); code != 2 || !strings.Contains(errs, "empty") {
		t.Fatalf("empty task: %d %s", code, errs)
	}
	if code, _, errs := cli(t, "run", words, "--input", filepath.Join(base, "nope"), "--model", "script:"+scriptFile); code != 2 || !strings.Contains(errs, "nope") {
		t.Fatalf("missing input: %d %s", code, errs)
	}
}

// DA-A5, DA-A2: while running, Meta revises the task harness only through
// the audited tool; a write alone schedules nothing (Meta must message the
// worker), and a large change gets a revision review by the Reviewer.
func TestHarnessRevisionWhileRunning(t *testing.T) {
	taskFile, sc := writeDemoTask(t)
	base := filepath.Dir(taskFile)
	// The costs worker hands off once; Meta then revises done_criteria,
	// tries to give up without telling the worker (refused), and starts
	// the worker with a message.
	sc.Sessions = append([]script.Session{{Role: "worker", Match: "cost lines", Session: 1, Turns: []script.Turn{
		{ToolCalls: []script.Call{{Name: "handoff", Args: map[string]any{"summary": "read costs.csv", "next": "write costs.md"}}}}}}}, sc.Sessions...)
	meta := script.Session{Role: "meta", Offers: "start_worker", Turns: []script.Turn{
		{ToolCalls: []script.Call{{Name: "harness_write", Args: map[string]any{"path": "done_criteria.yaml", "reason": "the brief must name its sources",
			"content": "- kind: file_exists\n  path: brief.md\n  note: \"[C2] the brief is one file\"\n- kind: file_min_lines\n  path: brief.md\n  min: 20\n  note: \"[C2] a full page\"\n- kind: contains\n  path: brief.md\n  text: \"## Recommendation\"\n  note: \"[C4] ends with one recommendation\"\n- kind: contains\n  path: brief.md\n  text: \"## Sales\"\n"}}}},
		{ToolCalls: []script.Call{{Name: "give_up", Args: map[string]any{"reason": "done here"}}}},
		{ToolCalls: []script.Call{{Name: "start_worker", Args: map[string]any{"message": "The done criteria now also ask for a Sales section; carry on with costs.md."}}}},
	}}
	sc.Sessions = append([]script.Session{meta}, sc.Sessions...)
	sdata, err := yamlScript(sc)
	if err != nil {
		t.Fatal(err)
	}
	scriptFile := filepath.Join(base, "script2.yaml")
	if err := os.WriteFile(scriptFile, sdata, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errs := cli(t, "run", filepath.Join(base, "task.md"), "--input", filepath.Join(base, "inputs"), "--model", "script:"+scriptFile, "--dir", dir, "--answer-wait", "1ms")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	j, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	tx, _ := os.ReadFile(filepath.Join(dir, "transcripts.jsonl"))
	if !strings.Contains(string(j), `"type":"harness_changed"`) || !strings.Contains(string(j), `"large":true`) {
		t.Fatal("the change was not audited")
	}
	if !strings.Contains(string(j), `"type":"harness_reviewed"`) || !strings.Contains(string(j), `"passed":true`) {
		t.Fatal("the large change was not reviewed")
	}
	if !strings.Contains(string(tx), "E-HARNESS-UNTOLD") {
		t.Fatal("a harness change without a message to the worker was not refused")
	}
}

// yamlScript writes a script back as YAML.
func yamlScript(sc *script.Script) ([]byte, error) { return goyaml.Marshal(sc) }
