package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fractal-harness/fractal/blueprints"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/scope"
	"github.com/fractal-harness/fractal/state"
)

// RootContract is the delegation contract of a run: scope's root with the
// policy's token budget, concurrency and daily limit. Every instance's
// contract descends from it.
func RootContract(p policy.Policy) scope.DelegationContract {
	c := scope.Root()
	if p.Budget.Tokens > 0 {
		c.Budget.MaxTokens = p.Budget.Tokens
	}
	c.Budget.MaxConcurrent = p.MaxConcurrent
	c.Budget.DailyLimit = p.DailyLimit
	// Everyone may read the task harness; no one writes it but Meta's
	// audited tool (DA-B3).
	c.Scope.Read = append(c.Scope.Read, "harness")
	c.Identity.AgentKind = "run"
	return c
}

// DefaultAgent is the agent kind of a child whose plan names no blueprint.
const DefaultAgent = "general"

// childPacket derives a child's work packet from its parent's (F-D4.5,
// DC3): the parent's delegation contract, cloned down to the child's own
// folder, a share of the parent's free tokens, and a deadline no later than
// the parent's. A task that names a blueprint starts from the blueprint's
// request instead of full inheritance. Called with the state locked.
func (e *Engine) childPacket(s *state.State, parent string, t *state.Task, now time.Time) (state.Packet, error) {
	p := s.Inst[parent]
	pc := p.Packet.Contract
	// The carve: an even share of what the parent has free among the
	// tasks that still have to start (this one included).
	waiting := 0
	for _, o := range p.Tasks {
		switch o.Status {
		case state.TaskAccepted, state.TaskRunning, state.TaskSubmitted, state.TaskAbandoned:
		default:
			waiting++
		}
	}
	carve := s.FreeTokens(parent) / int64(max(waiting, 1))
	if carve < 1 {
		return state.Packet{}, &state.Violation{Code: state.EBudget, Detail: fmt.Sprintf("%s has no tokens left to give %s", parent, t.ID)}
	}
	req := scope.Request{AgentKind: DefaultAgent, Inherit: scope.InheritFull, DispatchTargets: pc.DispatchTargets}
	if kind := e.agentOf(s, parent, t.ID); kind != "" {
		bp, ok := e.blueprints[kind]
		if !ok {
			return state.Packet{}, fmt.Errorf("task %s names agent %q, which no blueprint defines", t.ID, kind)
		}
		req = bp.Request()
	}
	// Every child writes its own folder only and reads the inputs and its
	// parent's folder (the accepted work of its siblings).
	req.Scope = scope.Scope{Read: []string{InputsDir, "harness", p.Boundary}}
	if !req.Constraints.ReadOnly {
		req.Scope.Write = []string{t.Boundary}
	}
	if parent == state.Session {
		req.Scope.Read = []string{InputsDir, "harness", t.Boundary}
	}
	if req.Budget.MaxTokens == 0 || req.Budget.MaxTokens > carve {
		req.Budget.MaxTokens = carve
	}
	cc, err := scope.Clone(pc, req)
	if err != nil {
		return state.Packet{}, err
	}
	deadline := now.Add(time.Duration(cc.TimeoutMs) * time.Millisecond)
	if !p.Packet.Deadline.IsZero() && deadline.After(p.Packet.Deadline) {
		deadline = p.Packet.Deadline
	}
	packet := state.Packet{Contract: cc, Deadline: deadline}
	if a := s.CurrentAttempt(parent); a != nil {
		packet.Checkpoint = a.Checkpoint
	}
	return packet, nil
}

// agentOf is the agent kind a plan names for a task.
func (e *Engine) agentOf(s *state.State, parent, task string) string {
	p := s.Inst[parent]
	if p.Plan == nil {
		return ""
	}
	for _, pt := range p.Plan.Tasks {
		if pt.ID == task {
			return pt.Agent
		}
	}
	return ""
}

// ledger counts spawns per agent kind per day in the user's fractal home,
// so a daily limit holds across runs and restarts (DC6): one append-only
// file per day (<home>/ledger/2006-01-02.log), a line per spawn, under an
// exclusive lock. Appending creates no file after the day's first spawn,
// and a torn last line only undercounts nothing: a crash between counting
// and delegating counts one spawn too many, never one too few.
type ledger struct {
	path string // the ledger folder
}

