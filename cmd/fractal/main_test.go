package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fractal-harness/fractal/engine"
	"github.com/fractal-harness/fractal/journal"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/state"
)

// The test binary doubles as the fractal command when FRACTAL_CLI_CHILD is
// set, so crash tests can kill a real process.
func TestMain(m *testing.M) {
	if os.Getenv("FRACTAL_CLI_CHILD") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	// A fresh fractal home, so the daily spawn ledger of the person
	// running the tests is neither used nor changed.
	home, err := os.MkdirTemp("", "fractal-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("FRACTAL_HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// cli runs the command in-process.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// child starts the command as a separate process.
func child(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FRACTAL_CLI_CHILD=1")
	cmd.Stdout, cmd.Stderr = new(bytes.Buffer), new(bytes.Buffer)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// treeHash fingerprints every file under dir, to show a command changed
// nothing.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel))
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func demoRun(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	code, out, errs := cli(t, "demo", "--dir", dir, "--answer-wait", "1ms")
	if code != 0 {
		t.Fatalf("demo exit %d: %s %s", code, out, errs)
	}
	return dir
}

// The README's first command: the demo runs, says where to look, and the
// run verifies and reports its tree.
func TestDemoCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	code, out, errs := cli(t, "demo", "--dir", dir, "--latency", "1ms", "--answer-wait", "1ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"rejected by brief", "decides for sales: retry", "accepted by session", "deliverable: " + filepath.Join(dir, "deliverable/brief.md")} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = cli(t, "status", dir)
	if code != 0 || !strings.Contains(out, "brief/sales  [accepted, 2 attempts]") || !strings.Contains(out, ": done") {
		t.Fatalf("status %d:\n%s", code, out)
	}
	code, out, _ = cli(t, "status", dir, "--json")
	var doc statusDoc
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.Stage != "done" || len(doc.Tree) != 1 || len(doc.Tree[0].Children) != 4 {
		t.Fatalf("status --json %d: %s", code, out)
	}
	code, out, _ = cli(t, "verify", dir)
	if code != 0 || !strings.HasPrefix(out, "sound:") {
		t.Fatalf("verify %d: %s", code, out)
	}
}

// fractal check: 0 all pass, 1 some fail, 2 bad input; --json.
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pass := write("pass.yaml", "intent: a.md has three lines\nchecks:\n  - {kind: file_min_lines, path: a.md, min: 3}\n  - {kind: rubric, text: reads well}\n")
	fail := write("fail.yaml", "intent: needs more\nchecks:\n  - {kind: file_min_lines, path: a.md, min: 30}\n  - {kind: file_exists, path: missing.md}\n")
	if code, out, _ := cli(t, "check", pass, "--in", dir); code != 0 || !strings.Contains(out, "skipped") {
		t.Fatalf("pass: %d %s", code, out)
	}
	code, out, errs := cli(t, "check", fail, "--in", dir, "--json")
	if code != 1 || !strings.Contains(errs, "2 of 2 checks do not pass") {
		t.Fatalf("fail: %d %s %s", code, out, errs)
	}
	var doc struct {
		Pass    bool `json:"pass"`
		Results []struct {
			Result string `json:"result"`
		} `json:"results"`
	}
	if json.Unmarshal([]byte(out), &doc) != nil || doc.Pass || doc.Results[1].Result != "error" {
		t.Fatalf("json: %s", out)
	}
}

// Bad input, for every command: one clear line on stderr, exit 2, no stack
// trace, and an existing run folder untouched.
func TestBadInput(t *testing.T) {
	runDir := demoRun(t)
	before := treeHash(t, runDir)
	tmp := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	malformed := write("malformed.yaml", "intent: [unclosed\n")
	unknownKind := write("kind.yaml", "intent: x\nchecks:\n  - {kind: file_smells_nice, path: a.md}\n")
	unknownKey := write("key.yaml", "intent: x\nchecks:\n  - {kind: file_exists, path: a.md, colour: red}\n")
	badTask := write("task.yaml", "title: t\ncontracts:\n  - name: a\n    intent: x\n    checks:\n      - {kind: file_exists, path: ../etc/passwd}\n")
	taskOK := write("ok.yaml", "title: t\nmodel: script:"+write("s.yaml", "version: 1\nsessions:\n  - role: worker\n    turns: [{text: hi}]\n")+"\ncontracts:\n  - name: a\n    intent: x\n    checks:\n      - {kind: file_exists, path: a.md}\n")
	badScript := write("bad-script.yaml", "version: 1\nsessions:\n  - role: boss\n    turns: [{text: hi}]\n")
	notEmpty := t.TempDir()
	write2 := filepath.Join(notEmpty, "keep.txt")
	_ = os.WriteFile(write2, []byte("x"), 0o644)

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"unknown flag", []string{"status", runDir, "--colour"}, "unknown flag"},
		{"demo extra arg", []string{"demo", "extra"}, "no arguments"},
		{"demo into a run", []string{"demo", "--dir", runDir}, "already holds a run"},
		{"demo into a non-empty folder", []string{"demo", "--dir", notEmpty}, "not empty"},
		{"demo bad latency", []string{"demo", "--latency", "soon"}, "invalid argument"},
		{"run missing task", []string{"run", filepath.Join(tmp, "nope.yaml")}, "cannot read task file"},
		{"run no args", []string{"run"}, "needs one task"},
		{"run malformed task", []string{"run", malformed}, "malformed.yaml:1"},
		{"run bad path in task", []string{"run", badTask}, ".."},
		{"run into a run", []string{"run", taskOK, "--dir", runDir}, "already holds a run"},
		{"run unknown model", []string{"run", taskOK, "--model", "gpt:5", "--dir", filepath.Join(tmp, "r1")}, "not available"},
		{"run bad script", []string{"run", taskOK, "--model", "script:" + badScript, "--dir", filepath.Join(tmp, "r2")}, "bad-script.yaml"},
		{"resume missing", []string{"resume", filepath.Join(tmp, "nope")}, "not a fractal run folder"},
		{"status missing", []string{"status", filepath.Join(tmp, "nope")}, "not a fractal run folder"},
		{"verify missing", []string{"verify", tmp}, "not a fractal run folder"},
		{"check missing contract", []string{"check", filepath.Join(tmp, "nope.yaml"), "--in", tmp}, "cannot read contract"},
		{"check malformed", []string{"check", malformed, "--in", tmp}, "malformed.yaml:1"},
		{"check unknown kind", []string{"check", unknownKind, "--in", tmp}, "file_smells_nice"},
		{"check unknown key", []string{"check", unknownKey, "--in", tmp}, "colour"},
		{"check no --in", []string{"check", unknownKey}, "--in"},
		{"check --in missing", []string{"check", taskOK, "--in", filepath.Join(tmp, "nope")}, ""},
		{"bench bad size", []string{"bench", "--events", "5"}, "at least"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := cli(t, c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, errs)
			}
			if !strings.HasPrefix(errs, "fractal: ") || strings.Count(errs, "\n") != 1 {
				t.Fatalf("want one line starting 'fractal: ', got %q", errs)
			}
			if strings.Contains(errs, "goroutine") || strings.Contains(errs, "panic") {
				t.Fatalf("stack trace: %q", errs)
			}
			if !strings.Contains(errs, c.want) {
				t.Fatalf("stderr %q lacks %q", errs, c.want)
			}
		})
	}
	if after := treeHash(t, runDir); after != before {
		t.Fatal("a bad command changed the existing run folder")
	}
	if _, err := os.Stat(filepath.Join(tmp, "r1")); err == nil {
		t.Fatal("a refused run left a folder behind")
	}
}

