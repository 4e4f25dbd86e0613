package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// helperEnv selects a helper mode when the test binary is re-executed as a
// child process (see runHelper).
const helperEnv = "FRACTAL_JOURNAL_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	goleak.VerifyTestMain(m)
}

// runHelper is the body of a child process started by startHelper.
func runHelper(mode string) int {
	dir := os.Getenv("HELPER_DIR")
	switch mode {
	case "lockrun":
		// Hold the run lock until killed.
		l, err := LockRun(dir)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println("locked", os.Getpid())
		time.Sleep(time.Minute)
		_ = l.Release()
		return 0
	case "swap":
		// Move the manifest forward until it reaches HELPER_TARGET, printing
		// every version this process won.
		target, _ := strconv.ParseInt(os.Getenv("HELPER_TARGET"), 10, 64)
		for {
			m, err := ReadManifest(dir)
			if err != nil {
				fmt.Println("error", err)
				return 1
			}
			if m.Version >= target {
				return 0
			}
			got, err := SwapStage(dir, m.Stage, m.Version, nextStage(m.Stage), time.Now())
			switch {
			case err == nil:
				fmt.Println("won", got.Version)
			case errors.Is(err, ErrConflict):
			default:
				fmt.Println("error", err)
				return 1
			}
		}
	}
	fmt.Println("unknown helper mode", mode)
	return 2
}

// startHelper re-executes the test binary as a child process in a helper mode.
func startHelper(t *testing.T, mode string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

func nextStage(s string) string {
	if s == "plan" {
		return "build"
	}
	return "plan"
}

// nopSync is an Options.Sync for tests that do not need real durability.
func nopSync(*os.File) error { return nil }

// countingSync returns a Sync that counts its calls (and really syncs nothing).
func countingSync(n *atomic.Int64, delay time.Duration) func(*os.File) error {
	return func(*os.File) error {
		n.Add(1)
		if delay > 0 {
			time.Sleep(delay)
		}
		return nil
	}
}

// rec returns a small test record.
func rec(i int) []byte {
	return []byte(fmt.Sprintf(`{"type":"test","n":%d}`, i))
}

// joinLines returns recs each followed by '\n'.
func joinLines(recs ...[]byte) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		b.Write(r)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// openT opens a Log that is closed when the test ends.
func openT(t *testing.T, path string, opt Options) *Log {
	t.Helper()
	if opt.Sync == nil {
		opt.Sync = nopSync
	}
	l, err := Open(path, opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// collect replays l from offset from and returns copies of the records and
// the next offsets.
func collect(t *testing.T, l *Log, from int64) (recs []string, nexts []int64) {
	t.Helper()
	err := l.Replay(context.Background(), from, func(rec []byte, next int64) error {
		recs = append(recs, string(rec))
		nexts = append(nexts, next)
		return nil
	})
	if err != nil {
		t.Fatalf("Replay(%d): %v", from, err)
	}
	return recs, nexts
}

func tempJournal(t *testing.T) string {
	return filepath.Join(t.TempDir(), "events.jsonl")
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
