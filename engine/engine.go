// Package engine runs a fractal run: it owns the run's State and journal,
// proposes every event through the Guard, and drives instances — g, then
// build or plan → delegate → supervise — as goroutines under a shared pool
// of model calls (F-D4, F-D5, F-D8, F-D9).
//
// Effects (model calls, tool calls, file copies) happen only after the event
// that announces them passed the Guard, and, where an effect is not free to
// repeat, after that event is durable. A run can be killed at any moment and
// reopened: the state is refolded from the journal, attempts that were
// building are marked interrupted and their parents decide, and every other
// instance simply carries on from what the journal says.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fractal-harness/fractal/journal"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/scope"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/watchdog"
)

// File names inside a run folder.
const (
	EventsFile      = "events.jsonl"
	SnapshotFile    = "snapshot.json"
	WorkDir         = "work"
	InputsDir       = "inputs"
	TranscriptsFile = "transcripts.jsonl"
	Deliverable     = "deliverable"
	ContractsDir    = "contracts"
)

// Config is how a run is driven. Only Models is required.
type Config struct {
	// Models returns the model for a role. Required.
	Models func(model.Role) model.Model
	// Clock defaults to time.Now. Events carry its readings.
	Clock func() time.Time
	// Progress receives one human-readable line per notable event; nil
	// discards them.
	Progress io.Writer
	// NoTranscripts skips writing each model call's request and answer under
	// transcripts/ (benchmarks only; a real run keeps them for replay).
	NoTranscripts bool
	// SnapshotEvery writes snapshot.json every so many events (default
	// 20000) and on Close.
	SnapshotEvery int
	// Pool overrides the policy's pool size for this process when > 0.
	Pool int
	// Home is the user's fractal home (default $FRACTAL_HOME, else
	// ~/.fractal): the daily spawn ledger and the user's blueprints live
	// there.
	Home string
	// StallTick is how often the stall monitor looks (default 1s).
	StallTick time.Duration
	// In and Out are the person's terminal, for the discussion's questions
	// in interactive mode.
	In  io.Reader
	Out io.Writer
}

// Engine drives one run folder. Create or Open it, call Run, then Close.
type Engine struct {
	dir  string
	cfg  Config
	log  *journal.Log
	lock *journal.RunLock

	mu       sync.Mutex // guards st, enqueued, lastSnap, wake
	st       *state.State
	enqueued int64 // byte offset after the last enqueued event
	lines    int
	lastSnap int64
	last     *journal.Pending
	wake     map[string]chan struct{}

	pool         chan struct{}
	calls        atomic.Int64
	running      sync.Map // instance id → struct{}: has a driver goroutine
	wg           sync.WaitGroup
	bg           sync.WaitGroup // background writes of files for people
	fatalMu      sync.Mutex
	fatal        error
	cancel       context.CancelFunc
	progress     *progress
	txMu         sync.Mutex // guards tx, txEnd
	tx           *os.File
	txEnd        int64
	blueprints   map[string]scope.Blueprint
	ledger       *ledger
	progMu       sync.Mutex     // guards lastProgress, stalled, violations
	violations   map[string]int // instance → boundary refusals in its current attempt
	lastProgress map[string]time.Time
	stalled      map[string]bool
	raw          bool // the run starts from a person's words
	dog          *watchdog.Watchdog
	trips        map[string]string   // instance → pending watchdog trip (guarded by progMu)
	notes        map[string][]string // instance → observations and trips for Meta (guarded by progMu)
	termMu       sync.Mutex          // one question at a time on the terminal
	pauseMu      sync.Mutex          // guards resumed, cancelled
	resumed      chan struct{}       // non-nil while paused; closed on resume
	cancelled    bool
	// askedByMeta marks open questions as Meta's (guarded by progMu).
	askedByMeta bool
	// questions raised by nested instances for the user (guarded by mu).
	questions []string
}

// ErrRunExists is returned by Create when the folder already holds a run.
var ErrRunExists = errors.New("engine: the folder already holds a run")

