package state

import (
	"path"
	"slices"
	"strings"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/scope"
	"github.com/fractal-harness/fractal/stage"
)

// Guard judges ev against s without changing either (F-D12). It holds only
// the invariants: it makes no business decisions, but where the
// specification makes a decision deterministic (v, r) it recomputes it and
// refuses a different one. The error is a *Violation.
func Guard(s *State, ev Event) error {
	if ev.V != Version {
		return violate(EEvent, "event %d has version %d; this build reads version %d", ev.Seq, ev.V, Version)
	}
	if p := ev.payloads(); len(p) != 1 || p[0] != ev.Type {
		return violate(EEvent, "event %d of type %q carries payloads %v", ev.Seq, ev.Type, p)
	}
	if ev.Seq != s.Seq+1 {
		return violate(ESeq, "event has sequence %d, expected %d", ev.Seq, s.Seq+1)
	}
	if ev.Type != TRunStarted && s.RunID == "" {
		return violate(ERun, "event %d (%s) comes before run_started", ev.Seq, ev.Type)
	}
	if s.Finished != nil && ev.Type != TStageChanged {
		return violate(EFinished, "%s after the run finished", ev.Type)
	}
	switch ev.Type {
	case TRunStarted:
		return guardRunStarted(s, ev.RunStarted)
	case TContractRegistered:
		return guardContract(s, ev.ContractRegistered)
	case TPlanRecorded:
		return guardPlan(s, ev.PlanRecorded)
	case TModeChanged:
		return guardMode(s, ev.ModeChanged)
	case TDelegated:
		return guardDelegated(s, ev.Delegated)
	case TCheckpoint:
		_, err := runningAttempt(s, ev.Checkpoint.Instance, ev.Checkpoint.Attempt)
		return err
	case TModelCallStarted:
		x := ev.ModelCallStarted
		if err := live(s, x.Instance); err != nil {
			return err
		}
		if x.Reserve < 0 {
			return violate(EEvent, "a negative reservation")
		}
		// Every call costs at least a token, even one that reserved none.
		need := max(x.Reserve, 1)
		if b := s.Policy.Budget.Tokens; b > 0 && int64(s.Usage.Total())+s.Reserved+need > b {
			return violate(EBudget, "the run has used %d and reserved %d of its %d tokens; this call needs %d more", s.Usage.Total(), s.Reserved, b, x.Reserve)
		}
		if err := s.fitsBudgets(x.Instance, need); err != nil {
			return err
		}
		return nil
	case TModelAttempt:
		in := s.Inst[ev.ModelAttempt.Instance]
		if in == nil {
			return violate(EParent, "unknown instance %q", ev.ModelAttempt.Instance)
		}
		if _, ok := in.OpenModel[ev.ModelAttempt.Call]; !ok {
			return violate(EEvent, "an attempt of model call %s, which is not open", ev.ModelAttempt.Call)
		}
		return nil
	case TModelCallFinished:
		x := ev.ModelCallFinished
		if err := live(s, x.Instance); err != nil {
			return err
		}
		if _, ok := s.Inst[x.Instance].OpenModel[x.Call]; !ok {
			return violate(EEvent, "model call %s of %s finishes without having started", x.Call, x.Instance)
		}
		return nil
	case TToolCallStarted:
		return guardToolStarted(s, ev.ToolCallStarted)
	case TToolCallFinished:
		x := ev.ToolCallFinished
		in := s.Inst[x.Instance]
		if in == nil {
			return violate(EParent, "unknown instance %q", x.Instance)
		}
		if _, ok := in.OpenTools[x.Call]; !ok {
			return violate(EEvent, "tool call %s of %s finishes without having started", x.Call, x.Instance)
		}
		return writesInside(in, x.Writes)
	case TRefused:
		return nil
	case THelpRequested:
		x := ev.HelpRequested
		if _, err := runningAttempt(s, x.Instance, s.currentAttemptID(x.Instance)); err != nil {
			return err
		}
		in := s.Inst[x.Instance]
		if x.Round != in.HelpRounds+1 {
			return violate(EHelpRounds, "%s's request is round %d; the host counts %d before it", x.Instance, x.Round, in.HelpRounds)
		}
		if x.Round > MaxHelpRounds {
			return violate(EHelpRounds, "%s has used its %d rounds of negotiation", x.Instance, MaxHelpRounds)
		}
		return nil
	case THelpDecided:
		x := ev.HelpDecided
		in := s.Inst[x.Instance]
		if in == nil || x.Round != in.HelpRounds || !in.HelpOpen {
			return violate(EHelpRounds, "no open request of %s in round %d", x.Instance, x.Round)
		}
		if x.Revision != nil {
			if !x.Approved {
				return violate(EEvent, "a refused request carries a revision")
			}
			p := s.Inst[in.Parent]
			if err := scope.ValidateNarrowing(p.Packet.Contract, *x.Revision); err != nil {
				return violate(EWiden, "%s's revision goes beyond its parent: %v", x.Instance, err)
			}
			for _, w := range x.Revision.Scope.Write {
				if !within(w, in.Boundary) {
					return violate(EBoundaryOverlap, "a revision would let %s write %q", x.Instance, w)
				}
			}
			if more := x.Revision.Budget.MaxTokens - in.Packet.Contract.Budget.MaxTokens; more > 0 && more > s.FreeTokens(p.ID) {
				return violate(EBudget, "a revision would give %s %d more tokens; %s has %d free", x.Instance, more, p.ID, s.FreeTokens(p.ID))
			}
		}
		if !x.Deadline.IsZero() {
			p := s.Inst[in.Parent]
			if !p.Packet.Deadline.IsZero() && x.Deadline.After(p.Packet.Deadline) {
				return violate(EWiden, "%s's new deadline is later than its parent's", x.Instance)
			}
		}
		return nil
	case TStallAlert:
		return live(s, ev.StallAlert.Instance)
	case TSessionEnded:
		x := ev.SessionEnded
		if _, err := runningAttempt(s, x.Instance, x.Attempt); err != nil {
			return err
		}
		if x.Session != s.Sessions[x.Attempt]+1 {
			return violate(EEvent, "%s: session %d ends, but %d ended before it", x.Instance, x.Session, s.Sessions[x.Attempt])
		}
		return nil
	case TMetaDecision:
		switch ev.MetaDecision.Action {
		case "start_worker", "give_up", "ask_user":
		default:
			return violate(EEvent, "unknown Meta decision %q", ev.MetaDecision.Action)
		}
		return live(s, ev.MetaDecision.Instance)
	case TObservation:
		if ev.Observation.Evidence == "" {
			return violate(EEvent, "an observation must cite its evidence")
		}
		return live(s, ev.Observation.Instance)
	case TWatchdogTrip:
		return live(s, ev.WatchdogTrip.Instance)
	case TUserMessage:
		switch ev.UserMessage.Kind {
		case "question", "delivery_report", "notification":
			return nil
		}
		return violate(EEvent, "a user message is a question, a delivery_report or a notification, not %q", ev.UserMessage.Kind)
	case TFinalReading:
		return live(s, ev.FinalReading.Instance)
	case TBootstrapReviewed:
		if s.Stage != StageBootstrap {
			return violate(EStage, "a bootstrap review outside bootstrapping (the stage is %s)", s.Stage)
		}
		return nil
	case THarnessChanged:
		if s.Stage != StageRunning {
			return violate(EStage, "the harness changes while running only (the stage is %s)", s.Stage)
		}
		return nil
	case THarnessReviewed:
		return nil
	case TIntakeStep:
		if s.Stage != StageClarifying && s.Stage != StageBootstrap {
			return violate(EStage, "an intake step outside clarifying and bootstrapping (the stage is %s)", s.Stage)
		}
		return nil
	case TConstraints:
		if s.Stage != StageClarifying {
			return violate(EStage, "constraints are recorded by the discussion (the stage is %s)", s.Stage)
		}
		return nil
	case TEvidenceSubmitted:
		return guardEvidence(s, ev.EvidenceSubmitted)
	case TAttemptEnded:
		x := ev.AttemptEnded
		if x.Status != AttemptFailed && x.Status != AttemptInterrupted && x.Status != AttemptTimeout {
			return violate(EEvent, "attempt_ended with status %q; only failed, interrupted or timeout", x.Status)
		}
		_, err := runningAttempt(s, x.Instance, x.Attempt)
		return err
	case TVerdict:
		return guardVerdict(s, ev.Verdict)
	case TDecision:
		return guardDecision(s, ev.Decision)
	case TMerged:
		return guardMerged(s, ev.Merged)
	case TStageChanged:
		x := ev.StageChanged
		if x.From != s.Stage {
			return violate(EStage, "stage change from %q, but the stage is %q", x.From, s.Stage)
		}
		if err := stage.Allowed(stage.Stage(x.From), stage.Stage(x.To), stage.Actor(x.By)); err != nil {
			return violate(EStage, "%v", err)
		}
		if x.To == StageRunning && !s.BootstrapPassed {
			return violate(EStage, "running needs a passed bootstrap review")
		}
		return nil
	case TRunFinished:
		x := ev.RunFinished
		switch x.Status {
		case StageDone:
			if !s.AllAccepted(Session) {
				return violate(ENotDone, "the run cannot be done: a top-level contract is not accepted")
			}
			for _, t := range s.Inst[Session].Tasks {
				if !s.FinalReadings[t.Assignee] {
					return violate(ENotDone, "the run cannot be done: Meta has not read %s's deliverables", t.Assignee)
				}
			}
		case StageFailed, StageCancelled:
		default:
			return violate(EEvent, "run_finished with status %q", x.Status)
		}
		return nil
	}
	return violate(EEvent, "unknown event type %q", ev.Type)
}

