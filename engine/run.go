package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/journal"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/watchdog"
)

// TopContract is one contract that came out of the discussion, with the name
// of the folder its root instance works in (work/<name>).
type TopContract struct {
	Name     string
	Contract contract.Contract
}

// Input is a file handed to the run; it lands in inputs/<Name>.
type Input struct {
	Name string
	Data []byte
}

// Task is everything a run starts from.
type Task struct {
	Title     string
	Contracts []TopContract
	Inputs    []Input
	Policy    policy.Policy
	// Model names the model configuration for people and for resume (for
	// example "script:model/script.yaml").
	Model string
	// Raw is the person's own words, when the run starts from them rather
	// than from agreed contracts: the discussion turns them into contracts
	// (F-D3.5) and Contracts stays empty.
	Raw string
}

// Validate reports the first problem with t.
func (t Task) Validate() error {
	if strings.TrimSpace(t.Raw) != "" {
		if len(t.Contracts) > 0 {
			return errors.New("a task is either the person's words or agreed contracts, not both")
		}
	} else if len(t.Contracts) == 0 {
		return errors.New("the task has no contracts and no text")
	}
	seen := map[string]bool{}
	for _, tc := range t.Contracts {
		if !validName(tc.Name) {
			return fmt.Errorf("contract name %q: use letters, digits, '-' and '_' only", tc.Name)
		}
		if seen[tc.Name] {
			return fmt.Errorf("contract name %q appears twice", tc.Name)
		}
		seen[tc.Name] = true
		if err := tc.Contract.Validate(); err != nil {
			return fmt.Errorf("contract %s: %w", tc.Name, err)
		}
	}
	for _, in := range t.Inputs {
		if err := contract.ValidatePath(in.Name); err != nil {
			return fmt.Errorf("input %q: %w", in.Name, err)
		}
	}
	return t.Policy.Validate()
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Create makes a new run folder for t and opens it. The folder must not
// exist or be empty: an existing run is never touched.
func Create(dir string, t Task, cfg Config) (*Engine, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		if exists(filepath.Join(dir, "manifest.yaml")) || exists(filepath.Join(dir, EventsFile)) {
			return nil, fmt.Errorf("%w: %s (use resume to continue it)", ErrRunExists, dir)
		}
		return nil, fmt.Errorf("engine: %s is not empty; a new run needs a new or empty folder", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("engine: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{abs, filepath.Join(abs, InputsDir), filepath.Join(abs, WorkDir), filepath.Join(abs, ContractsDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
	}
	lock, err := journal.LockRun(abs)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = lock.Release()
		}
	}()
	for _, in := range t.Inputs {
		p := filepath.Join(abs, InputsDir, filepath.FromSlash(in.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, in.Data, 0o644); err != nil {
			return nil, fmt.Errorf("engine: write input: %w", err)
		}
	}
	now := cfg.Clock().UTC()
	runID := filepath.Base(abs)
	if err := journal.CreateManifest(abs, journal.Manifest{RunID: runID, Stage: string(state.StageSubmitted), Model: t.Model, Task: t.Title, Created: now, Updated: now}); err != nil {
		return nil, err
	}
	log, err := journal.Open(filepath.Join(abs, EventsFile), journal.Options{})
	if err != nil {
		return nil, err
	}
	e := newEngine(abs, cfg, log, lock, state.New())
	ctx := context.Background()
	raw := strings.TrimSpace(t.Raw) != ""
	steps := []state.Event{{Type: state.TRunStarted, RunStarted: &state.RunStarted{RunID: runID, Policy: t.Policy, Model: t.Model, Boundary: WorkDir, Root: RootContract(t.Policy), Raw: raw}}}
	if raw {
		if err := os.WriteFile(filepath.Join(abs, InputsDir, "task.md"), []byte(t.Raw), 0o644); err != nil {
			return nil, fmt.Errorf("engine: write the task: %w", err)
		}
	} else {
		steps = append(steps, discussed(t.Contracts)...)
	}
	for _, ev := range steps {
		if err := e.note(ev); err != nil {
			_ = log.Close()
			return nil, fmt.Errorf("engine: start run: %w", err)
		}
	}
	if err := e.flush(ctx); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("engine: start run: %w", err)
	}
	for _, tc := range t.Contracts {
		if err := e.writeContract(tc.Contract); err != nil {
			_ = log.Close()
			return nil, err
		}
	}
	e.raw = raw
	ok = true
	return e, nil
}