// F-D12, DA-A4: a journal edited by hand does not verify; verify names the
// line and exits 1, and resume refuses it too.
func TestVerifyDetectsTampering(t *testing.T) {
	dir := demoRun(t)
	p := filepath.Join(dir, engine.EventsFile)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	// Turn the first rejection into an acceptance.
	n := -1
	for i, l := range lines {
		if strings.Contains(l, `"verdict":"reject"`) {
			lines[i] = strings.Replace(l, `"verdict":"reject"`, `"verdict":"accept"`, 1)
			n = i + 1
			break
		}
	}
	if n < 0 {
		t.Fatal("no rejection in the demo journal")
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := cli(t, "verify", dir)
	if code != 1 || !strings.Contains(errs, "E-ACCEPT-UNSAT") || !strings.Contains(errs, "line "+itoa(n)) {
		t.Fatalf("verify exit %d: %s", code, errs)
	}
	_ = os.Remove(filepath.Join(dir, engine.SnapshotFile))
	if code, _, errs := cli(t, "resume", dir); code != 1 || !strings.Contains(errs, "E-ACCEPT-UNSAT") {
		t.Fatalf("resume of a tampered run: %d %s", code, errs)
	}
	// A torn last line (a crash mid-append) is not tampering: repaired on
	// resume, ignored by status.
	dir2 := demoRun(t)
	f, _ := os.OpenFile(filepath.Join(dir2, engine.EventsFile), os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(`{"seq":9999,"v":1,"type":"mode_ch`)
	_ = f.Close()
	if code, _, errs := cli(t, "status", dir2); code != 0 {
		t.Fatalf("status with a torn tail: %d %s", code, errs)
	}
	if code, _, errs := cli(t, "resume", dir2); code != 0 {
		t.Fatalf("resume with a torn tail: %d %s", code, errs)
	}
}

func itoa(n int) string { return strconvItoa(n) }

// The crash test (issue #2): a run in a separate process is killed with
// SIGKILL mid-run, again and again at different points; resume finishes
// it, verify passes, no task is accepted twice, and the deliverable is the
// same as an uninterrupted run's.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real processes; slow")
	}
	ref, err := os.ReadFile(filepath.Join(demoRun(t), "deliverable", "brief.md"))
	if err != nil {
		t.Fatal(err)
	}
	interrupted := 0
	for _, killAt := range []int{12, 30, 55, 80, 105} {
		dir := filepath.Join(t.TempDir(), "crash")
		cmd := child(t, "demo", "--dir", dir, "--latency", "40ms", "--answer-wait", "1ms")
		waitLines(t, dir, killAt)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if b, _ := os.ReadFile(filepath.Join(dir, engine.EventsFile)); bytes.Contains(b, []byte(`"run_finished"`)) {
			t.Fatalf("kill at %d came too late: the run had finished", killAt)
		}
		// Resume, and kill the resume too, once.
		cmd = child(t, "resume", dir, "--latency", "40ms")
		waitLines(t, dir, killAt+15)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		code, out, errs := cli(t, "resume", dir)
		if code != 0 {
			t.Fatalf("kill at %d: resume exit %d: %s %s", killAt, code, out, errs)
		}
		if code, out, _ := cli(t, "verify", dir); code != 0 {
			t.Fatalf("kill at %d: verify: %s", killAt, out)
		}
		got, err := os.ReadFile(filepath.Join(dir, "deliverable", "brief.md"))
		if err != nil || !bytes.Equal(got, ref) {
			t.Fatalf("kill at %d: deliverable differs: %v", killAt, err)
		}
		acceptedOnce(t, dir)
		if b, _ := os.ReadFile(filepath.Join(dir, engine.EventsFile)); bytes.Contains(b, []byte(`"status":"interrupted"`)) {
			interrupted++
		}
	}
	// The kills must have caught workers mid-attempt, not only between.
	if interrupted == 0 {
		t.Fatal("no kill interrupted a working attempt; the test shows nothing")
	}
}

