package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/state"
)

// errStopped ends a driver whose run is stopping (cancelled, or waiting for
// the user). Its attempt stays running in the journal; a resume picks it up.
var errStopped = errors.New("engine: stopped")

// enter moves instance id to mode, through idle when it is in another one
// (I-OneMode: one capability at a time).
func (e *Engine) enter(id string, mode state.Mode) error {
	var cur state.Mode
	e.view(func(s *state.State) { cur = s.Inst[id].Mode })
	if cur == mode {
		return nil
	}
	if cur != state.Idle {
		if err := e.note(modeEv(id, state.Idle)); err != nil {
			return err
		}
	}
	if mode == state.Idle {
		return nil
	}
	return e.note(modeEv(id, mode))
}

func modeEv(id string, m state.Mode) state.Event {
	return state.Event{Type: state.TModeChanged, ModeChanged: &state.ModeChanged{Instance: id, To: m}}
}

// launch starts a driver for child unless one is running.
func (e *Engine) launch(ctx context.Context, child string) {
	if _, busy := e.running.LoadOrStore(child, struct{}{}); busy {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer func() {
			e.running.Delete(child)
			// The parent may have delegated a retry while this driver was
			// finishing; waking it again lets it launch a fresh driver.
			e.mu.Lock()
			if in := e.st.Inst[child]; in != nil {
				e.wakeLocked(in.Parent)
			}
			e.mu.Unlock()
		}()
		defer e.crashed(ctx, child)
		e.drive(ctx, child)
	}()
}

// drive processes the instance's current attempt: g(c) decides build or
// decompose (F-D6).
func (e *Engine) drive(ctx context.Context, id string) {
	var (
		attempt string
		g       policy.Granularity
	)
	e.view(func(s *state.State) {
		a := s.CurrentAttempt(id)
		if a == nil || a.Status != state.AttemptRunning {
			return
		}
		attempt = a.ID
		g = s.Granularity(id)
	})
	if attempt == "" {
		return
	}
	e.progressed(id)
	// DC7: the attempt ends at the contract's deadline, whatever it does.
	dctx, cancel := e.withDeadline(ctx, id)
	defer cancel()
	var err error
	if g == policy.Direct {
		err = e.build(dctx, id, attempt)
	} else {
		_, err = e.supervise(dctx, id, attempt)
	}
	if ctx.Err() != nil || e.failed() != nil {
		return
	}
	ended := &state.AttemptEnded{Instance: id, Attempt: attempt, Status: state.AttemptFailed}
	switch {
	case e.timedOut(id) && (err != nil || dctx.Err() != nil):
		ended.Status, ended.Reason = state.AttemptTimeout, fmt.Sprintf("the deadline %s passed", e.deadlineOf(id).Format(time.RFC3339))
	case err == nil || errors.Is(err, errStopped):
		return
	default:
		ended.Reason = err.Error()
	}
	// The attempt cannot go on (the model broke, the plan never came, the
	// deadline passed): it ends, and the parent decides by policy.
	var still bool
	e.view(func(s *state.State) {
		a := s.Attempt[attempt]
		still = a != nil && a.Status == state.AttemptRunning
	})
	if !still {
		return
	}
	_ = e.enter(id, state.Idle)
	var v *state.Violation
	if errors.As(err, &v) {
		ended.Code = string(v.Code)
	}
	if ended.Status == state.AttemptTimeout {
		ended.Code = ""
	}
	if cerr := e.commit(ctx, state.Event{Type: state.TAttemptEnded, AttemptEnded: ended}); cerr != nil && e.failed() == nil {
		e.fail(cerr)
	}
}

// job is one piece of supervision work found in a view of the state.
type job struct {
	task, child, attempt string
	verdict              policy.Verdict
	failed               []int
}