// discussed are the events that make agreed contracts the session's plan.
func discussed(cs []TopContract) []state.Event {
	var evs []state.Event
	plan := &state.PlanRecorded{Instance: state.Session}
	for _, tc := range cs {
		evs = append(evs, state.Event{Type: state.TContractRegistered, ContractRegistered: &state.ContractRegistered{Contract: tc.Contract, Source: state.FromDiscussion, By: state.Session}})
		plan.Tasks = append(plan.Tasks, state.PlanTask{ID: tc.Name, ContractID: tc.Contract.ID, Boundary: WorkDir + "/" + tc.Name})
	}
	return append(evs, state.Event{Type: state.TPlanRecorded, PlanRecorded: plan})
}

func newEngine(dir string, cfg Config, log *journal.Log, lock *journal.RunLock, st *state.State) *Engine {
	e := &Engine{dir: dir, cfg: cfg, log: log, lock: lock, st: st, wake: map[string]chan struct{}{}}
	e.enqueued = log.End()
	e.lines = log.Lines()
	e.lastSnap = st.Seq
	e.calls.Store(st.Seq)
	e.progress = &progress{w: cfg.Progress}
	e.ledger = &ledger{path: filepath.Join(cfg.Home, "ledger")}
	if cfg.Home == "" {
		e.ledger = nil
	}
	return e
}