func (cfg *Config) defaults() error {
	if cfg.Models == nil {
		return errors.New("engine: no model configured")
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.SnapshotEvery <= 0 {
		cfg.SnapshotEvery = 20000
	}
	if cfg.Home == "" {
		cfg.Home = os.Getenv("FRACTAL_HOME")
	}
	if cfg.Home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			cfg.Home = filepath.Join(h, ".fractal")
		}
	}
	if cfg.StallTick <= 0 {
		cfg.StallTick = time.Second
	}
	return nil
}

// Dir is the run folder.
func (e *Engine) Dir() string { return e.dir }

// State returns a deep copy of the current state, for readers.
func (e *Engine) State() *state.State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return cloneState(e.st)
}

func cloneState(s *state.State) *state.State {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("engine: state does not encode: %v", err))
	}
	out := state.New()
	if err := json.Unmarshal(b, out); err != nil {
		panic(fmt.Sprintf("engine: state does not decode: %v", err))
	}
	return out
}

// view runs fn with the state locked. fn must not block or keep pointers.
func (e *Engine) view(fn func(s *state.State)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn(e.st)
}

// record judges ev with the Guard, applies it and enqueues it. It returns
// the pending write; the caller waits on it before any effect that must not
// happen without the event on disk. A refusal is recorded as a refused
// event and returned as a *state.Violation.
func (e *Engine) record(ev state.Event) (*journal.Pending, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.failed(); err != nil {
		return nil, err
	}
	p, err := e.recordLocked(ev)
	if err == nil {
		return p, nil
	}
	var v *state.Violation
	if !errors.As(err, &v) {
		return nil, err
	}
	inst, _ := actor(ev)
	ref := state.Event{Type: state.TRefused, Refused: &state.Refused{Instance: inst, Proposed: ev.Type, Code: string(v.Code), Detail: v.Detail}}
	if _, rerr := e.recordLocked(ref); rerr != nil {
		return nil, rerr
	}
	return nil, v
}

func (e *Engine) recordLocked(ev state.Event) (*journal.Pending, error) {
	ev.Seq = e.st.Seq + 1
	ev.V = state.Version
	ev.Time = e.cfg.Clock().UTC()
	if err := state.Guard(e.st, ev); err != nil {
		return nil, err
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("engine: encode event %d: %w", ev.Seq, err)
	}
	e.st.Apply(ev)
	p := e.log.Enqueue(b)
	e.enqueued += int64(len(b)) + 1
	e.lines++
	e.last = p
	e.progress.event(e.st, ev)
	e.notify(ev)
	return p, nil
}

// commit records ev and waits until it is durable.
func (e *Engine) commit(ctx context.Context, ev state.Event) error {
	p, err := e.record(ev)
	if err != nil {
		return err
	}
	if err := p.Wait(ctx); err != nil {
		return e.waitFailed(ctx, err)
	}
	return e.maybeSnapshot(ctx)
}

// waitFailed sorts a failed wait: a cancelled context only stops the
// caller (the event stays queued and is written anyway); anything else is a
// journal fault that stops the run.
func (e *Engine) waitFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return errStopped
	}
	e.fail(fmt.Errorf("engine: journal write: %w", err))
	return err
}

// flush waits until every event recorded so far is durable.
func (e *Engine) flush(ctx context.Context) error {
	e.mu.Lock()
	last := e.last
	e.mu.Unlock()
	if last == nil {
		return nil
	}
	if err := last.Wait(ctx); err != nil {
		return e.waitFailed(ctx, err)
	}
	return e.maybeSnapshot(ctx)
}

// note records ev without waiting for the disk: for events whose loss in a
// crash costs nothing but a redo (a model call, a mode change).
func (e *Engine) note(ev state.Event) error {
	_, err := e.record(ev)
	return err
}

// fail stops the run for a host fault (the journal could not be written):
// carrying on would act on events that may not be on disk.
func (e *Engine) fail(err error) {
	e.fatalMu.Lock()
	if e.fatal == nil {
		e.fatal = err
		if e.cancel != nil {
			e.cancel()
		}
	}
	e.fatalMu.Unlock()
}

