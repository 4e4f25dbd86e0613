package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fractal-harness/fractal/journal"
	"github.com/fractal-harness/fractal/state"
)

// RequestsDir is where `fractal pause|resume|cancel` leave requests for the
// process that drives a run (only that process writes the journal).
const RequestsDir = "requests"

// The user's requests to a live run (DA-A4: the user's commands).
const (
	RequestPause  = "pause"
	RequestResume = "resume"
	RequestCancel = "cancel"
)

// Request leaves a request for the process driving the run in dir. It
// returns ErrNotLive when no process holds the run: the caller then applies
// the request itself (Open, then Pause, Cancel or Run).
func Request(dir, action string) error {
	switch action {
	case RequestPause, RequestResume, RequestCancel:
	default:
		return fmt.Errorf("unknown request %q", action)
	}
	if lock, err := journal.LockRun(dir); err == nil {
		_ = lock.Release()
		return ErrNotLive
	} else if !errors.Is(err, journal.ErrRunInUse) {
		return err
	}
	d := filepath.Join(dir, RequestsDir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	name := fmt.Sprintf("%d-%s", time.Now().UnixNano(), action)
	tmp := filepath.Join(d, "."+name)
	if err := os.WriteFile(tmp, []byte(action+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(d, name))
}

// ErrNotLive: no process is driving the run.
var ErrNotLive = errors.New("no process is driving the run")

// pollRequests applies the requests left for this process, oldest first.
func (e *Engine) pollRequests(ctx context.Context) {
	d := filepath.Join(e.dir, RequestsDir)
	ents, err := os.ReadDir(d)
	if err != nil {
		return
	}
	var names []string
	for _, ent := range ents {
		if !strings.HasPrefix(ent.Name(), ".") {
			names = append(names, ent.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		_, action, _ := strings.Cut(n, "-")
		_ = os.Remove(filepath.Join(d, n))
		switch action {
		case RequestPause:
			_ = e.Pause(ctx)
		case RequestResume:
			_ = e.unpause(ctx)
		case RequestCancel:
			_ = e.Cancel(ctx)
		}
	}
}

// Pause stops the run from starting model calls until it is resumed; calls
// under way finish. Only the user pauses (Meta never can).
func (e *Engine) Pause(ctx context.Context) error {
	var cur state.Stage
	e.view(func(s *state.State) { cur = s.Stage })
	if cur != state.StageRunning {
		return fmt.Errorf("the run is %s, not running", cur)
	}
	if err := e.setStage(ctx, state.StagePaused, "user", "the user paused the run"); err != nil {
		return err
	}
	e.pauseMu.Lock()
	if e.resumed == nil {
		e.resumed = make(chan struct{})
	}
	e.pauseMu.Unlock()
	return nil
}

func (e *Engine) unpause(ctx context.Context) error {
	var cur state.Stage
	e.view(func(s *state.State) { cur = s.Stage })
	if cur != state.StagePaused {
		return nil
	}
	if err := e.setStage(ctx, state.StageRunning, "user", "the user resumed the run"); err != nil {
		return err
	}
	e.pauseMu.Lock()
	if e.resumed != nil {
		close(e.resumed)
		e.resumed = nil
	}
	e.pauseMu.Unlock()
	return nil
}

// waitUnpaused blocks while the run is paused.
func (e *Engine) waitUnpaused(ctx context.Context) error {
	e.pauseMu.Lock()
	ch := e.resumed
	e.pauseMu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return errStopped
	}
}

// Cancel calls the run off: the stage becomes cancelled, the run finishes,
// and the process stops driving it. The journal keeps everything done.
func (e *Engine) Cancel(ctx context.Context) error {
	var (
		cur  state.Stage
		done bool
	)
	e.view(func(s *state.State) { cur, done = s.Stage, s.Finished != nil })
	if done {
		return fmt.Errorf("the run is already %s", cur)
	}
	if err := e.setStage(ctx, state.StageCancelled, "user", "the user cancelled the run"); err != nil {
		return err
	}
	if err := e.commit(ctx, state.Event{Type: state.TRunFinished, RunFinished: &state.RunFinished{Status: state.StageCancelled, Reason: "cancelled by the user"}}); err != nil {
		return err
	}
	e.pauseMu.Lock()
	e.cancelled = true
	e.pauseMu.Unlock()
	if e.cancel != nil {
		e.cancel()
	}
	return nil
}
