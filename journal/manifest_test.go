package journal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

var t0 = time.Date(2025, 3, 1, 9, 30, 0, 123456789, time.UTC)

func newManifest(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := CreateManifest(dir, Manifest{RunID: "r-20250301-abc", Stage: "plan", Model: "strong-model",
		Task: "Write the Q1 report.\nUse the sales sheet.", Created: t0})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// DA-A4: manifest.yaml is created once, human-readable, and read back.
func TestManifestCreateRead(t *testing.T) {
	dir := newManifest(t)
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Manifest{RunID: "r-20250301-abc", Stage: "plan", Version: 1, Model: "strong-model",
		Task: "Write the Q1 report.\nUse the sales sheet.", Created: t0, Updated: t0}
	if m.RunID != want.RunID || m.Stage != want.Stage || m.Version != 1 || m.Model != want.Model ||
		m.Task != want.Task || !m.Created.Equal(t0) || !m.Updated.Equal(t0) {
		t.Errorf("ReadManifest = %+v; want %+v", m, want)
	}
	text := string(readFile(t, filepath.Join(dir, ManifestFile)))
	for _, s := range []string{"run_id: r-20250301-abc", "stage: plan", "version: 1", "created: 2025-03-01T09:30:00.123456789Z"} {
		if !strings.Contains(text, s) {
			t.Errorf("manifest.yaml lacks %q:\n%s", s, text)
		}
	}
	err = CreateManifest(dir, Manifest{RunID: "other", Stage: "plan", Created: t0})
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "already has a manifest") {
		t.Errorf("second CreateManifest = %v; want an error wrapping fs.ErrExist", err)
	}
	if m2, _ := ReadManifest(dir); m2.RunID != want.RunID {
		t.Error("second CreateManifest changed the manifest")
	}
	if err := CreateManifest(t.TempDir(), Manifest{Stage: "plan"}); err == nil {
		t.Error("CreateManifest accepted an empty run_id")
	}
}

// DA-A4: a missing or malformed manifest gives a clear error naming the file.
func TestManifestMalformed(t *testing.T) {
	empty := t.TempDir()
	_, err := ReadManifest(empty)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), filepath.Join(empty, ManifestFile)) {
		t.Errorf("missing manifest: %v", err)
	}
	cases := []struct {
		name, text, want string
	}{
		{"bad yaml", "run_id: [unclosed\n", "malformed YAML"},
		{"unknown key", "run_id: r\nstage: plan\nversion: 1\ncolour: blue\n", "malformed YAML"},
		{"missing run_id", "stage: plan\nversion: 1\n", "run_id is empty"},
		{"missing stage", "run_id: r\nversion: 1\n", "stage is empty"},
		{"version zero", "run_id: r\nstage: plan\nversion: 0\n", "version 0"},
		{"version not a number", "run_id: r\nstage: plan\nversion: two\n", "malformed YAML"},
		{"created not a time", "run_id: r\nstage: plan\nversion: 1\ncreated: yesterday\nupdated: 2025-03-01T09:30:00Z\n", "created is missing"},
		{"updated missing", "run_id: r\nstage: plan\nversion: 1\ncreated: 2025-03-01T09:30:00Z\n", "updated is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ManifestFile)
			writeFile(t, path, []byte(c.text))
			_, err := ReadManifest(dir)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("ReadManifest = %v; want an error naming %s and saying %q", err, path, c.want)
			}
			if _, err := SwapStage(dir, "plan", 1, "build", t0); err == nil {
				t.Error("SwapStage succeeded on a malformed manifest")
			}
		})
	}
}

// DA-A4 (a person can read the manifest, fractal reads back exactly what it
// wrote): any text round-trips, including text that plain YAML would change.
func TestManifestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dir := t.TempDir()
		m := Manifest{
			RunID:   rapid.StringMatching(`[a-z0-9-]{1,20}`).Draw(rt, "run_id"),
			Stage:   rapid.StringMatching(`.+`).Draw(rt, "stage"),
			Model:   rapid.String().Draw(rt, "model"),
			Task:    rapid.OneOf(rapid.String(), rapid.Just("  indented\ntrailing \n\n"), rapid.Just("key: value # not a comment")).Draw(rt, "task"),
			Created: time.Unix(rapid.Int64Range(0, 1<<34).Draw(rt, "created"), 0).In(time.FixedZone("x", 3600)),
		}
		if err := CreateManifest(dir, m); err != nil {
			rt.Fatal(err)
		}
		got, err := ReadManifest(dir)
		if err != nil {
			rt.Fatal(err)
		}
		if got.RunID != m.RunID || got.Stage != m.Stage || got.Model != m.Model || got.Task != m.Task ||
			!got.Created.Equal(m.Created) || !got.Updated.Equal(m.Created) || got.Version != 1 {
			rt.Fatalf("read %+v; wrote %+v", got, m)
		}
	})
}