// take counts one spawn of kind today unless limit is reached.
func (l *ledger) take(kind string, limit int, now time.Time) (int, error) {
	if l == nil || l.path == "" {
		return 0, nil
	}
	if err := os.MkdirAll(l.path, 0o755); err != nil {
		return 0, fmt.Errorf("ledger: %w", err)
	}
	day := now.UTC().Format("2006-01-02")
	f, err := os.OpenFile(filepath.Join(l.path, day+".log"), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return 0, fmt.Errorf("ledger: lock: %w", err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	b, err := io.ReadAll(f)
	if err != nil {
		return 0, fmt.Errorf("ledger: %w", err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if line == kind {
			n++
		}
	}
	if limit > 0 && n >= limit {
		return n, &state.Violation{Code: EDailyLimit, Detail: fmt.Sprintf("agent kind %q has had its %d spawns today (limit %d)", kind, n, limit)}
	}
	if _, err := f.WriteString(kind + "\n"); err != nil {
		return 0, fmt.Errorf("ledger: %w", err)
	}
	if n == 0 {
		l.prune(now)
	}
	return n + 1, nil
}

// prune removes the days older than a week.
func (l *ledger) prune(now time.Time) {
	old := now.UTC().AddDate(0, 0, -7).Format("2006-01-02")
	ents, _ := os.ReadDir(l.path)
	for _, e := range ents {
		if day, ok := strings.CutSuffix(e.Name(), ".log"); ok && day < old {
			_ = os.Remove(filepath.Join(l.path, e.Name()))
		}
	}
}

// EDailyLimit is the code of a spawn refused by the daily ledger. It is the
// host's, not the Guard's: the ledger lives outside the run.
const EDailyLimit = "E-DAILY-LIMIT"

// deadlineOf returns the instance's deadline, zero if none.
func (e *Engine) deadlineOf(id string) time.Time {
	var d time.Time
	e.view(func(s *state.State) {
		if in := s.Inst[id]; in != nil {
			d = in.Packet.Deadline
		}
	})
	return d
}

// withDeadline bounds ctx by the instance's deadline (DC7).
func (e *Engine) withDeadline(ctx context.Context, id string) (context.Context, context.CancelFunc) {
	if d := e.deadlineOf(id); !d.IsZero() {
		return context.WithDeadline(ctx, d)
	}
	return context.WithCancel(ctx)
}

// timedOut reports whether the instance's deadline has passed.
func (e *Engine) timedOut(id string) bool {
	d := e.deadlineOf(id)
	return !d.IsZero() && !e.cfg.Clock().Before(d)
}

// progressed records progress of an instance for the stall monitor.
func (e *Engine) progressed(id string) {
	e.progMu.Lock()
	if e.lastProgress == nil {
		e.lastProgress = map[string]time.Time{}
	}
	e.lastProgress[id] = e.cfg.Clock()
	delete(e.stalled, id)
	e.progMu.Unlock()
	if e.dog != nil {
		e.dog.Progress(id, e.cfg.Clock())
	}
}

// watchStalls raises a stall alert for every building instance that made
// no progress for its contract's stall threshold (DC7). It never stops
// anything: the alert is an event for the parent.
func (e *Engine) watchStalls(ctx context.Context, tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := e.cfg.Clock()
		e.pollRequests(ctx)
		e.checkWatchdog(now)
		var alerts []state.Event
		e.progMu.Lock()
		e.view(func(s *state.State) {
			for id, in := range s.Inst {
				a := s.CurrentAttempt(id)
				th := in.Packet.Contract.StallThresholdMs
				if id == state.Session || in.Retired || a == nil || a.Status != state.AttemptRunning || in.Mode != state.Build || th <= 0 {
					continue
				}
				last, ok := e.lastProgress[id]
				if !ok {
					e.lastProgress[id] = now
					continue
				}
				if now.Sub(last) >= time.Duration(th)*time.Millisecond && !e.stalled[id] {
					if e.stalled == nil {
						e.stalled = map[string]bool{}
					}
					e.stalled[id] = true
					alerts = append(alerts, state.Event{Type: state.TStallAlert, StallAlert: &state.StallAlert{Instance: id, Since: last,
						Note: fmt.Sprintf("no progress for %s (threshold %s)", now.Sub(last).Round(time.Millisecond), time.Duration(th)*time.Millisecond)}})
				}
			}
		})
		e.progMu.Unlock()
		for _, ev := range alerts {
			_ = e.note(ev)
		}
	}
}

// knownTools are the capability tools this engine can run; a contract may
// grant others (web_fetch), which are then simply not offered.
var knownTools = []string{"read_file", "write_file", "list_dir", "inventory"}

// contractTools lists the tools a contract grants that the engine has.
func contractTools(c scope.DelegationContract) []string {
	var out []string
	for _, t := range c.Tools() {
		if slices.Contains(knownTools, t) {
			out = append(out, t)
		}
	}
	return out
}

// loadBlueprints returns the shipped blueprints and the user's own, from
// <home>/blueprints/*.yaml (a user's blueprint replaces a shipped one of
// the same id).
func loadBlueprints(home string) (map[string]scope.Blueprint, error) {
	out, err := blueprints.All()
	if err != nil {
		return nil, fmt.Errorf("shipped blueprints: %w", err)
	}
	if home == "" {
		return out, nil
	}
	files, _ := filepath.Glob(filepath.Join(home, "blueprints", "*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		bp, err := scope.ParseBlueprint(b, f)
		if err != nil {
			return nil, err
		}
		out[bp.ID] = bp
	}
	return out, nil
}