// supervise is plan → delegate → supervise for a decomposing instance, and
// the whole life of the session (whose plan is the discussion's
// contracts). It returns when every task is accepted and the instance has
// submitted its own evidence (or, for the session, the run is delivered),
// or with the questions the user must answer.
func (e *Engine) supervise(ctx context.Context, id, attempt string) ([]string, error) {
	wake := e.wakeCh(id)
	refused := map[string]string{} // tasks whose spawn was refused → why
	for {
		if ctx.Err() != nil || e.failed() != nil {
			return nil, errStopped
		}
		var (
			verdicts, decisions []job
			ready               []*state.Task
			orphans             []string
			asked               []string
			needPlan, all       bool
			busy                int
			replans             int
			free                = -1 // children that may still start; -1: no limit
		)
		e.view(func(s *state.State) {
			in := s.Inst[id]
			if id != state.Session {
				needPlan = s.NeedsPlan(id)
			}
			replans = in.Replans
			if m := in.Packet.Contract.Budget.MaxConcurrent; m > 0 {
				free = max(0, m-s.RunningChildren(id))
			}
			if in.Plan == nil {
				return
			}
			for _, pt := range in.Plan.Tasks {
				t := in.Tasks[pt.ID]
				switch {
				case t.Status == state.TaskSubmitted:
					a := s.Attempt[t.Attempts[len(t.Attempts)-1]]
					c := s.Contract[t.Contract]
					verdicts = append(verdicts, job{task: t.ID, child: t.Assignee, attempt: a.ID, verdict: verdictOf(c, a), failed: contract.Failed(*a.Evidence)})
					busy++
				case t.Status.AwaitsDecision():
					decisions = append(decisions, job{task: t.ID, child: t.Assignee})
				case t.Status == state.TaskRunning:
					busy++
					if _, ok := e.running.Load(t.Assignee); !ok {
						orphans = append(orphans, t.Assignee)
					}
				case t.Status == state.TaskAskUser:
					asked = append(asked, question(s, in, t))
				}
			}
			if !needPlan {
				for _, t := range s.Ready(id) {
					c := *t
					ready = append(ready, &c)
				}
			}
			all = s.AllAccepted(id)
		})
		for _, c := range orphans {
			e.launch(ctx, c)
		}
		if id == state.Session {
			if qs := e.raised(); len(qs) > 0 {
				return qs, nil
			}
		}
		if len(verdicts) > 0 || (len(decisions) > 0 && !needPlan) {
			if err := e.enter(id, state.Supervise); err != nil {
				return nil, err
			}
			for _, j := range verdicts {
				if err := e.note(state.Event{Type: state.TVerdict, Verdict: &state.Verdict{By: id, Child: j.child, Task: j.task, Attempt: j.attempt, Verdict: j.verdict, Failed: j.failed}}); err != nil {
					return nil, err
				}
			}
			if !needPlan {
				for _, j := range decisions {
					var act policy.Action
					e.view(func(s *state.State) { act = s.Decide(id, j.task, 0) })
					if err := e.note(state.Event{Type: state.TDecision, Decision: &state.Decision{By: id, Task: j.task, Action: act}}); err != nil {
						return nil, err
					}
				}
			}
			continue
		}
		if needPlan {
			if busy > 0 {
				goto wait // a replan waits for the old plan's running children
			}
			if err := e.plan(ctx, id, attempt); err != nil {
				return nil, err
			}
			continue
		}
		ready = slices.DeleteFunc(ready, func(t *state.Task) bool { _, no := refused[t.ID]; return no })
		if len(ready) > 0 && free != 0 {
			if err := e.enter(id, state.Delegate); err != nil {
				return nil, err
			}
			// Delegations are recorded together and made durable once,
			// before any child is launched. At most max_concurrent
			// children run at once; the rest wait (DC6).
			var children []string
			room := free
			for _, t := range ready {
				if room == 0 {
					break
				}
				ev, err := e.delegation(id, t, replans)
				if err == nil {
					err = e.note(ev)
				}
				var v *state.Violation
				if errors.As(err, &v) {
					// A refused spawn (budget, daily limit) is recorded and
					// goes to the user; the run does not crash, and the
					// task is not offered again in this process.
					if ev.Type == "" {
						_ = e.note(state.Event{Type: state.TRefused, Refused: &state.Refused{Instance: id, Proposed: state.TDelegated, Code: string(v.Code), Detail: v.Detail}})
					}
					refused[t.ID] = fmt.Sprintf("%q cannot start: %s.", firstLine(t.ID), v.Detail)
					continue
				}
				if err != nil {
					return nil, err
				}
				room--
				children = append(children, ev.Delegated.Child)
			}
			if err := e.flush(ctx); err != nil {
				return nil, err
			}
			for _, c := range children {
				e.launch(ctx, c)
			}
			if err := e.enter(id, state.Supervise); err != nil {
				return nil, err
			}
			if len(children) > 0 {
				continue
			}
		}
		if all {
			if err := e.enter(id, state.Supervise); err != nil {
				return nil, err
			}
			if id == state.Session {
				return nil, nil
			}
			return nil, e.aggregate(ctx, id, attempt)
		}
		if busy == 0 {
			for _, q := range refused {
				asked = append(asked, q)
			}
		}
		if len(asked) > 0 && busy == 0 {
			if id == state.Session {
				return asked, nil
			}
			e.raise(asked)
		}
	wait:
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, errStopped
		}
	}
}