// writeContract saves contracts/<id>.yaml for people to read. The journal,
// not this file, is the record.
func (e *Engine) writeContract(c contract.Contract) error {
	p := filepath.Join(e.dir, ContractsDir, c.ID+".yaml")
	if exists(p) {
		return nil
	}
	b, err := contract.Marshal(c)
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

// Open reopens an existing run folder for resuming: it takes the run lock,
// repairs a torn journal tail, and refolds the state through the Guard
// (from the snapshot when one matches).
func Open(dir string, cfg Config) (*Engine, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if _, err := journal.ReadManifest(abs); err != nil {
		return nil, fmt.Errorf("%s is not a fractal run folder: %w", dir, err)
	}
	lock, err := journal.LockRun(abs)
	if err != nil {
		return nil, err
	}
	log, err := journal.Open(filepath.Join(abs, EventsFile), journal.Options{})
	if err != nil {
		_ = lock.Release()
		return nil, err
	}
	st, err := foldLog(log, filepath.Join(abs, SnapshotFile))
	if err != nil {
		_ = log.Close()
		_ = lock.Release()
		return nil, err
	}
	return newEngine(abs, cfg, log, lock, st), nil
}

// foldLog refolds a journal, starting from the snapshot when it is sound.
func foldLog(log *journal.Log, snapPath string) (*state.State, error) {
	return fold(context.Background(), log.Replay, snapPath)
}

// fold replays a journal through the Guard: from the snapshot at snapPath
// when there is one and the rest replays cleanly from it (a snapshot is
// only a cache), else from the first event. An empty snapPath means no
// snapshot.
func fold(ctx context.Context, rf replayFunc, snapPath string) (*state.State, error) {
	if snapPath != "" {
		if snap, err := journal.ReadSnapshot(snapPath); err == nil {
			st := state.New()
			if json.Unmarshal(snap.State, st) == nil && replay(ctx, rf, st, snap.Offset, snap.Lines) == nil {
				return st, nil
			}
		}
	}
	st := state.New()
	if err := replay(ctx, rf, st, 0, 0); err != nil {
		return nil, err
	}
	return st, nil
}

type replayFunc func(ctx context.Context, from int64, fn func(rec []byte, next int64) error) error

// ReplayError names the journal line where a replay stopped.
type ReplayError struct {
	Line int
	Err  error
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("events.jsonl line %d: %v", e.Line, e.Err)
}

func (e *ReplayError) Unwrap() error { return e.Err }

func replay(ctx context.Context, rf replayFunc, st *state.State, from int64, line int) error {
	return rf(ctx, from, func(rec []byte, _ int64) error {
		line++
		var ev state.Event
		if err := json.Unmarshal(rec, &ev); err != nil {
			return &ReplayError{Line: line, Err: fmt.Errorf("not an event: %w", err)}
		}
		if err := st.Step(ev); err != nil {
			return &ReplayError{Line: line, Err: err}
		}
		return nil
	})
}

// Fold reads a run folder without taking it over (a live run may be
// writing it) and returns its state. With verify set it ignores the
// snapshot and re-judges every event from the first.
func Fold(ctx context.Context, dir string, verify bool) (*state.State, error) {
	if _, err := journal.ReadManifest(dir); err != nil {
		return nil, fmt.Errorf("%s is not a fractal run folder: %w", dir, err)
	}
	events := filepath.Join(dir, EventsFile)
	rf := func(ctx context.Context, from int64, fn func(rec []byte, next int64) error) error {
		return journal.ReadFile(ctx, events, from, fn)
	}
	snap := filepath.Join(dir, SnapshotFile)
	if verify {
		snap = ""
	}
	return fold(ctx, rf, snap)
}

// Result is how Run ended.
type Result struct {
	Stage       state.Stage
	Reason      string
	Deliverable []string // run-relative paths
	// Questions lists what the user must rule on when Stage is
	// awaiting_user.
	Questions []string
}

// Run drives the run until it is done, failed, needs the user, or ctx is
// cancelled. A cancelled run can be resumed later with Open + Run.
func (e *Engine) Run(ctx context.Context) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	e.cancel = cancel
	defer cancel()
	var fin *state.RunFinished
	e.view(func(s *state.State) {
		if s.Finished != nil {
			f := *s.Finished
			fin = &f
		}
	})
	if fin != nil {
		return Result{Stage: fin.Status, Reason: fin.Reason, Deliverable: fin.Deliverable}, nil
	}
	pool := e.cfg.Pool
	if pool <= 0 {
		e.view(func(s *state.State) { pool = s.Policy.Pool })
	}
	e.pool = make(chan struct{}, max(pool, 1))
	bps, err := loadBlueprints(e.cfg.Home)
	if err != nil {
		return Result{}, err
	}
	e.blueprints = bps
	e.dog = watchdog.New(e.watchdogLimits())
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		e.watchStalls(ctx, e.cfg.StallTick)
	}()
	if err := e.recover(ctx); err != nil {
		return Result{}, err
	}
	if err := e.start(ctx); err != nil {
		var fr *failedRun
		switch {
		case errors.Is(err, errNeedsUser):
			if err := e.setStage(ctx, state.StageAwaitingUser, "host", "the plan of work needs the person"); err != nil {
				return Result{}, err
			}
			return Result{Stage: state.StageAwaitingUser, Questions: e.raised()}, nil
		case errors.As(err, &fr):
			if err := e.commit(ctx, state.Event{Type: state.TRunFinished, RunFinished: &state.RunFinished{Status: state.StageFailed, Reason: fr.reason}}); err != nil {
				return Result{}, err
			}
			_ = e.syncManifest(state.StageFailed)
			return Result{Stage: state.StageFailed, Reason: fr.reason}, nil
		}
		return Result{}, err
	}
	res, err := e.superviseSession(ctx)
	cancel()
	e.wg.Wait()
	if ferr := e.failed(); ferr != nil {
		return Result{}, ferr
	}
	if res.Stage == state.StageCancelled {
		_ = e.syncManifest(state.StageCancelled)
	}
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// recover prepares a reopened run: attempts that were building when the
// process died become interrupted (their tool calls may have happened or
// not; the parent decides), and instances caught mid-capability return to
// idle so their drivers can start over from what the journal says.
func (e *Engine) recover(ctx context.Context) error {
	var evs []state.Event
	e.view(func(s *state.State) {
		for _, id := range sortedKeys(s.Inst) {
			in := s.Inst[id]
			if in.Retired {
				continue
			}
			a := s.CurrentAttempt(id)
			building := a != nil && a.Status == state.AttemptRunning && id != state.Session &&
				s.Granularity(id) == policy.Direct
			if building {
				evs = append(evs, state.Event{Type: state.TAttemptEnded, AttemptEnded: &state.AttemptEnded{Instance: id, Attempt: a.ID, Status: state.AttemptInterrupted, Reason: "the host stopped while this attempt was working"}})
				continue
			}
			if in.Mode != state.Idle {
				evs = append(evs, state.Event{Type: state.TModeChanged, ModeChanged: &state.ModeChanged{Instance: id, To: state.Idle}})
			}
		}
	})
	for _, ev := range evs {
		if err := e.note(ev); err != nil {
			return fmt.Errorf("engine: recover: %w", err)
		}
	}
	return e.flush(ctx)
}

