package state

import (
	"fmt"
	"time"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/policy"
)

// Step runs Guard and, if the event passes, Apply. Replays use it so that a
// journal is re-judged event by event.
func (s *State) Step(ev Event) error {
	if err := Guard(s, ev); err != nil {
		return err
	}
	s.Apply(ev)
	return nil
}

// Apply folds one event that Guard accepted into s. It never fails: any
// event it cannot make sense of was refused by Guard already.
func (s *State) Apply(ev Event) {
	s.Seq = ev.Seq
	switch ev.Type {
	case TRunStarted:
		x := ev.RunStarted
		s.RunID, s.Policy, s.Model, s.Raw = x.RunID, x.Policy, x.Model, x.Raw
		s.Stage = StageSubmitted
		root := &Instance{ID: Session, Boundary: x.Boundary, Depth: -1, Mode: Idle}
		root.Packet.Contract = x.Root
		if x.Root.TimeoutMs > 0 {
			root.Packet.Deadline = ev.Time.Add(time.Duration(x.Root.TimeoutMs) * time.Millisecond)
		}
		s.Inst[Session] = root
	case TContractRegistered:
		x := ev.ContractRegistered
		if _, ok := s.Contract[x.Contract.ID]; !ok {
			s.Contract[x.Contract.ID] = x.Contract
			s.Source[x.Contract.ID] = x.Source
		}
	case TPlanRecorded:
		s.applyPlan(ev.PlanRecorded)
	case TModeChanged:
		s.Inst[ev.ModeChanged.Instance].Mode = ev.ModeChanged.To
	case TDelegated:
		s.applyDelegated(ev.Delegated)
	case TCheckpoint:
		s.Attempt[ev.Checkpoint.Attempt].Checkpoint = ev.Checkpoint.ID
	case TModelCallStarted:
		x := ev.ModelCallStarted
		in := s.Inst[x.Instance]
		if in.OpenModel == nil {
			in.OpenModel = map[string]OpenCall{}
		}
		in.OpenModel[x.Call] = OpenCall{Role: x.Role, Reserve: x.Reserve}
		s.Reserved += x.Reserve
		for _, a := range s.path(x.Instance) {
			a.TreeReserved += x.Reserve
		}
	case TModelCallFinished:
		x := ev.ModelCallFinished
		in := s.Inst[x.Instance]
		open := in.OpenModel[x.Call]
		delete(in.OpenModel, x.Call)
		s.Reserved -= open.Reserve
		in.Usage = in.Usage.Add(x.Usage)
		if in.ModelUsage == nil {
			in.ModelUsage = map[string]model.Usage{}
		}
		in.ModelUsage[x.Model] = in.ModelUsage[x.Model].Add(x.Usage)
		for _, a := range s.path(x.Instance) {
			a.TreeReserved -= open.Reserve
			a.TreeTokens += int64(x.Usage.Total())
		}
		s.Usage = s.Usage.Add(x.Usage)
		s.RoleUsage[x.Role] = s.RoleUsage[x.Role].Add(x.Usage)
		if s.RoleModelUsage[x.Role] == nil {
			s.RoleModelUsage[x.Role] = map[string]model.Usage{}
		}
		s.RoleModelUsage[x.Role][x.Model] = s.RoleModelUsage[x.Role][x.Model].Add(x.Usage)
	case TModelAttempt:
	case TToolCallStarted:
		in := s.Inst[ev.ToolCallStarted.Instance]
		if in.OpenTools == nil {
			in.OpenTools = map[string]ToolCallStarted{}
		}
		in.OpenTools[ev.ToolCallStarted.Call] = *ev.ToolCallStarted
	case TToolCallFinished:
		delete(s.Inst[ev.ToolCallFinished.Instance].OpenTools, ev.ToolCallFinished.Call)
	case TRefused:
		s.Refusals++
	case TEvidenceSubmitted:
		x := ev.EvidenceSubmitted
		a := s.Attempt[x.Attempt]
		e := x.Evidence
		a.Evidence, a.Status, a.Gates = &e, AttemptSubmitted, x.Gates
		s.release(a)
		// Submitting ends the capability that produced the evidence.
		s.Inst[x.Instance].Mode = Idle
		if t := s.TaskOf(x.Instance); t != nil {
			t.Status = TaskSubmitted
		}
	case TAttemptEnded:
		x := ev.AttemptEnded
		a := s.Attempt[x.Attempt]
		a.Status, a.Reason = x.Status, x.Reason
		s.release(a)
		in := s.Inst[x.Instance]
		for _, oc := range in.OpenModel {
			s.Reserved -= oc.Reserve
			for _, an := range s.path(x.Instance) {
				an.TreeReserved -= oc.Reserve
			}
		}
		in.OpenTools, in.OpenModel = nil, nil
		in.Mode = Idle
		if t := s.TaskOf(x.Instance); t != nil {
			if x.Status == AttemptInterrupted {
				t.Status = TaskInterrupted
			} else {
				t.Status = TaskFailed
				t.Tally.OverBudget = x.Code == string(EBudget)
			}
		}
	case TVerdict:
		x := ev.Verdict
		a := s.Attempt[x.Attempt]
		t := s.Inst[x.By].Tasks[x.Task]
		if x.Verdict == policy.Accept {
			a.Status, t.Status = AttemptPassed, TaskAccepted
		} else {
			a.Status, t.Status = AttemptFailed, TaskRejected
		}
	case TDecision:
		s.applyDecision(ev.Decision)
	case TMerged:
		s.Inst[ev.Merged.Instance].Merged = true
	case TStageChanged:
		s.Stage = ev.StageChanged.To
	case THelpRequested:
		in := s.Inst[ev.HelpRequested.Instance]
		in.HelpRounds, in.HelpOpen = ev.HelpRequested.Round, true
	case THelpDecided:
		x := ev.HelpDecided
		in := s.Inst[x.Instance]
		in.HelpOpen = false
		if x.Approved && x.Revision != nil {
			in.Packet.Contract = *x.Revision
		}
		if x.Approved && !x.Deadline.IsZero() {
			in.Packet.Deadline = x.Deadline
		}
	case TStallAlert:
		s.Inst[ev.StallAlert.Instance].Stalls++
	case TSessionEnded:
		if s.Sessions == nil {
			s.Sessions = map[string]int{}
		}
		s.Sessions[ev.SessionEnded.Attempt] = ev.SessionEnded.Session
	case TUserMessage:
		if x := ev.UserMessage; x.Defaulted {
			s.Defaulted = append(s.Defaulted, x.Text+" — "+x.Note)
		}
	case TMetaDecision, TObservation, TWatchdogTrip:
	case TFinalReading:
		if s.FinalReadings == nil {
			s.FinalReadings = map[string]bool{}
		}
		s.FinalReadings[ev.FinalReading.Instance] = true
	case TBootstrapReviewed:
		s.BootstrapPassed = ev.BootstrapReviewed.Passed
	case THarnessChanged:
		if x := ev.HarnessChanged; x.Large {
			if s.Unreviewed == nil {
				s.Unreviewed = map[string]string{}
			}
			s.Unreviewed[x.Path] = x.Author
		}
	case THarnessReviewed:
		if x := ev.HarnessReviewed; x.Passed {
			for _, p := range x.Paths {
				if a, ok := s.Unreviewed[p]; ok && a != x.By {
					delete(s.Unreviewed, p)
				}
			}
		}
	case TIntakeStep:
		if x := ev.IntakeStep; x.Kind == "answers" && x.Author == "default" {
			s.Defaulted = append(s.Defaulted, "Before the work started: "+x.Detail)
		}
	case TConstraints:
		s.Constraints = append([]Constraint(nil), ev.Constraints.List...)
		s.Outcome = ev.Constraints.Outcome
	case TRunFinished:
		x := *ev.RunFinished
		s.Finished = &x
		s.Stage = x.Status
	default:
		panic(fmt.Sprintf("state: Apply of unguarded event type %q", ev.Type))
	}
}