// question says in plain words what the user must rule on for task t.
func question(s *state.State, in *state.Instance, t *state.Task) string {
	c := s.Contract[t.Contract]
	msg := fmt.Sprintf("%q did not pass its checks after %d attempt(s)", firstLine(c.Intent), len(t.Attempts))
	if n := len(t.Attempts); n > 0 {
		if a := s.Attempt[t.Attempts[n-1]]; a != nil {
			if a.Evidence != nil {
				msg += "; failing: " + describeFailures(c, *a.Evidence)
			} else if a.Reason != "" {
				msg += "; " + a.Reason
			}
		}
	}
	return msg + ". Retry it, change what is asked, or stop the run?"
}

// raise hands questions from a nested instance to the session, which stops
// the run in awaiting_user.
func (e *Engine) raise(qs []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, q := range qs {
		if !slices.Contains(e.questions, q) {
			e.questions = append(e.questions, q)
		}
	}
	e.wakeLocked(state.Session)
}

func (e *Engine) raised() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.questions)
}

// delegation builds the delegated event for a ready task: a retry goes to
// the same instance, a first assignment or a reassignment to a new one.
func (e *Engine) delegation(parent string, t *state.Task, replans int) (state.Event, error) {
	var ev state.Event
	var err error
	e.view(func(s *state.State) {
		child := t.Assignee
		if t.Status != state.TaskRetry {
			base := t.ID
			if parent != state.Session {
				base = parent + "/" + t.ID
			}
			if replans > 0 {
				base += fmt.Sprintf("~%d", replans)
			}
			child = base
			for n := 2; s.Inst[child] != nil; n++ {
				child = fmt.Sprintf("%s@%d", base, n)
			}
		}
		packet, perr := e.childPacket(s, parent, t, e.cfg.Clock())
		if perr != nil {
			err = perr
			return
		}
		feedback := ""
		if n := len(t.Attempts); n > 0 && t.Status == state.TaskRetry {
			if a := s.Attempt[t.Attempts[n-1]]; a != nil {
				if a.Evidence != nil {
					feedback = "Your previous attempt was rejected. Failing checks: " + describeFailures(s.Contract[t.Contract], *a.Evidence)
				} else if a.Reason != "" {
					feedback = "Your previous attempt ended without a result: " + a.Reason
				}
			}
		}
		attempt := fmt.Sprintf("%s#%d", child, len(t.Attempts)+1)
		if s.Attempt[attempt] != nil {
			err = fmt.Errorf("engine: attempt id %s is taken", attempt)
			return
		}
		ev = state.Event{Type: state.TDelegated, Delegated: &state.Delegated{
			Parent: parent, Task: t.ID, Child: child, Contract: t.Contract, Boundary: t.Boundary,
			Attempt: attempt, Packet: packet, Feedback: feedback,
		}}
	})
	if err != nil {
		return state.Event{}, err
	}
	// The daily ledger is a file in the user's home: counted outside the
	// engine's lock (DC6).
	c := ev.Delegated.Packet.Contract
	if _, err := e.ledger.take(c.Identity.AgentKind, c.Budget.DailyLimit, e.cfg.Clock()); err != nil {
		return state.Event{}, err
	}
	return ev, nil
}