// DA-A4: stage transitions are compare-and-swap on stage and version.
func TestSwapStageConflict(t *testing.T) {
	dir := newManifest(t)
	t1 := t0.Add(time.Hour)
	m, err := SwapStage(dir, "plan", 1, "build", t1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Stage != "build" || m.Version != 2 || !m.Updated.Equal(t1) || !m.Created.Equal(t0) {
		t.Errorf("after swap: %+v", m)
	}
	if got, _ := ReadManifest(dir); got.Stage != "build" || got.Version != 2 || !got.Updated.Equal(t1) {
		t.Errorf("on disk after swap: %+v", got)
	}
	cases := []struct {
		name      string
		fromStage string
		fromVer   int64
	}{
		{"stale version", "build", 1},
		{"wrong stage", "plan", 2},
		{"both stale", "plan", 1},
		{"future version", "build", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := SwapStage(dir, c.fromStage, c.fromVer, "review", t1)
			if !errors.Is(err, ErrConflict) {
				t.Fatalf("SwapStage = %v; want ErrConflict", err)
			}
			want := fmt.Sprintf("expected stage %q version %d, found stage \"build\" version 2", c.fromStage, c.fromVer)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			if got, _ := ReadManifest(dir); got.Stage != "build" || got.Version != 2 {
				t.Errorf("a conflicting swap changed the manifest: %+v", got)
			}
		})
	}
	if _, err := SwapStage(dir, "build", 2, "", t1); err == nil {
		t.Error("SwapStage accepted an empty stage")
	}
	if _, err := SwapStage(dir, "build", 2, "review", time.Time{}); err == nil {
		t.Error("SwapStage accepted a zero time")
	}
}

// DA-A4: of many goroutines swapping from the same stage and version,
// exactly one wins; racing through many versions, each version is won once.
func TestSwapStageConcurrentGoroutines(t *testing.T) {
	dir := newManifest(t)
	const racers = 16
	var wg sync.WaitGroup
	results := make(chan error, racers)
	for range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := SwapStage(dir, "plan", 1, "build", t0)
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	wins := 0
	for err := range results {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, ErrConflict):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d winners from version 1; want exactly 1", wins)
	}

	const target = 60
	var mu sync.Mutex
	won := map[int64]int{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				m, err := ReadManifest(dir)
				if err != nil {
					t.Error(err)
					return
				}
				if m.Version >= target {
					return
				}
				got, err := SwapStage(dir, m.Stage, m.Version, nextStage(m.Stage), time.Now())
				if err == nil {
					mu.Lock()
					won[got.Version]++
					mu.Unlock()
				} else if !errors.Is(err, ErrConflict) {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	checkEachVersionWonOnce(t, won, 3, target)
}

func checkEachVersionWonOnce(t *testing.T, won map[int64]int, first, last int64) {
	t.Helper()
	for v := first; v <= last; v++ {
		if won[v] != 1 {
			t.Errorf("version %d won %d times; want exactly once", v, won[v])
		}
	}
	if int64(len(won)) != last-first+1 {
		t.Errorf("versions won: %v", won)
	}
}

// DA-A4: two processes swapping the same manifest: each version is won by
// exactly one of them.
func TestSwapStageTwoProcesses(t *testing.T) {
	dir := newManifest(t)
	const target = 40
	var cmds []*helperProc
	for range 2 {
		c := startHelper(t, "swap", "HELPER_DIR="+dir, "HELPER_TARGET="+strconv.Itoa(target))
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, &helperProc{c, out})
	}
	won := map[int64]int{}
	perProcess := make([]int, len(cmds))
	for i, c := range cmds {
		sc := bufio.NewScanner(c.out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 2 && f[0] == "won" {
				v, _ := strconv.ParseInt(f[1], 10, 64)
				won[v]++
				perProcess[i]++
			} else {
				t.Errorf("helper %d: %s", i, sc.Text())
			}
		}
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v", i, err)
		}
	}
	t.Logf("versions won per process: %v", perProcess)
	checkEachVersionWonOnce(t, won, 2, target)
	m, err := ReadManifest(dir)
	if err != nil || m.Version != target {
		t.Errorf("final manifest %+v, %v", m, err)
	}
	// The lock file is left for the next swapper; no temporary files remain.
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if fmt.Sprint(names) != fmt.Sprint([]string{ManifestLock, ManifestFile}) {
		t.Errorf("directory holds %v", names)
	}
}

type helperProc struct {
	cmd *exec.Cmd
	out io.ReadCloser
}
