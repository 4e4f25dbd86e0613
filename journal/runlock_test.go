package journal

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// DA-A4 (one writer per run): a held run lock refuses a second holder with a
// plain message naming the holder's pid; after Release it can be taken again.
func TestRunLock(t *testing.T) {
	dir := t.TempDir()
	l, err := LockRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Minute)
	_, err = LockRun(dir)
	if !errors.Is(err, ErrRunInUse) {
		t.Fatalf("second LockRun = %v; want ErrRunInUse", err)
	}
	want := fmt.Sprintf("run %s is in use by another fractal process (pid %d); wait for it to finish or stop it first", dir, os.Getpid())
	if err.Error() != want {
		t.Errorf("message %q\n want %q", err, want)
	}
	var rie *RunInUseError
	if !errors.As(err, &rie) || rie.PID != os.Getpid() || rie.Started.Before(before) {
		t.Errorf("RunInUseError = %+v", rie)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err == nil {
		t.Error("second Release succeeded")
	}
	l2, err := LockRun(dir)
	if err != nil {
		t.Fatalf("LockRun after Release: %v", err)
	}
	if err := l2.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := LockRun(dir + "/missing"); err == nil || errors.Is(err, ErrRunInUse) {
		t.Errorf("LockRun in a missing directory = %v", err)
	}
}

// DA-A4 (crashed run can be resumed): a run lock held by a process that is
// killed with SIGKILL is dropped by the kernel and can be taken.
func TestRunLockReleasedWhenHolderKilled(t *testing.T) {
	dir := t.TempDir()
	cmd := startHelper(t, "lockrun", "HELPER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "locked ") {
		t.Fatalf("helper said %q, %v", line, err)
	}

	_, err = LockRun(dir)
	var rie *RunInUseError
	if !errors.As(err, &rie) || !errors.Is(err, ErrRunInUse) || rie.PID != cmd.Process.Pid {
		t.Fatalf("LockRun while the child holds it = %v; want ErrRunInUse naming pid %d", err, cmd.Process.Pid)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true

	l, err := LockRun(dir)
	if err != nil {
		t.Fatalf("LockRun after the holder was killed: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}