// setStage moves the run's stage: the event first (the journal is the
// truth), then the manifest's compare-and-swap.
func (e *Engine) setStage(ctx context.Context, to state.Stage, by, reason string) error {
	var from state.Stage
	e.view(func(s *state.State) { from = s.Stage })
	if from != to {
		if err := e.commit(ctx, state.Event{Type: state.TStageChanged, StageChanged: &state.StageChanged{From: from, To: to, By: by, Reason: reason}}); err != nil {
			return err
		}
	}
	return e.syncManifest(to)
}

// start walks a run to running (DA-A4): through clarifying and
// bootstrapping the first time — a run started from a task file has its
// contracts already, and no task harness to review, which the bootstrap
// record says plainly — and back from awaiting_user or paused when the
// user resumes it.
func (e *Engine) start(ctx context.Context) error {
	var (
		cur    state.Stage
		passed bool
		raw    bool
	)
	e.view(func(s *state.State) { cur, passed, raw = s.Stage, s.BootstrapPassed, s.Raw })
	if raw && (cur == state.StageSubmitted || cur == state.StageClarifying || cur == state.StageBootstrap) {
		return e.intake(ctx)
	}
	switch cur {
	case state.StageSubmitted:
		if err := e.setStage(ctx, state.StageClarifying, "host", "the task file states the contracts: nothing to ask"); err != nil {
			return err
		}
		fallthrough
	case state.StageClarifying:
		if err := e.setStage(ctx, state.StageBootstrap, "host", "the contracts are agreed"); err != nil {
			return err
		}
		fallthrough
	case state.StageBootstrap:
		if !passed {
			if err := e.commit(ctx, state.Event{Type: state.TBootstrapReviewed, BootstrapReviewed: &state.BootstrapReviewed{Passed: true, By: "task file",
				Note: "the contracts were given in a task file; no task harness was written, so there was none to review"}}); err != nil {
				return err
			}
		}
		return e.setStage(ctx, state.StageRunning, "host", "work starts")
	case state.StageAwaitingUser, state.StagePaused:
		return e.setStage(ctx, state.StageRunning, "user", "the user resumed the run")
	}
	return e.syncManifest(cur)
}

func (e *Engine) syncManifest(to state.Stage) error {
	for range 5 {
		m, err := journal.ReadManifest(e.dir)
		if err != nil {
			return err
		}
		if m.Stage == string(to) {
			return nil
		}
		_, err = journal.SwapStage(e.dir, m.Stage, m.Version, string(to), e.cfg.Clock().UTC())
		if err == nil || !errors.Is(err, journal.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("engine: manifest keeps changing under us; another process is writing %s", e.dir)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// writeContractLater writes contracts/<id>.yaml off the critical path: the
// file is for people; the journal already holds the contract. Close waits
// for the writes.
func (e *Engine) writeContractLater(c contract.Contract) {
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		_ = e.writeContract(c)
	}()
}
