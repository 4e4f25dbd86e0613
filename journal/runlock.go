package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// RunLockFile is the name, inside a run directory, of the run lock.
const RunLockFile = "run.lock"

// ErrRunInUse is wrapped by the error of LockRun when another process (or
// another lock in this process) holds the run.
var ErrRunInUse = errors.New("journal: run in use")

// RunInUseError is the error of LockRun when the run is held. It wraps
// ErrRunInUse.
type RunInUseError struct {
	Dir     string
	PID     int       // holder's process id, 0 if unknown
	Started time.Time // when the holder took the lock, zero if unknown
}

func (e *RunInUseError) Error() string {
	pid := "pid unknown"
	if e.PID > 0 {
		pid = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("run %s is in use by another fractal process (%s); wait for it to finish or stop it first", e.Dir, pid)
}

func (e *RunInUseError) Unwrap() error { return ErrRunInUse }

// RunLock is the exclusive lock of a run directory held by one process.
type RunLock struct {
	mu sync.Mutex
	f  *os.File
}

// LockRun takes a non-blocking exclusive flock on dir/run.lock (created if
// absent) and writes the holder's pid and start time into it. If another
// process holds it, LockRun returns a *RunInUseError (wrapping ErrRunInUse)
// naming the holder's pid. The kernel releases the lock when the holding
// process dies, even by SIGKILL, so a crashed run can be resumed.
func LockRun(dir string) (*RunLock, error) {
	path := filepath.Join(dir, RunLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: lock run %s: %w", dir, err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid, started := readLockHolder(f)
			return nil, &RunInUseError{Dir: dir, PID: pid, Started: started}
		}
		return nil, fmt.Errorf("journal: lock run %s: %w", dir, err)
	}
	info := fmt.Sprintf("pid: %d\nstarted: %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339Nano))
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: lock run %s: %w", dir, err)
	}
	if _, err := f.WriteAt([]byte(info), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: lock run %s: %w", dir, err)
	}
	return &RunLock{f: f}, nil
}

// readLockHolder parses the "pid:" and "started:" lines of a lock file.
func readLockHolder(f *os.File) (pid int, started time.Time) {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 4096))
	if err != nil {
		return 0, time.Time{}
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "pid":
			pid, _ = strconv.Atoi(v)
		case "started":
			started, _ = time.Parse(time.RFC3339Nano, v)
		}
	}
	return pid, started
}

// Release releases the lock. Release after Release returns an error.
func (l *RunLock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("journal: run lock already released")
	}
	f := l.f
	l.f = nil
	_ = f.Truncate(0) // the holder's pid is no longer meaningful
	if err := f.Close(); err != nil {
		return fmt.Errorf("journal: release run lock %s: %w", f.Name(), err)
	}
	return nil
}