// release frees the contract's handler slot when an attempt ends.
func (s *State) release(a *Attempt) {
	in := s.Inst[a.Owner]
	if in != nil && s.Handler[in.Contract] == a.Owner {
		delete(s.Handler, in.Contract)
	}
}

func (s *State) applyPlan(x *PlanRecorded) {
	in := s.Inst[x.Instance]
	if in.Plan != nil {
		// A replan retires the old plan's children; their files stay on disk.
		for _, t := range in.Tasks {
			if t.Status != TaskAccepted {
				t.Status = TaskAbandoned
			}
			if c := s.Inst[t.Assignee]; c != nil {
				c.Retired = true
			}
		}
	}
	p := *x
	in.Plan = &p
	if a := s.CurrentAttempt(in.ID); a != nil {
		in.PlanAttempt = a.ID
	}
	in.Merged = false
	in.Tasks = make(map[string]*Task, len(x.Tasks))
	for _, pt := range x.Tasks {
		in.Tasks[pt.ID] = &Task{ID: pt.ID, Contract: pt.ContractID, Deps: pt.Deps, Boundary: pt.Boundary, Status: TaskPending}
	}
}

func (s *State) applyDelegated(x *Delegated) {
	p := s.Inst[x.Parent]
	t := p.Tasks[x.Task]
	child := s.Inst[x.Child]
	if child == nil {
		if old := s.Inst[t.Assignee]; old != nil && t.Status == TaskReassign {
			old.Retired = true
		}
		child = &Instance{ID: x.Child, Parent: x.Parent, Task: x.Task, Contract: x.Contract, Boundary: x.Boundary, Depth: p.Depth + 1, Mode: Idle}
		s.Inst[x.Child] = child
	}
	child.Packet = x.Packet
	child.HelpRounds, child.HelpOpen = 0, false
	t.Assignee = x.Child
	t.Status = TaskRunning
	t.Attempts = append(t.Attempts, x.Attempt)
	child.Attempts = append(child.Attempts, x.Attempt)
	s.Attempt[x.Attempt] = &Attempt{ID: x.Attempt, Task: x.Task, Owner: x.Child, Parent: x.Parent, Number: len(t.Attempts), Status: AttemptRunning, Feedback: x.Feedback}
	s.Handler[x.Contract] = x.Child
}

func (s *State) applyDecision(x *Decision) {
	p := s.Inst[x.By]
	t := p.Tasks[x.Task]
	interrupted := t.Status == TaskInterrupted
	switch x.Action {
	case policy.Retry:
		if !interrupted {
			t.Tally.Retries++
		}
		t.Status = TaskRetry
	case policy.Reassign:
		t.Tally.Reassigns++
		t.Tally.Retries = 0
		t.Status = TaskReassign
	case policy.Replan:
		p.Replans++
		t.Status = TaskAbandoned
	case policy.AskUser:
		t.Status = TaskAskUser
	}
}
