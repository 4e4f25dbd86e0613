package state

import (
	"encoding/json"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/policy"
)

// State is the fold of a run's events. It is owned by one goroutine (the
// engine's coordinator) or built fresh by a reader; Apply mutates it in
// place, deterministically and without IO.
type State struct {
	Seq      int64                        `json:"seq"`
	RunID    string                       `json:"run_id"`
	Policy   policy.Policy                `json:"policy"`
	Model    string                       `json:"model"`
	Stage    Stage                        `json:"stage"`
	Finished *RunFinished                 `json:"finished,omitempty"`
	Contract map[string]contract.Contract `json:"contracts"`
	Source   map[string]Source            `json:"sources"`
	Inst     map[string]*Instance         `json:"instances"`
	Attempt  map[string]*Attempt          `json:"attempts"`
	// Handler maps a contract id to the instance that has a running attempt
	// on it (I-OneHandler).
	Handler map[string]string `json:"handlers"`
	Usage   model.Usage       `json:"usage"`
	// RoleUsage splits Usage by role; Reserved is held by open calls.
	RoleUsage map[model.Role]model.Usage `json:"role_usage"`
	Reserved  int64                      `json:"reserved,omitempty"`
	// RoleModelUsage splits usage by role and answering model, for cost.
	RoleModelUsage map[model.Role]map[string]model.Usage `json:"role_model_usage,omitempty"`
	Refusals       int                                   `json:"refusals"`
	// BootstrapPassed: the bootstrap review gate passed (DA-A2).
	BootstrapPassed bool `json:"bootstrap_passed,omitempty"`
	// FinalReadings are the top-level instances Meta read before delivery.
	FinalReadings map[string]bool `json:"final_readings,omitempty"`
	// Constraints are the discussion's six explicit constraints (DA-B3).
	Constraints []Constraint    `json:"constraints,omitempty"`
	Outcome     json.RawMessage `json:"outcome,omitempty"`
	// Raw marks a run that started from a person's words: its contracts
	// come from the discussion.
	Raw bool `json:"raw,omitempty"`
	// Unreviewed are the harness paths changed by a large change and not
	// yet passed by a reviewer other than the change's author.
	Unreviewed map[string]string `json:"unreviewed,omitempty"`
	// Defaulted are the answers taken by default, for the delivery report
	// (DA-B4).
	Defaulted []string `json:"defaulted,omitempty"`
	// Sessions counts Worker relay sessions per attempt.
	Sessions map[string]int `json:"sessions,omitempty"`
}

// Instance is F-D4's ⟨id, parent, boundary, processing⟩ plus what the host
// tracks about it. The Session pseudo-instance has Depth -1.
type Instance struct {
	ID       string `json:"id"`
	Parent   string `json:"parent,omitempty"`
	Task     string `json:"task,omitempty"` // the parent's task it holds
	Contract string `json:"contract,omitempty"`
	Boundary string `json:"boundary"`
	Depth    int    `json:"depth"`
	Mode     Mode   `json:"mode"`
	Retired  bool   `json:"retired,omitempty"`
	// Packet is the work packet of the instance's latest delegation.
	Packet Packet `json:"packet"`
	// Attempts are the instance's own attempts (as a child), oldest first.
	Attempts []string `json:"attempts,omitempty"`
	// Plan and Tasks are the current plan (F-D8 tasks); Order keeps plan order.
	Plan *PlanRecorded `json:"plan,omitempty"`
	// PlanAttempt is the attempt during which the current plan was made; a
	// rejected attempt's plan is not reused by the next attempt.
	PlanAttempt string                     `json:"plan_attempt,omitempty"`
	Tasks       map[string]*Task           `json:"tasks,omitempty"`
	Replans     int                        `json:"replans,omitempty"`
	Merged      bool                       `json:"merged,omitempty"`
	OpenTools   map[string]ToolCallStarted `json:"open_tools,omitempty"`
	OpenModel   map[string]OpenCall        `json:"open_model,omitempty"`
	Usage       model.Usage                `json:"usage"`
	// ModelUsage splits Usage by the model that answered, for cost.
	ModelUsage map[string]model.Usage `json:"model_usage,omitempty"`
	// TreeTokens and TreeReserved count the instance and all its
	// descendants: what its budget caps.
	TreeTokens   int64 `json:"tree_tokens,omitempty"`
	TreeReserved int64 `json:"tree_reserved,omitempty"`
	// HelpRounds counts request_help rounds of the current attempt;
	// HelpOpen is set while one awaits its decision (DC4).
	HelpRounds int  `json:"help_rounds,omitempty"`
	HelpOpen   bool `json:"help_open,omitempty"`
	// Stalls counts stall alerts raised on the instance (DC7).
	Stalls int `json:"stalls,omitempty"`
}

// MaxHelpRounds is how many times a child may ask for help in one attempt.
const MaxHelpRounds = 3

// OpenCall is a model call that started and has not finished.
type OpenCall struct {
	Role    model.Role `json:"role"`
	Reserve int64      `json:"reserve,omitempty"`
}

// TaskStatus is the status of a task in a plan.
type TaskStatus string

// Task statuses. Rejected, Failed and Interrupted wait for a decision;
// Retry and Reassign wait for the delegation that carries it out.
const (
	TaskPending     TaskStatus = "pending"
	TaskRunning     TaskStatus = "running"
	TaskSubmitted   TaskStatus = "submitted"
	TaskAccepted    TaskStatus = "accepted"
	TaskRejected    TaskStatus = "rejected"
	TaskFailed      TaskStatus = "failed"
	TaskInterrupted TaskStatus = "interrupted"
	TaskRetry       TaskStatus = "retry"
	TaskReassign    TaskStatus = "reassign"
	TaskAskUser     TaskStatus = "ask_user"
	TaskAbandoned   TaskStatus = "abandoned" // its plan was replaced
)

