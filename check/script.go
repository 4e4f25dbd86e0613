package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fractal-harness/fractal/contract"
)

// baseEnv is what every script gets from the harness's environment: enough
// to find programs and format text, nothing that could carry a secret.
var baseEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"}

// outputTail is how much of a failing script's output goes into Detail:
// the end, where the reason for a failure usually is.
const outputTail = 1024

// drainGrace bounds the wait for a script's output after its process group
// is gone: a process that left the group (setsid) may keep the pipe open
// for ever, and must not keep the evaluation waiting.
const drainGrace = 2 * time.Second

// script runs a script check: `interpreter <script> args...`, with no shell
// in between, in the folder, with a scrubbed environment, in its own
// process group, which is killed whole when the script ends, times out or
// is cancelled, so no stray process outlives the check.
func script(ctx context.Context, f *folder, ch contract.Check, opt Options) contract.Result {
	rel, err := f.resolve(ch.Path, false)
	if err != nil {
		return failed("%v", err)
	}
	if fi, err := f.root.Lstat(rel); err != nil {
		return failed("%s cannot be read: %v", ch.Path, reason(err))
	} else if !fi.Mode().IsRegular() {
		return failed("%s is %s, not a script file", ch.Path, describeMode(fi.Mode()))
	}
	scriptPath := filepath.Join(f.real, rel)

	if !slices.Contains(opt.Interpreters, ch.Interpreter) {
		return failed("interpreter %s is not allowed here (allowed: %s)", ch.Interpreter, strings.Join(opt.Interpreters, ", "))
	}
	interp, err := exec.LookPath(ch.Interpreter)
	if err != nil {
		return failed("interpreter %s is not installed (not found on PATH)", ch.Interpreter)
	}
	if !slices.Contains(opt.Interpreters, filepath.Base(interp)) {
		return failed("interpreter %s resolved to %s, which is not allowed here", ch.Interpreter, interp)
	}

	timeout := opt.DefaultScriptTimeout
	if ch.TimeoutSec > 0 {
		timeout = time.Duration(ch.TimeoutSec) * time.Second
	}
	timeout = min(timeout, opt.MaxScriptTimeout)

	pr, pw, err := os.Pipe()
	if err != nil {
		return failed("cannot run %s: %v", ch.Path, err)
	}
	// Arguments go to the interpreter as they are: "$(rm -rf /)" is a
	// string, not a command, because there is no shell to expand it.
	cmd := exec.Command(interp, append([]string{scriptPath}, ch.Args...)...)
	cmd.Dir = f.real
	cmd.Env = scriptEnv(opt.Env, f.real)
	cmd.Stdout = pw
	cmd.Stderr = pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return failed("cannot run %s: %v", ch.Path, err)
	}
	pw.Close() // the script's copies are the only writers left
	pgid := cmd.Process.Pid

	out := &tail{max: outputTail}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		out.drain(pr)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	var stopped string
	select {
	case waitErr = <-exited:
	case <-timer.C:
		stopped = fmt.Sprintf("timed out after %v", timeout)
		killGroup(pgid)
		waitErr = <-exited
	case <-ctx.Done():
		stopped = "cancelled: " + context.Cause(ctx).Error()
		killGroup(pgid)
		waitErr = <-exited
	}
	// Also after a normal exit: whatever the script left running in the
	// background is not part of the result and must not outlive it.
	killGroup(pgid)
	select {
	case <-drained:
	case <-time.After(drainGrace):
	}
	pr.Close()
	<-drained

	output := out.String()
	if stopped != "" {
		return contract.Result{Err: stopped, Detail: withOutput("stopped", output)}
	}
	if waitErr == nil {
		return contract.Result{Pass: true, Detail: "exit status 0"}
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return contract.Result{Detail: withOutput(fmt.Sprintf("killed by signal %v", ws.Signal()), output)}
		}
		return contract.Result{Detail: withOutput(fmt.Sprintf("exit status %d, needs 0", ee.ExitCode()), output)}
	}
	return failed("waiting for %s: %v", ch.Path, waitErr)
}

// killGroup kills every process in the group. The script leads its own
// group, so the group id is its pid; ESRCH just means nobody is left.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// scriptEnv is the allow-listed part of the harness's environment plus
// FRACTAL_CHECK_DIR, which a contract's script cannot have overridden.
func scriptEnv(extra []string, dir string) []string {
	allowed := append(slices.Clone(baseEnv), extra...)
	var env []string
	for _, kv := range os.Environ() {
		k, _, ok := strings.Cut(kv, "=")
		if ok && k != "FRACTAL_CHECK_DIR" && slices.Contains(allowed, k) {
			env = append(env, kv)
		}
	}
	return append(env, "FRACTAL_CHECK_DIR="+dir)
}

func withOutput(status, output string) string {
	if output == "" {
		return status + "; no output"
	}
	return status + "; output ends:\n" + output
}

// tail keeps the last max bytes of what it drains.
type tail struct {
	max     int
	buf     []byte
	dropped bool // output before buf was discarded
}

// drain reads r to its end (or first error), keeping the tail.
func (t *tail) drain(r io.Reader) {
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		t.buf = append(t.buf, chunk[:n]...)
		if len(t.buf) > 4*t.max {
			t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
			t.dropped = true
		}
		if err != nil {
			return
		}
	}
}

// String is the kept output as text: cut to max bytes at a character
// boundary, invalid UTF-8 replaced, surrounding blank lines trimmed.
func (t *tail) String() string {
	b := t.buf
	cut := t.dropped || len(b) > t.max
	if len(b) > t.max {
		b = b[len(b)-t.max:]
		for i := 0; i < 3 && len(b) > 0 && b[0]&0xC0 == 0x80; i++ {
			b = b[1:]
		}
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if cut {
		s = "…" + s
	}
	return s
}