func guardRunStarted(s *State, x *RunStarted) error {
	if s.RunID != "" {
		return violate(ERun, "run_started repeated")
	}
	if x.RunID == "" || !cleanRel(x.Boundary) {
		return violate(ERun, "run_started needs a run id and a clean relative boundary")
	}
	if err := x.Policy.Validate(); err != nil {
		return violate(ERun, "%v", err)
	}
	return nil
}

func guardContract(s *State, x *ContractRegistered) error {
	c := x.Contract
	if !c.IDValid() {
		return violate(EContractMutate, "contract %s: id does not match its content", c.ID)
	}
	if old, ok := s.Contract[c.ID]; ok && !old.Equal(c) {
		return violate(EContractMutate, "contract %s is already registered with other content", c.ID)
	}
	switch x.Source {
	case FromDiscussion:
		if x.By != Session {
			return violate(EContractSource, "a discussion contract registered by %q, not the session", x.By)
		}
	case FromDecomposition:
		in := s.Inst[x.By]
		if in == nil || x.By == Session || in.Mode != Plan {
			return violate(EContractSource, "contract %s from decomposition by %q, which is not planning", c.ID, x.By)
		}
	default:
		return violate(EContractSource, "unknown contract source %q", x.Source)
	}
	return nil
}

func guardPlan(s *State, x *PlanRecorded) error {
	in := s.Inst[x.Instance]
	if in == nil {
		return violate(EParent, "plan by unknown instance %q", x.Instance)
	}
	if in.Retired {
		return violate(EParent, "plan by retired instance %q", x.Instance)
	}
	if x.Instance == Session {
		if in.Plan != nil {
			return violate(EOneMode, "the session's plan (the discussion's contracts) is recorded once")
		}
	} else if in.Mode != Plan {
		return violate(EOneMode, "%s records a plan while in mode %q", x.Instance, in.Mode)
	}
	if in.Plan != nil && x.Instance != Session {
		for _, t := range in.Tasks {
			if t.Status == TaskRunning || t.Status == TaskSubmitted {
				return violate(EFrozen, "%s replans while task %s is still %s", x.Instance, t.ID, t.Status)
			}
		}
	}
	if len(x.Tasks) == 0 {
		return violate(EDAGCycle, "a plan needs at least one task")
	}
	if in.Packet.Contract.Constraints.NoSpawn {
		return violate(EWiden, "%s is no_spawn: it may not delegate", x.Instance)
	}
	if in.Depth+1 > s.Policy.MaxDepth {
		return violate(EDepth, "%s is at depth %d; children would exceed max_depth %d", x.Instance, in.Depth, s.Policy.MaxDepth)
	}
	ids := map[string]int{}
	for i, t := range x.Tasks {
		if t.ID == "" || strings.ContainsAny(t.ID, "/@ ") {
			return violate(EEvent, "task %d has an empty or unusable id %q", i, t.ID)
		}
		if _, dup := ids[t.ID]; dup {
			return violate(EDAGCycle, "task id %q appears twice", t.ID)
		}
		ids[t.ID] = i
		if _, ok := s.Contract[t.ContractID]; !ok {
			return violate(EContractUnknown, "task %s names unregistered contract %s", t.ID, t.ContractID)
		}
		if h, busy := s.Handler[t.ContractID]; busy {
			return violate(EOneHandler, "task %s: contract %s is being processed by %s", t.ID, t.ContractID, h)
		}
		if !cleanRel(t.Boundary) || !strictlyInside(t.Boundary, in.Boundary) {
			return violate(EBoundaryOverlap, "task %s: boundary %q is not strictly inside %q", t.ID, t.Boundary, in.Boundary)
		}
		for _, o := range x.Tasks[:i] {
			if within(t.Boundary, o.Boundary) || within(o.Boundary, t.Boundary) {
				return violate(EBoundaryOverlap, "tasks %s and %s have overlapping boundaries %q and %q", o.ID, t.ID, o.Boundary, t.Boundary)
			}
		}
	}
	// Two tasks with the same contract would be one contract handled twice.
	seen := map[string]string{}
	for _, t := range x.Tasks {
		if o, dup := seen[t.ContractID]; dup {
			return violate(EOneHandler, "tasks %s and %s hold the same contract %s", o, t.ID, t.ContractID)
		}
		seen[t.ContractID] = t.ID
	}
	if err := acyclic(x.Tasks, ids); err != nil {
		return err
	}
	if x.Instance == Session {
		return nil
	}
	return checkMap(s, in, x, ids)
}

