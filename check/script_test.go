package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fractal-harness/fractal/contract"
)

func runScript(t *testing.T, dir string, ch contract.Check, opt Options) contract.Result {
	t.Helper()
	ch.Kind = contract.Script
	if ch.Interpreter == "" {
		ch.Interpreter = "sh"
	}
	c := contract.New("script", []contract.Check{ch})
	return Evaluate(context.Background(), c, dir, opt).Results[0]
}

// gone reports whether pid no longer runs. A zombie counts as gone: in a
// container without a reaping init, a killed orphan may linger as one.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) == 0 || fields[0] == "Z" || fields[0] == "X"
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if gone(pid) {
			return
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("process %d outlived the script check", pid)
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the script did not record its background process: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("bad pid %q", b)
	}
	return pid
}

// F-D3: exit 0 passes, anything else fails with the code and the end of
// the output; a script that cannot be found or run is undecided.
func TestScriptOutcomes(t *testing.T) {
	dir := fixture(t)
	write(t, filepath.Join(dir, "ok.sh"), "exit 0\n")
	write(t, filepath.Join(dir, "bad.sh"), "echo 'checking totals'\necho 'totals do not add up' >&2\nexit 3\n")
	write(t, filepath.Join(dir, "crash.sh"), "kill -9 $$\n")
	write(t, filepath.Join(dir, "quiet.sh"), "exit 1\n")
	write(t, filepath.Join(dir, "long.sh"), "i=0; while [ $i -lt 300 ]; do echo 'xxxxxxxxxxxxxxxxxxxx'; i=$((i+1)); done; echo THE END; exit 1\n")
	write(t, filepath.Join(filepath.Dir(dir), "outside", "evil.sh"), "exit 0\n")
	symlink(t, filepath.Join(filepath.Dir(dir), "outside", "evil.sh"), filepath.Join(dir, "evil.sh"))
	for _, tc := range []struct {
		name string
		ch   contract.Check
		opt  Options
		want outcome
		say  string
	}{
		{"exit 0", contract.Check{Path: "ok.sh"}, Options{}, pass, "exit status 0"},
		{"bash", contract.Check{Path: "ok.sh", Interpreter: "bash"}, Options{}, pass, "exit status 0"},
		{"exit 3", contract.Check{Path: "bad.sh"}, Options{}, fail, "exit status 3, needs 0; output ends:\nchecking totals\ntotals do not add up"},
		{"no output", contract.Check{Path: "quiet.sh"}, Options{}, fail, "exit status 1, needs 0; no output"},
		{"signal", contract.Check{Path: "crash.sh"}, Options{}, fail, "killed by signal killed"},
		{"long output", contract.Check{Path: "long.sh"}, Options{}, fail, "xxxxx\nTHE END"},
		{"missing", contract.Check{Path: "nope.sh"}, Options{}, undecided, "nope.sh does not exist"},
		{"folder", contract.Check{Path: "charts"}, Options{}, undecided, "charts is a folder, not a script file"},
		{"escaping", contract.Check{Path: "evil.sh"}, Options{}, undecided, "leads outside the folder"},
		{"interpreter not allowed here", contract.Check{Path: "ok.sh"}, Options{Interpreters: []string{"bash"}}, undecided, "interpreter sh is not allowed here (allowed: bash)"},
		{"interpreter not allowed at all", contract.Check{Path: "ok.sh", Interpreter: "ruby"}, Options{}, undecided, `invalid check: script: interpreter "ruby" is not allowed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runScript(t, dir, tc.ch, tc.opt)
			text := r.Detail
			if tc.want == undecided {
				text = r.Err
			}
			if outcomeOf(r) != tc.want || !strings.Contains(text, tc.say) {
				t.Fatalf("%+v\nwant %v saying %q", r, tc.want, tc.say)
			}
		})
	}
	r := runScript(t, dir, contract.Check{Path: "long.sh"}, Options{})
	if !strings.Contains(r.Detail, "…") || len(r.Detail) > outputTail+100 {
		t.Fatalf("long output not cut to its end (%d bytes): %q", len(r.Detail), r.Detail)
	}
}

// Arguments reach the script exactly as written: no shell runs between the
// harness and the interpreter, so nothing in them is expanded or executed.
func TestScriptArgumentsAreLiteral(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "args.sh"), `for a in "$@"; do printf '%s\n' "$a"; done > args.out; pwd > cwd.out`+"\n")
	args := []string{"$(touch INJECTED1)", "; touch INJECTED2", "`touch INJECTED3`", "| touch INJECTED4", "&& touch INJECTED5", "a b", "*", "$HOME", ""}
	r := runScript(t, dir, contract.Check{Path: "args.sh", Args: args}, Options{})
	if outcomeOf(r) != pass {
		t.Fatalf("%+v", r)
	}
	got, err := os.ReadFile(filepath.Join(dir, "args.out"))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(args, "\n") + "\n"; string(got) != want {
		t.Fatalf("the script received\n%q\nwant\n%q", got, want)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "INJECTED*"))
	if len(matches) > 0 {
		t.Fatalf("an argument was executed: %v", matches)
	}
	cwd, _ := os.ReadFile(filepath.Join(dir, "cwd.out"))
	real, _ := filepath.EvalSymlinks(dir)
	if strings.TrimSpace(string(cwd)) != real {
		t.Fatalf("working directory %q, want %q", cwd, real)
	}
}

// Scripts see only allow-listed variables: nothing of the harness's
// environment (keys, tokens) leaks unless named in Options.Env.
func TestScriptEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("FRACTAL_TEST_SECRET", "s3cret")
	t.Setenv("FRACTAL_TEST_ALLOWED", "yes")
	t.Setenv("FRACTAL_CHECK_DIR", "/not/the/folder")
	t.Setenv("LANG", "C.UTF-8")
	write(t, filepath.Join(dir, "env.sh"), "env > env.out\n")
	r := runScript(t, dir, contract.Check{Path: "env.sh"}, Options{Env: []string{"FRACTAL_TEST_ALLOWED"}})
	if outcomeOf(r) != pass {
		t.Fatalf("%+v", r)
	}
	out, err := os.ReadFile(filepath.Join(dir, "env.out"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	real, _ := filepath.EvalSymlinks(dir)
	if env["FRACTAL_CHECK_DIR"] != real || env["FRACTAL_TEST_ALLOWED"] != "yes" || env["LANG"] != "C.UTF-8" || env["PATH"] == "" {
		t.Fatalf("environment %v", env)
	}
	// The shell itself sets PWD, SHLVL and _; everything else must come
	// from the allow-list.
	allowed := append(slices.Clone(baseEnv), "FRACTAL_TEST_ALLOWED", "FRACTAL_CHECK_DIR", "PWD", "OLDPWD", "SHLVL", "_")
	for k := range env {
		if !slices.Contains(allowed, k) {
			t.Errorf("the script saw %s", k)
		}
	}
}

const backgroundScript = `sleep 300 &
echo $! > grandchild.pid
sleep 300
`

// On timeout the whole process group goes, including a background
// grandchild the script started.
func TestScriptTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "hang.sh"), backgroundScript)
	r := runScript(t, dir, contract.Check{Path: "hang.sh", TimeoutSec: 1}, Options{})
	if outcomeOf(r) != undecided || r.Err != "timed out after 1s" {
		t.Fatalf("%+v", r)
	}
	waitGone(t, readPid(t, filepath.Join(dir, "grandchild.pid")))
}

// The default timeout applies without timeout_sec, and the maximum caps
// one that asks for more.
func TestScriptTimeoutDefaultAndCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "hang.sh"), "exec sleep 300\n")
	for _, tc := range []struct {
		name string
		sec  int
		opt  Options
	}{
		{"default", 0, Options{DefaultScriptTimeout: time.Second}},
		{"capped", 3600, Options{MaxScriptTimeout: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runScript(t, dir, contract.Check{Path: "hang.sh", TimeoutSec: tc.sec}, tc.opt)
			if r.Err != "timed out after 1s" {
				t.Fatalf("%+v", r)
			}
		})
	}
}

// Cancelling the evaluation kills the script's group just the same.
func TestScriptCancelKillsProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "hang.sh"), backgroundScript)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "grandchild.pid")); err == nil || ctx.Err() != nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	c := contract.New("x", []contract.Check{{Kind: contract.Script, Path: "hang.sh", Interpreter: "sh"}})
	r := Evaluate(ctx, c, dir, Options{}).Results[0]
	if outcomeOf(r) != undecided || !strings.HasPrefix(r.Err, "cancelled") {
		t.Fatalf("%+v", r)
	}
	waitGone(t, readPid(t, filepath.Join(dir, "grandchild.pid")))
}

// A script that passes but leaves a process running in the background does
// not keep the evaluation waiting, and the process does not survive it.
func TestScriptLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "bg.sh"), "sleep 300 &\necho $! > grandchild.pid\nexit 0\n")
	r := runScript(t, dir, contract.Check{Path: "bg.sh"}, Options{})
	if outcomeOf(r) != pass {
		t.Fatalf("%+v", r)
	}
	waitGone(t, readPid(t, filepath.Join(dir, "grandchild.pid")))
}