func (e *Engine) failed() error {
	e.fatalMu.Lock()
	defer e.fatalMu.Unlock()
	return e.fatal
}

// notify wakes the parent of the instance an event concerns, so a
// supervising parent re-examines its children. Called with e.mu held.
func (e *Engine) notify(ev state.Event) {
	var child string
	switch ev.Type {
	case state.TEvidenceSubmitted:
		child = ev.EvidenceSubmitted.Instance
	case state.TAttemptEnded:
		child = ev.AttemptEnded.Instance
	default:
		return
	}
	if in := e.st.Inst[child]; in != nil {
		e.wakeLocked(in.Parent)
	}
}

func (e *Engine) wakeLocked(id string) {
	ch := e.wake[id]
	if ch == nil {
		ch = make(chan struct{}, 1)
		e.wake[id] = ch
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (e *Engine) wakeCh(id string) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	ch := e.wake[id]
	if ch == nil {
		ch = make(chan struct{}, 1)
		e.wake[id] = ch
	}
	return ch
}

// maybeSnapshot writes snapshot.json when enough events have passed since
// the last one.
func (e *Engine) maybeSnapshot(ctx context.Context) error {
	e.mu.Lock()
	due := e.st.Seq-e.lastSnap >= int64(e.cfg.SnapshotEvery)
	e.mu.Unlock()
	if !due {
		return nil
	}
	return e.snapshot(ctx)
}

// snapshot writes the state as of the last enqueued event once that event
// is durable, so the snapshot never runs ahead of the journal.
func (e *Engine) snapshot(ctx context.Context) error {
	e.mu.Lock()
	b, err := json.Marshal(e.st)
	off, lines, seq, last := e.enqueued, e.lines, e.st.Seq, e.last
	e.lastSnap = seq
	e.mu.Unlock()
	if err != nil {
		return fmt.Errorf("engine: encode snapshot: %w", err)
	}
	if last != nil {
		if err := last.Wait(ctx); err != nil {
			return err
		}
	}
	return journal.WriteSnapshot(filepath.Join(e.dir, SnapshotFile), journal.Snapshot{Offset: off, Lines: lines, State: b})
}

// Close writes a final snapshot, closes the journal and releases the run.
func (e *Engine) Close() error {
	e.bg.Wait()
	var errs []error
	if e.log != nil {
		if e.failed() == nil {
			errs = append(errs, e.snapshot(context.Background()))
		}
		errs = append(errs, e.log.Close())
	}
	e.txMu.Lock()
	if e.tx != nil {
		errs = append(errs, e.tx.Close())
		e.tx = nil
	}
	e.txMu.Unlock()
	if e.lock != nil {
		errs = append(errs, e.lock.Release())
	}
	return errors.Join(errs...)
}

// actor names the instance an event is about, for refusals and progress.
func actor(ev state.Event) (string, bool) {
	switch ev.Type {
	case state.TPlanRecorded:
		return ev.PlanRecorded.Instance, true
	case state.TModeChanged:
		return ev.ModeChanged.Instance, true
	case state.TDelegated:
		return ev.Delegated.Parent, true
	case state.TCheckpoint:
		return ev.Checkpoint.Instance, true
	case state.TModelCallStarted:
		return ev.ModelCallStarted.Instance, true
	case state.TModelCallFinished:
		return ev.ModelCallFinished.Instance, true
	case state.TToolCallStarted:
		return ev.ToolCallStarted.Instance, true
	case state.TToolCallFinished:
		return ev.ToolCallFinished.Instance, true
	case state.TEvidenceSubmitted:
		return ev.EvidenceSubmitted.Instance, true
	case state.TAttemptEnded:
		return ev.AttemptEnded.Instance, true
	case state.TVerdict:
		return ev.Verdict.By, true
	case state.TDecision:
		return ev.Decision.By, true
	case state.TMerged:
		return ev.Merged.Instance, true
	case state.TContractRegistered:
		return ev.ContractRegistered.By, true
	}
	return state.Session, false
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