// AwaitsDecision reports whether r must be applied to the task next.
func (s TaskStatus) AwaitsDecision() bool {
	return s == TaskRejected || s == TaskFailed || s == TaskInterrupted
}

// Task is F-D8's ⟨id, contract_id, status, deps⟩ with the host's tally.
type Task struct {
	ID       string       `json:"id"`
	Contract string       `json:"contract"`
	Deps     []string     `json:"deps,omitempty"`
	Boundary string       `json:"boundary"`
	Status   TaskStatus   `json:"status"`
	Assignee string       `json:"assignee,omitempty"`
	Attempts []string     `json:"attempts,omitempty"`
	Tally    policy.Tally `json:"tally"`
}

// Attempt is F-D8's attempt: one try of one instance at one task.
type Attempt struct {
	ID         string             `json:"id"`
	Task       string             `json:"task"`
	Owner      string             `json:"owner"`
	Parent     string             `json:"parent"`
	Number     int                `json:"number"` // 1-based within the task
	Status     AttemptStatus      `json:"status"`
	Checkpoint string             `json:"checkpoint,omitempty"`
	Evidence   *contract.Evidence `json:"evidence,omitempty"`
	Gates      Gates              `json:"gates"`
	Feedback   string             `json:"feedback,omitempty"`
	Reason     string             `json:"reason,omitempty"`
}

// New returns the state before any event.
func New() *State {
	return &State{
		Contract:       map[string]contract.Contract{},
		Source:         map[string]Source{},
		Inst:           map[string]*Instance{},
		Attempt:        map[string]*Attempt{},
		Handler:        map[string]string{},
		RoleUsage:      map[model.Role]model.Usage{},
		RoleModelUsage: map[model.Role]map[string]model.Usage{},
	}
}

// TaskOf returns the task an instance holds in its parent's plan.
func (s *State) TaskOf(instance string) *Task {
	in := s.Inst[instance]
	if in == nil {
		return nil
	}
	p := s.Inst[in.Parent]
	if p == nil || p.Tasks == nil {
		return nil
	}
	t := p.Tasks[in.Task]
	if t == nil || t.Assignee != instance {
		return nil
	}
	return t
}

// CurrentAttempt returns the instance's latest attempt, or nil.
func (s *State) CurrentAttempt(instance string) *Attempt {
	in := s.Inst[instance]
	if in == nil || len(in.Attempts) == 0 {
		return nil
	}
	return s.Attempt[in.Attempts[len(in.Attempts)-1]]
}

// RunningChildren counts tasks of the instance's plan with a running attempt.
func (s *State) RunningChildren(instance string) int {
	in := s.Inst[instance]
	if in == nil {
		return 0
	}
	n := 0
	for _, t := range in.Tasks {
		if t.Status == TaskRunning {
			n++
		}
	}
	return n
}

// Ready returns the tasks of the instance's plan that may be delegated now,
// in plan order: pending or awaiting a retry or reassignment, with every
// predecessor accepted (F-D9 rule 1).
func (s *State) Ready(instance string) []*Task {
	in := s.Inst[instance]
	if in == nil || in.Plan == nil {
		return nil
	}
	var out []*Task
	for _, pt := range in.Plan.Tasks {
		t := in.Tasks[pt.ID]
		switch t.Status {
		case TaskPending, TaskRetry, TaskReassign:
		default:
			continue
		}
		ok := true
		for _, d := range t.Deps {
			if in.Tasks[d].Status != TaskAccepted {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, t)
		}
	}
	return out
}

// AllAccepted reports whether every task of the instance's plan is accepted.
func (s *State) AllAccepted(instance string) bool {
	in := s.Inst[instance]
	if in == nil || in.Plan == nil || len(in.Plan.Tasks) == 0 {
		return false
	}
	for _, t := range in.Tasks {
		if t.Status != TaskAccepted {
			return false
		}
	}
	return true
}

// NeedsPlan reports whether a decomposing instance must (re)plan before it
// can delegate: it has no plan, a replan was decided, or its plan belongs to
// an earlier attempt that was rejected.
func (s *State) NeedsPlan(id string) bool {
	in := s.Inst[id]
	if in == nil || in.Plan == nil {
		return true
	}
	for _, t := range in.Tasks {
		if t.Status == TaskAbandoned {
			return true
		}
	}
	cur := s.CurrentAttempt(id)
	if cur != nil && in.PlanAttempt != "" && cur.ID != in.PlanAttempt {
		if old := s.Attempt[in.PlanAttempt]; old != nil && old.Status == AttemptFailed {
			return true
		}
	}
	return false
}

// path returns the instance and its ancestors, nearest first, the session
// last.
func (s *State) path(id string) []*Instance {
	var out []*Instance
	for in := s.Inst[id]; in != nil; in = s.Inst[in.Parent] {
		out = append(out, in)
		if in.ID == Session {
			break
		}
	}
	return out
}

func (s *State) currentAttemptID(id string) string {
	if a := s.CurrentAttempt(id); a != nil {
		return a.ID
	}
	return ""
}

// Granularity is g(c) for an instance: a no_spawn contract always builds.
func (s *State) Granularity(id string) policy.Granularity {
	in := s.Inst[id]
	if in.Packet.Contract.Constraints.NoSpawn {
		return policy.Direct
	}
	return policy.G(s.Contract[in.Contract], in.Depth, s.Policy)
}