func describeFailures(c contract.Contract, ev contract.Evidence) string {
	var parts []string
	for _, r := range ev.Results {
		if r.Pass && r.Err == "" {
			continue
		}
		why := r.Detail
		if r.Err != "" {
			why = r.Err
		}
		if r.Rationale != "" {
			why = strings.TrimSpace(why + " " + r.Rationale)
		}
		if r.Check >= 0 && r.Check < len(c.Checks) {
			parts = append(parts, fmt.Sprintf("check %d (%s %s): %s", r.Check+1, c.Checks[r.Check].Kind, checkTarget(c.Checks[r.Check]), why))
		}
	}
	return strings.Join(parts, "; ")
}

func checkTarget(ch contract.Check) string {
	if ch.Kind == contract.Rubric {
		return fmt.Sprintf("%q", firstLine(ch.Text))
	}
	return ch.Path
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

// aggregate runs when every child is accepted: promote the planned files
// into the instance's own boundary, evaluate its own checks there (the
// verify-after-merge checks included) and submit the evidence to the parent.
func (e *Engine) aggregate(ctx context.Context, id, attempt string) error {
	var (
		files  []state.MergedFile
		merged bool
		c      contract.Contract
		bound  string
	)
	e.view(func(s *state.State) {
		in := s.Inst[id]
		merged, c, bound = in.Merged, s.Contract[in.Contract], in.Boundary
		for _, p := range in.Plan.Promote {
			t := in.Tasks[p.Task]
			files = append(files, state.MergedFile{From: t.Boundary + "/" + p.From, To: in.Boundary + "/" + p.To})
		}
	})
	for i := range files {
		sum, err := fileSHA(filepath.Join(e.dir, filepath.FromSlash(files[i].From)))
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		files[i].SHA256 = sum
	}
	if !merged {
		if err := e.commit(ctx, state.Event{Type: state.TMerged, Merged: &state.Merged{Instance: id, Files: files}}); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := copyFile(filepath.Join(e.dir, filepath.FromSlash(f.From)), filepath.Join(e.dir, filepath.FromSlash(f.To))); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
	}
	for _, f := range files {
		if err := syncFile(filepath.Join(e.dir, filepath.FromSlash(f.To))); err != nil {
			return fmt.Errorf("make the merge durable: %w", err)
		}
	}
	ev := e.evaluate(ctx, id, c, bound)
	if ctx.Err() != nil {
		return errStopped
	}
	// The children accounted for the SOP's steps between them.
	var sop []string
	e.view(func(s *state.State) { sop = s.Inst[id].Packet.Contract.SOP })
	sub := submission{summary: "merged from the accepted work of its parts", accounted: map[int]string{}}
	for i := range sop {
		sub.accounted[i+1] = "done by the parts this work was split into"
	}
	g := e.gates(ctx, id, c, ev, sub)
	if ctx.Err() != nil {
		return errStopped
	}
	return e.commit(ctx, state.Event{Type: state.TEvidenceSubmitted, EvidenceSubmitted: &state.EvidenceSubmitted{Instance: id, Attempt: attempt, Evidence: ev, Summary: sub.summary, Gates: g}})
}

// superviseSession drives the session and, when every top-level contract is
// accepted, hands the deliverable over.
func (e *Engine) superviseSession(ctx context.Context) (Result, error) {
	asked, err := e.supervise(ctx, state.Session, "")
	e.pauseMu.Lock()
	cancelled := e.cancelled
	e.pauseMu.Unlock()
	if cancelled {
		return Result{Stage: state.StageCancelled, Reason: "cancelled by the user"}, nil
	}
	if errors.Is(err, errStopped) {
		asked = e.raised()
		if len(asked) == 0 {
			if e.failed() != nil {
				return Result{}, e.failed()
			}
			return Result{}, ctx.Err()
		}
		err = nil
	}
	if err != nil {
		return Result{}, err
	}
	if len(asked) > 0 {
		by := "host"
		if e.metaAsked() {
			by = "meta"
		}
		if err := e.setStage(context.WithoutCancel(ctx), state.StageAwaitingUser, by, "a decision is needed"); err != nil {
			return Result{}, err
		}
		return Result{Stage: state.StageAwaitingUser, Questions: asked}, nil
	}
	// DA-B1 (d): Meta reads every deliverable before delivery; the host
	// checks its tool log, not its word.
	report, err := e.finalReading(ctx)
	if err != nil {
		return Result{}, err
	}
	files, err := e.deliver()
	if err != nil {
		return Result{}, err
	}
	if err := os.WriteFile(filepath.Join(e.dir, Deliverable, "REPORT.md"), []byte(report), 0o644); err != nil {
		return Result{}, err
	}
	files = append(files, Deliverable+"/REPORT.md")
	if err := e.enter(state.Session, state.Idle); err != nil {
		return Result{}, err
	}
	if err := e.commit(ctx, state.Event{Type: state.TRunFinished, RunFinished: &state.RunFinished{Status: state.StageDone, Reason: "every contract was accepted", Deliverable: files}}); err != nil {
		return Result{}, err
	}
	if err := e.syncManifest(state.StageDone); err != nil {
		return Result{}, err
	}
	return Result{Stage: state.StageDone, Deliverable: files}, nil
}

// deliver copies what each accepted top-level contract's checks name into
// deliverable/ (one folder per contract when there are several).
func (e *Engine) deliver() ([]string, error) {
	type item struct{ from, to string }
	var items []item
	e.view(func(s *state.State) {
		sess := s.Inst[state.Session]
		multi := len(sess.Plan.Tasks) > 1
		for _, pt := range sess.Plan.Tasks {
			t := sess.Tasks[pt.ID]
			c := s.Contract[t.Contract]
			seen := map[string]bool{}
			for _, ch := range c.Checks {
				if ch.Path == "" || ch.Kind == contract.Script || ch.Kind == contract.DirMinFiles || seen[ch.Path] {
					continue
				}
				seen[ch.Path] = true
				to := path.Join(Deliverable, ch.Path)
				if multi {
					to = path.Join(Deliverable, pt.ID, ch.Path)
				}
				items = append(items, item{from: path.Join(t.Boundary, ch.Path), to: to})
			}
		}
	})
	var out []string
	for _, it := range items {
		if err := copyFile(filepath.Join(e.dir, filepath.FromSlash(it.from)), filepath.Join(e.dir, filepath.FromSlash(it.to))); err != nil {
			return nil, fmt.Errorf("deliver: %w", err)
		}
		out = append(out, it.to)
	}
	return out, nil
}

func fileSHA(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copyFile copies a regular file atomically (temp + rename), refusing
// symlinks so a child cannot smuggle a link out through a merge.
func copyFile(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", from)
	}
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	tmp := to + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, to)
}

// crashed turns a panic in an instance's driver into a failed attempt
// (the run must never stay "running" with a dead worker): the parent
// decides, as for any other failure.
func (e *Engine) crashed(ctx context.Context, id string) {
	r := recover()
	if r == nil {
		return
	}
	var attempt string
	e.view(func(s *state.State) {
		if a := s.CurrentAttempt(id); a != nil && a.Status == state.AttemptRunning {
			attempt = a.ID
		}
	})
	if attempt == "" || ctx.Err() != nil {
		return
	}
	_ = e.enter(id, state.Idle)
	if err := e.commit(ctx, state.Event{Type: state.TAttemptEnded, AttemptEnded: &state.AttemptEnded{Instance: id, Attempt: attempt,
		Status: state.AttemptFailed, Reason: fmt.Sprintf("the worker crashed: %v", r)}}); err != nil && e.failed() == nil {
		e.fail(err)
	}
}