// waitLines waits until the run's journal has n lines (or the run ended).
func waitLines(t *testing.T, dir string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(dir, engine.EventsFile))
		if bytes.Count(b, []byte("\n")) >= n || bytes.Contains(b, []byte(`"run_finished"`)) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the run did not reach %d events", n)
}

func acceptedOnce(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, engine.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type key struct{ by, task string }
	seen := map[key]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev state.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == state.TVerdict && ev.Verdict.Verdict == policy.Accept {
			k := key{ev.Verdict.By, ev.Verdict.Task}
			if seen[k]++; seen[k] > 1 {
				t.Fatalf("%s accepted %s twice", k.by, k.task)
			}
		}
	}
	st, err := engine.Fold(context.Background(), dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if st.Stage != state.StageDone || !st.AllAccepted(state.Session) {
		t.Fatalf("stage %s", st.Stage)
	}
}

// DC7, DC8: gc archives and removes runs in every terminal state once they
// are older than the TTL, and leaves live and recent runs alone.
func TestGC(t *testing.T) {
	runs := t.TempDir()
	mk := func(name string, stage state.Stage, age time.Duration) string {
		dir := filepath.Join(runs, name)
		if code, _, errs := cli(t, "demo", "--dir", dir, "--answer-wait", "1ms"); code != 0 {
			t.Fatal(errs)
		}
		m, err := journal.ReadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := journal.SwapStage(dir, m.Stage, m.Version, string(stage), time.Now().Add(-age)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	old := 48 * time.Hour
	gone := []string{mk("done-old", state.StageDone, old), mk("failed-old", state.StageFailed, old), mk("cancelled-old", state.StageCancelled, old)}
	kept := []string{mk("done-new", state.StageDone, time.Minute), mk("running-old", state.StageRunning, old)}
	if code, out, _ := cli(t, "gc", runs, "--ttl", "24h", "--dry-run"); code != 0 || !strings.Contains(out, "would archive") {
		t.Fatalf("dry run: %s", out)
	}
	for _, d := range gone {
		if _, err := os.Stat(d); err != nil {
			t.Fatal("a dry run removed a run")
		}
	}
	code, out, errs := cli(t, "gc", runs, "--ttl", "24h")
	if code != 0 || !strings.Contains(out, "3 run(s) archived") {
		t.Fatalf("gc %d: %s %s", code, out, errs)
	}
	for _, d := range gone {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s was not removed", d)
		}
		if fi, err := os.Stat(filepath.Join(runs, "archive", filepath.Base(d)+".tar.gz")); err != nil || fi.Size() == 0 {
			t.Errorf("%s has no archive", d)
		}
	}
	for _, d := range kept {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed", d)
		}
	}
}