// acyclic runs a depth-first search over the dependency edges.
func acyclic(tasks []PlanTask, ids map[string]int) error {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(tasks))
	var visit func(i int) error
	visit = func(i int) error {
		color[i] = grey
		for _, d := range tasks[i].Deps {
			j, ok := ids[d]
			if !ok {
				return violate(EDAGCycle, "task %s depends on unknown task %q", tasks[i].ID, d)
			}
			switch color[j] {
			case grey:
				return violate(EDAGCycle, "dependency cycle through %s and %s", tasks[i].ID, d)
			case white:
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		color[i] = black
		return nil
	}
	for i := range tasks {
		if color[i] == white {
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkMap(s *State, in *Instance, x *PlanRecorded, ids map[string]int) error {
	parent := s.Contract[in.Contract]
	served := make([]bool, len(parent.Checks))
	for _, l := range x.CheckMap {
		if l.ParentCheck < 0 || l.ParentCheck >= len(parent.Checks) {
			return violate(ECheckMap, "check map names parent check %d; the contract has %d", l.ParentCheck, len(parent.Checks))
		}
		i, ok := ids[l.Task]
		if !ok {
			return violate(ECheckMap, "check map names unknown task %q", l.Task)
		}
		child := s.Contract[x.Tasks[i].ContractID]
		if l.ChildCheck < 0 || l.ChildCheck >= len(child.Checks) {
			return violate(ECheckMap, "check map names check %d of task %s, which has %d", l.ChildCheck, l.Task, len(child.Checks))
		}
		served[l.ParentCheck] = true
	}
	for _, c := range x.AfterMerge {
		if c < 0 || c >= len(parent.Checks) {
			return violate(ECheckMap, "after_merge names parent check %d; the contract has %d", c, len(parent.Checks))
		}
		served[c] = true
	}
	for i, ok := range served {
		if !ok {
			return violate(ECheckMap, "parent check %d is served by no child check and not verified after merge", i)
		}
	}
	for _, p := range x.Promote {
		if _, ok := ids[p.Task]; !ok {
			return violate(ECheckMap, "promote names unknown task %q", p.Task)
		}
		if contract.ValidatePath(p.From) != nil || contract.ValidatePath(p.To) != nil {
			return violate(EBoundaryWrite, "promote %s: %q → %q is not a clean relative path pair", p.Task, p.From, p.To)
		}
	}
	return nil
}

func guardMode(s *State, x *ModeChanged) error {
	in := s.Inst[x.Instance]
	if in == nil {
		return violate(EParent, "unknown instance %q", x.Instance)
	}
	switch x.To {
	case Idle, Plan, Build, Delegate, Supervise:
	default:
		return violate(EEvent, "unknown mode %q", x.To)
	}
	if x.To != Idle && in.Mode != Idle {
		return violate(EOneMode, "%s is in %s and cannot also enter %s", x.Instance, in.Mode, x.To)
	}
	if x.To == Idle && in.Mode == Idle {
		return violate(EOneMode, "%s is already idle", x.Instance)
	}
	if x.To != Idle && x.To != Supervise && x.To != Delegate && s.RunningChildren(x.Instance) > 0 {
		return violate(EFrozen, "%s cannot %s while its children run", x.Instance, x.To)
	}
	if x.Instance == Session && (x.To == Plan || x.To == Build) {
		return violate(EOneMode, "the session neither plans nor builds")
	}
	return nil
}

func guardDelegated(s *State, x *Delegated) error {
	p := s.Inst[x.Parent]
	if p == nil || p.Retired {
		return violate(EParent, "delegation by unknown or retired instance %q", x.Parent)
	}
	if p.Mode != Delegate {
		return violate(EOneMode, "%s delegates while in mode %q", x.Parent, p.Mode)
	}
	t := p.Tasks[x.Task]
	if t == nil {
		return violate(EContractUnknown, "%s has no task %q in its plan", x.Parent, x.Task)
	}
	if t.Contract != x.Contract {
		return violate(EContractMutate, "task %s holds contract %s, delegation carries %s", x.Task, t.Contract, x.Contract)
	}
	for _, d := range t.Deps {
		if p.Tasks[d].Status != TaskAccepted {
			return violate(EPredecessor, "task %s depends on %s, which is %s", x.Task, d, p.Tasks[d].Status)
		}
	}
	if h, busy := s.Handler[x.Contract]; busy {
		return violate(EOneHandler, "contract %s is being processed by %s", x.Contract, h)
	}
	if x.Boundary != t.Boundary {
		return violate(EBoundaryOverlap, "delegation boundary %q differs from the planned %q", x.Boundary, t.Boundary)
	}
	if p.Depth+1 > s.Policy.MaxDepth {
		return violate(EDepth, "child of %s would have depth %d > max_depth %d", x.Parent, p.Depth+1, s.Policy.MaxDepth)
	}
	if x.Attempt == "" || s.Attempt[x.Attempt] != nil {
		return violate(EAttempt, "delegation needs a new attempt id, got %q", x.Attempt)
	}
	existing := s.Inst[x.Child]
	switch t.Status {
	case TaskPending:
		if existing != nil {
			return violate(EParent, "instance id %q is taken", x.Child)
		}
	case TaskRetry:
		if x.Child != t.Assignee {
			return violate(EParent, "a retry goes to %s, not %s", t.Assignee, x.Child)
		}
	case TaskReassign:
		if existing != nil || x.Child == t.Assignee {
			return violate(EParent, "a reassignment needs a fresh instance, not %q", x.Child)
		}
	case TaskAccepted:
		return violate(EAcceptTwice, "task %s is already accepted", x.Task)
	default:
		return violate(EOneHandler, "task %s is %s and cannot be delegated", x.Task, t.Status)
	}
	if err := guardPacket(s, p, x); err != nil {
		return err
	}
	if existing != nil && existing.Parent != x.Parent {
		return violate(EParent, "%s already has parent %s", x.Child, existing.Parent)
	}
	return nil
}

func guardToolStarted(s *State, x *ToolCallStarted) error {
	in := s.Inst[x.Instance]
	if err := live(s, x.Instance); err != nil {
		return err
	}
	if s.RunningChildren(x.Instance) > 0 {
		return violate(EFrozen, "%s calls %s while its children run", x.Instance, x.Tool)
	}
	if in.Mode == Idle || in.Mode == Delegate {
		return violate(EOneMode, "%s calls %s in mode %q", x.Instance, x.Tool, in.Mode)
	}
	if x.Role == model.Worker && !slices.Contains(in.Packet.Contract.Tools(), x.Tool) {
		return violate(EWiden, "%s calls %s, which its delegation contract does not grant", x.Instance, x.Tool)
	}
	return writesInside(in, x.Writes)
}

func writesInside(in *Instance, writes []string) error {
	for _, w := range writes {
		if !cleanRel(w) || !strictlyInside(w, in.Boundary) {
			return violate(EBoundaryWrite, "%s may write only inside %q, not %q", in.ID, in.Boundary, w)
		}
		if in.ID == Session {
			continue
		}
		ok := false
		for _, dir := range in.Packet.Contract.Scope.Write {
			if within(w, dir) {
				ok = true
			}
		}
		if !ok {
			return violate(EBoundaryWrite, "%s's contract grants no write to %q (write scope %v)", in.ID, w, in.Packet.Contract.Scope.Write)
		}
	}
	return nil
}

// guardPacket checks a delegation's packet against its parent's (DC3, DC6,
// DC7): the contract narrows the parent's in every dimension, writes only
// the child's own boundary, ends no later than the parent, takes its token
// budget out of what the parent has free, and fits the parent's
// concurrency.
func guardPacket(s *State, p *Instance, x *Delegated) error {
	pc, cc := p.Packet.Contract, x.Packet.Contract
	if err := scope.ValidateDelegation(pc, cc); err != nil {
		return violate(EWiden, "%s: %v", x.Child, err)
	}
	for _, w := range cc.Scope.Write {
		if !within(w, x.Boundary) {
			return violate(EBoundaryOverlap, "%s's contract would write %q, outside its boundary %q", x.Child, w, x.Boundary)
		}
	}
	if x.Packet.Deadline.IsZero() || (!p.Packet.Deadline.IsZero() && x.Packet.Deadline.After(p.Packet.Deadline)) {
		return violate(EWiden, "%s's deadline %v is missing or later than its parent's %v", x.Child, x.Packet.Deadline, p.Packet.Deadline)
	}
	if m := pc.Budget.MaxConcurrent; m > 0 && s.RunningChildren(p.ID) >= m {
		return violate(EConcurrency, "%s already runs %d children, its limit", p.ID, m)
	}
	if free := s.FreeTokens(p.ID); cc.Budget.MaxTokens > free {
		return violate(EBudget, "%s would get %d tokens; %s has %d free", x.Child, cc.Budget.MaxTokens, p.ID, free)
	}
	return nil
}

// committed is what instance a has promised or spent: its subtree's usage
// and reservations, plus the unspent part of each running child's budget
// (a child's budget is carved out of its parent's when it starts and the
// unused part returns when it ends). onPath, when set, is the child through
// which extra tokens are being spent: they come out of that child's carve.
func (s *State) committed(a *Instance, onPath string, extra int64) int64 {
	n := a.TreeTokens + a.TreeReserved + extra
	for _, t := range a.Tasks {
		if t.Status != TaskRunning && t.Status != TaskSubmitted {
			continue
		}
		c := s.Inst[t.Assignee]
		if c == nil {
			continue
		}
		used := c.TreeTokens + c.TreeReserved
		if c.ID == onPath {
			used += extra
		}
		n += max(0, c.Packet.Contract.Budget.MaxTokens-used)
	}
	return n
}

// FreeTokens is what instance id can still give a new child.
func (s *State) FreeTokens(id string) int64 {
	a := s.Inst[id]
	if a == nil {
		return 0
	}
	return max(0, a.Packet.Contract.Budget.MaxTokens-s.committed(a, "", 0))
}

// fitsBudgets checks a model call of need tokens by id against every
// budget on the path to the session (DC6).
func (s *State) fitsBudgets(id string, need int64) error {
	child := ""
	for a := s.Inst[id]; a != nil; a = s.Inst[a.Parent] {
		if m := a.Packet.Contract.Budget.MaxTokens; m > 0 {
			if got := s.committed(a, child, need); got > m {
				return violate(EBudget, "%s's budget of %d tokens: %d used or promised, this call needs %d more", a.ID, m, got-need, need)
			}
		}
		child = a.ID
		if a.ID == Session {
			break
		}
	}
	return nil
}

func guardEvidence(s *State, x *EvidenceSubmitted) error {
	a, err := runningAttempt(s, x.Instance, x.Attempt)
	if err != nil {
		return err
	}
	in := s.Inst[x.Instance]
	c := s.Contract[in.Contract]
	if err := contract.Bound(c, x.Evidence); err != nil {
		return violate(EEvidenceUnbound, "%s attempt %s: %v", x.Instance, a.ID, err)
	}
	switch in.Mode {
	case Build:
	case Supervise:
		if in.Plan == nil || !s.AllAccepted(in.ID) {
			return violate(EChildrenOpen, "%s submits before every task of its plan is accepted", in.ID)
		}
	default:
		return violate(EOneMode, "%s submits evidence in mode %q", in.ID, in.Mode)
	}
	return nil
}

func guardVerdict(s *State, x *Verdict) error {
	child := s.Inst[x.Child]
	if child == nil {
		return violate(EParent, "verdict on unknown instance %q", x.Child)
	}
	if x.By != child.Parent {
		return violate(EAcceptNotParent, "%s gave a verdict on %s, whose parent is %s", x.By, x.Child, child.Parent)
	}
	p := s.Inst[x.By]
	if p.Mode != Supervise {
		return violate(EOneMode, "%s gives a verdict in mode %q", x.By, p.Mode)
	}
	t := p.Tasks[x.Task]
	if t == nil || t.Assignee != x.Child {
		return violate(EAttempt, "task %q of %s is not held by %s", x.Task, x.By, x.Child)
	}
	if t.Status == TaskAccepted {
		return violate(EAcceptTwice, "task %s is already accepted", x.Task)
	}
	a := s.Attempt[x.Attempt]
	if a == nil || a.Owner != x.Child || a.Status != AttemptSubmitted || a.Evidence == nil {
		return violate(EAttempt, "attempt %q of %s has no evidence awaiting a verdict", x.Attempt, x.Child)
	}
	sat := contract.Sat(s.Contract[t.Contract], *a.Evidence)
	switch x.Verdict {
	case policy.Accept:
		if !sat {
			return violate(EAcceptUnsat, "%s would accept %s's evidence, but checks %v fail", x.By, x.Child, contract.Failed(*a.Evidence))
		}
		if !a.Gates.Passed() {
			return violate(EAcceptUngated, "%s would accept %s's evidence, which did not pass its gates (review: %s)", x.By, x.Child, a.Gates.Review)
		}
	case policy.Reject:
		if sat && a.Gates.Passed() {
			return violate(EVerdict, "%s would reject evidence that satisfies its contract and passed its gates", x.By)
		}
	default:
		return violate(EEvent, "unknown verdict %q", x.Verdict)
	}
	return nil
}

// DecisionTally is the tally r sees for task t of instance p.
func (s *State) DecisionTally(p *Instance, t *Task) policy.Tally {
	tl := t.Tally
	tl.Replans = p.Replans
	tl.TokensUsed = int64(s.Usage.Total())
	return tl
}

func guardDecision(s *State, x *Decision) error {
	p := s.Inst[x.By]
	if p == nil {
		return violate(EParent, "decision by unknown instance %q", x.By)
	}
	if p.Mode != Supervise {
		return violate(EOneMode, "%s decides in mode %q", x.By, p.Mode)
	}
	t := p.Tasks[x.Task]
	if t == nil || !t.Status.AwaitsDecision() {
		return violate(EDecision, "no decision is due for task %q of %s", x.Task, x.By)
	}
	if want := s.Decide(x.By, x.Task, x.Risk); x.Action != want {
		return violate(EDecision, "task %s: the policy decides %s, not %s", x.Task, want, x.Action)
	}
	return nil
}

// Decide is r(c,e,p) for task of instance by, as the Guard will check it.
// An interruption is the host's fault, not the work's: it resumes the same
// instance without spending a retry. The session cannot replan: its tasks
// are the discussion's contracts.
func (s *State) Decide(by, task string, risk float64) policy.Action {
	p := s.Inst[by]
	t := p.Tasks[task]
	if t.Status == TaskInterrupted {
		return policy.Retry
	}
	pol := s.Policy
	if by == Session {
		pol.Permissions.Replan = false
	}
	return policy.R(s.DecisionTally(p, t), risk, pol)
}

func guardMerged(s *State, x *Merged) error {
	in := s.Inst[x.Instance]
	if in == nil {
		return violate(EParent, "unknown instance %q", x.Instance)
	}
	if in.Mode != Supervise {
		return violate(EOneMode, "%s merges in mode %q", x.Instance, in.Mode)
	}
	if !s.AllAccepted(x.Instance) {
		return violate(EChildrenOpen, "%s merges before every task is accepted", x.Instance)
	}
	for _, f := range x.Files {
		if err := writesInside(in, []string{f.To}); err != nil {
			return err
		}
		from := false
		for _, t := range in.Tasks {
			if strictlyInside(f.From, t.Boundary) && cleanRel(f.From) {
				from = true
			}
		}
		if !from {
			return violate(EBoundaryWrite, "%s promotes %q, which is in no accepted child's boundary", x.Instance, f.From)
		}
	}
	return nil
}

func live(s *State, id string) error {
	in := s.Inst[id]
	if in == nil {
		return violate(EParent, "unknown instance %q", id)
	}
	if in.Retired {
		return violate(EParent, "instance %s was retired", id)
	}
	return nil
}

func runningAttempt(s *State, inst, attempt string) (*Attempt, error) {
	if err := live(s, inst); err != nil {
		return nil, err
	}
	a := s.Attempt[attempt]
	if a == nil || a.Owner != inst || a.Status != AttemptRunning {
		return nil, violate(EAttempt, "%q is not a running attempt of %s", attempt, inst)
	}
	if cur := s.CurrentAttempt(inst); cur == nil || cur.ID != attempt {
		return nil, violate(EAttempt, "%q is not the current attempt of %s", attempt, inst)
	}
	return a, nil
}

// cleanRel reports whether p is a clean, relative, slash-separated path
// without "..": the only form a boundary or a recorded write may take.
func cleanRel(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || path.Clean(p) != p || p == "." {
		return false
	}
	return !slices.Contains(strings.Split(p, "/"), "..")
}

// within reports whether p is dir or inside it, comparing whole segments
// ("work/ab" is not inside "work/a").
func within(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

func strictlyInside(p, dir string) bool { return strings.HasPrefix(p, dir+"/") }