// DC9: blueprint check — the shipped ones pass; unknown keys, wrong types
// and widening requests are errors with file:line.
func TestBlueprintCheck(t *testing.T) {
	shipped, _ := filepath.Glob("../../blueprints/*.yaml")
	if len(shipped) < 4 {
		t.Fatalf("shipped blueprints: %v", shipped)
	}
	if code, out, errs := cli(t, append([]string{"blueprint", "check"}, shipped...)...); code != 0 || strings.Count(out, "ok ") != len(shipped) {
		t.Fatalf("%d %s %s", code, out, errs)
	}
	tmp := t.TempDir()
	cases := map[string]struct{ body, want string }{
		"unknown key":  {"id: x\ncolour: red\ncapabilities: {inherit: full}\n", "x.yaml:2"},
		"wrong type":   {"id: x\ncapabilities: {inherit: full}\nbudget: {max_tokens: lots}\n", "x.yaml:3"},
		"widening":     {"id: x\ncapabilities: {inherit: none, allow: [shell]}\n", "shell"},
		"bad inherit":  {"id: x\ncapabilities: {inherit: most}\n", "inherit"},
		"escaping dir": {"id: x\ncapabilities: {inherit: full}\nscope: {write: [../etc]}\n", ".."},
	}
	for name, c := range cases {
		p := filepath.Join(tmp, "x.yaml")
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := cli(t, "blueprint", "check", p)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: %d %q", name, code, errs)
		}
	}
	if code, out, _ := cli(t, "blueprint", "list"); code != 0 || !strings.Contains(out, "researcher") {
		t.Fatalf("list: %s", out)
	}
}

func stageOf(t *testing.T, dir string) string {
	m, err := journal.ReadManifest(dir)
	if err != nil {
		return "none"
	}
	return m.Stage
}

func waitStage(t *testing.T, dir, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if stageOf(t, dir) == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("stage %s, want %s", stageOf(t, dir), want)
}

// DA-A4: the user pauses a live run (its process stops starting model
// calls), resumes it, and cancels another; a run no process drives is
// paused or cancelled directly. Each move is a compare-and-swap of the
// manifest and an event.
func TestPauseResumeCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	dir := filepath.Join(t.TempDir(), "live")
	cmd := child(t, "demo", "--dir", dir, "--latency", "60ms")
	waitStage(t, dir, "running")
	if code, out, errs := cli(t, "pause", dir); code != 0 || !strings.Contains(out, "asked the process") {
		t.Fatalf("pause: %d %s %s", code, out, errs)
	}
	waitStage(t, dir, "paused")
	time.Sleep(300 * time.Millisecond) // calls under way finish
	before, _ := os.ReadFile(filepath.Join(dir, engine.EventsFile))
	time.Sleep(400 * time.Millisecond)
	after, _ := os.ReadFile(filepath.Join(dir, engine.EventsFile))
	if strings.Count(string(after), `"model_call_started"`) != strings.Count(string(before), `"model_call_started"`) {
		t.Fatal("a paused run started model calls")
	}
	if code, out, errs := cli(t, "resume", dir); code != 0 || !strings.Contains(out, "resume") {
		t.Fatalf("resume: %d %s %s", code, out, errs)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the resumed run failed: %v %s", err, cmd.Stderr)
	}
	if stageOf(t, dir) != "done" {
		t.Fatalf("stage %s", stageOf(t, dir))
	}

	dir2 := filepath.Join(t.TempDir(), "cancel")
	cmd2 := child(t, "demo", "--dir", dir2, "--latency", "60ms")
	waitStage(t, dir2, "running")
	if code, _, errs := cli(t, "cancel", dir2); code != 0 {
		t.Fatalf("cancel: %s", errs)
	}
	_ = cmd2.Wait()
	if stageOf(t, dir2) != "cancelled" {
		t.Fatalf("stage %s", stageOf(t, dir2))
	}
	if code, out, _ := cli(t, "verify", dir2); code != 0 {
		t.Fatalf("verify: %s", out)
	}

	// No process: applied directly. A killed run is paused, then resumed.
	dir3 := filepath.Join(t.TempDir(), "dead")
	cmd3 := child(t, "demo", "--dir", dir3, "--latency", "60ms")
	waitStage(t, dir3, "running")
	_ = cmd3.Process.Kill()
	_ = cmd3.Wait()
	if code, out, errs := cli(t, "pause", dir3); code != 0 || !strings.Contains(out, "paused") {
		t.Fatalf("pause of a dead run: %d %s %s", code, out, errs)
	}
	if code, _, errs := cli(t, "resume", dir3); code != 0 || stageOf(t, dir3) != "done" {
		t.Fatalf("resume: %s %s", errs, stageOf(t, dir3))
	}
}
