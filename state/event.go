// Package state is the pure heart of a run: the typed events of the journal,
// the State they fold into, and the Guard that refuses any event that would
// break an invariant of the fractal specification (F-D12).
//
// Nothing here does IO or reads a clock. The engine proposes an event, Guard
// judges it against the current State, and only then is it appended and
// applied. Replaying a journal runs the same Guard on every event, so a
// journal edited by hand is detected rather than trusted.
package state

import (
	"encoding/json"
	"time"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/gate"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/scope"
)

// Version is the event schema version this package writes and reads.
const Version = 1

// Session is the id of the pseudo-instance ⊥ that stands for the run
// itself: it registers the contracts of the discussion, delegates them to
// root instances and accepts their evidence after the final review.
const Session = "session"

// Type names an event type.
type Type string

// The event types.
const (
	TRunStarted         Type = "run_started"
	TContractRegistered Type = "contract_registered"
	TPlanRecorded       Type = "plan_recorded"
	TModeChanged        Type = "mode_changed"
	TDelegated          Type = "delegated"
	TCheckpoint         Type = "checkpoint_recorded"
	TModelCallStarted   Type = "model_call_started"
	TModelCallFinished  Type = "model_call_finished"
	TModelAttempt       Type = "model_attempt"
	TToolCallStarted    Type = "tool_call_started"
	TToolCallFinished   Type = "tool_call_finished"
	TRefused            Type = "refused"
	TEvidenceSubmitted  Type = "evidence_submitted"
	TAttemptEnded       Type = "attempt_ended"
	TVerdict            Type = "verdict"
	TDecision           Type = "decision"
	TMerged             Type = "merged"
	TStageChanged       Type = "stage_changed"
	TRunFinished        Type = "run_finished"
	THelpRequested      Type = "help_requested"
	THelpDecided        Type = "help_decided"
	TStallAlert         Type = "stall_alert"
	TSessionEnded       Type = "session_ended"
	TMetaDecision       Type = "meta_decision"
	TObservation        Type = "watcher_observation"
	TWatchdogTrip       Type = "watchdog_trip"
	TUserMessage        Type = "user_message"
	TFinalReading       Type = "final_reading"
	TBootstrapReviewed  Type = "bootstrap_reviewed"
	TIntakeStep         Type = "intake_step"
	TConstraints        Type = "constraints_recorded"
	THarnessChanged     Type = "harness_changed"
	THarnessReviewed    Type = "harness_reviewed"
)

// Event is one line of events.jsonl: an envelope and exactly one payload,
// the one named by Type. Keeping every payload as its own typed field lets a
// line decode in one pass.
type Event struct {
	Seq  int64     `json:"seq"`
	V    int       `json:"v"`
	Time time.Time `json:"t"`
	Type Type      `json:"type"`

	RunStarted         *RunStarted         `json:"run_started,omitempty"`
	ContractRegistered *ContractRegistered `json:"contract_registered,omitempty"`
	PlanRecorded       *PlanRecorded       `json:"plan_recorded,omitempty"`
	ModeChanged        *ModeChanged        `json:"mode_changed,omitempty"`
	Delegated          *Delegated          `json:"delegated,omitempty"`
	Checkpoint         *Checkpoint         `json:"checkpoint_recorded,omitempty"`
	ModelCallStarted   *ModelCallStarted   `json:"model_call_started,omitempty"`
	ModelCallFinished  *ModelCallFinished  `json:"model_call_finished,omitempty"`
	ModelAttempt       *ModelAttempt       `json:"model_attempt,omitempty"`
	ToolCallStarted    *ToolCallStarted    `json:"tool_call_started,omitempty"`
	ToolCallFinished   *ToolCallFinished   `json:"tool_call_finished,omitempty"`
	Refused            *Refused            `json:"refused,omitempty"`
	EvidenceSubmitted  *EvidenceSubmitted  `json:"evidence_submitted,omitempty"`
	AttemptEnded       *AttemptEnded       `json:"attempt_ended,omitempty"`
	Verdict            *Verdict            `json:"verdict,omitempty"`
	Decision           *Decision           `json:"decision,omitempty"`
	Merged             *Merged             `json:"merged,omitempty"`
	StageChanged       *StageChanged       `json:"stage_changed,omitempty"`
	RunFinished        *RunFinished        `json:"run_finished,omitempty"`
	HelpRequested      *HelpRequested      `json:"help_requested,omitempty"`
	HelpDecided        *HelpDecided        `json:"help_decided,omitempty"`
	StallAlert         *StallAlert         `json:"stall_alert,omitempty"`
	SessionEnded       *SessionEnded       `json:"session_ended,omitempty"`
	MetaDecision       *MetaDecision       `json:"meta_decision,omitempty"`
	Observation        *Observation        `json:"watcher_observation,omitempty"`
	WatchdogTrip       *WatchdogTrip       `json:"watchdog_trip,omitempty"`
	UserMessage        *UserMessage        `json:"user_message,omitempty"`
	FinalReading       *FinalReading       `json:"final_reading,omitempty"`
	BootstrapReviewed  *BootstrapReviewed  `json:"bootstrap_reviewed,omitempty"`
	IntakeStep         *IntakeStep         `json:"intake_step,omitempty"`
	Constraints        *Constraints        `json:"constraints_recorded,omitempty"`
	HarnessChanged     *HarnessChanged     `json:"harness_changed,omitempty"`
	HarnessReviewed    *HarnessReviewed    `json:"harness_reviewed,omitempty"`
}

// payloads returns the type of every payload that is set; a well-formed
// event has exactly one, matching Type.
func (e Event) payloads() []Type {
	var out []Type
	add := func(set bool, t Type) {
		if set {
			out = append(out, t)
		}
	}
	add(e.RunStarted != nil, TRunStarted)
	add(e.ContractRegistered != nil, TContractRegistered)
	add(e.PlanRecorded != nil, TPlanRecorded)
	add(e.ModeChanged != nil, TModeChanged)
	add(e.Delegated != nil, TDelegated)
	add(e.Checkpoint != nil, TCheckpoint)
	add(e.ModelCallStarted != nil, TModelCallStarted)
	add(e.ModelCallFinished != nil, TModelCallFinished)
	add(e.ModelAttempt != nil, TModelAttempt)
	add(e.ToolCallStarted != nil, TToolCallStarted)
	add(e.ToolCallFinished != nil, TToolCallFinished)
	add(e.Refused != nil, TRefused)
	add(e.EvidenceSubmitted != nil, TEvidenceSubmitted)
	add(e.AttemptEnded != nil, TAttemptEnded)
	add(e.Verdict != nil, TVerdict)
	add(e.Decision != nil, TDecision)
	add(e.Merged != nil, TMerged)
	add(e.StageChanged != nil, TStageChanged)
	add(e.RunFinished != nil, TRunFinished)
	add(e.HelpRequested != nil, THelpRequested)
	add(e.HelpDecided != nil, THelpDecided)
	add(e.StallAlert != nil, TStallAlert)
	add(e.SessionEnded != nil, TSessionEnded)
	add(e.MetaDecision != nil, TMetaDecision)
	add(e.Observation != nil, TObservation)
	add(e.WatchdogTrip != nil, TWatchdogTrip)
	add(e.UserMessage != nil, TUserMessage)
	add(e.FinalReading != nil, TFinalReading)
	add(e.BootstrapReviewed != nil, TBootstrapReviewed)
	add(e.IntakeStep != nil, TIntakeStep)
	add(e.Constraints != nil, TConstraints)
	add(e.HarnessChanged != nil, THarnessChanged)
	add(e.HarnessReviewed != nil, THarnessReviewed)
	return out
}

// RunStarted opens a run. It is always event 1.
type RunStarted struct {
	RunID  string        `json:"run_id"`
	Policy policy.Policy `json:"policy"`
	Model  string        `json:"model"`
	// Boundary is the run-relative folder that holds every instance's
	// boundary ("work").
	Boundary string `json:"boundary"`
	// Root is the delegation contract of the run itself: every instance's
	// contract descends from it (DC3).
	Root scope.DelegationContract `json:"root"`
	// Raw: the run starts from a person's words (inputs/task.md); its
	// contracts come from the discussion (F-D3.5).
	Raw bool `json:"raw,omitempty"`
}

// Source says where a contract came from (F-A2): a discussion with the user,
// or an instance's decomposition.
type Source string

// The two sources of contracts.
const (
	FromDiscussion    Source = "discussion"
	FromDecomposition Source = "decomposition"
)

// ContractRegistered makes a contract known. Registering is idempotent for
// identical content and refused for anything else under a known id.
type ContractRegistered struct {
	Contract contract.Contract `json:"contract"`
	Source   Source            `json:"source"`
	By       string            `json:"by"` // Session, or the decomposing instance
}

// PlanTask is one node of a plan's DAG.
type PlanTask struct {
	ID         string   `json:"id"`
	Agent      string   `json:"agent,omitempty"` // blueprint id of the child's kind, if any
	ContractID string   `json:"contract_id"`
	Deps       []string `json:"deps,omitempty"`
	// Boundary is the run-relative folder of the instance that will hold
	// the task; it nests inside the planner's boundary.
	Boundary string `json:"boundary"`
}

// CheckLink says which parent check a child check serves (F-D5 check map).
type CheckLink struct {
	ParentCheck int    `json:"parent_check"`
	Task        string `json:"task"`
	ChildCheck  int    `json:"child_check"`
}

// Promote copies an accepted child's file into the parent's boundary when
// the children are merged, so that the parent's own checks can see it.
type Promote struct {
	Task string `json:"task"`
	From string `json:"from"` // relative to the child's boundary
	To   string `json:"to"`   // relative to the parent's boundary
}

// PlanRecorded is plan's output (F-D5): a DAG of child contracts, the check
// map and what to promote when merging. For the Session it is the outcome of
// the discussion: one task per top-level contract.
type PlanRecorded struct {
	Instance   string      `json:"instance"`
	Tasks      []PlanTask  `json:"tasks"`
	CheckMap   []CheckLink `json:"check_map,omitempty"`
	AfterMerge []int       `json:"after_merge,omitempty"` // parent checks verified only after merging
	Promote    []Promote   `json:"promote,omitempty"`
}

// Mode is the one capability an instance has active (I-OneMode).
type Mode string

// The modes. Idle is the rest position between capabilities.
const (
	Idle      Mode = "idle"
	Plan      Mode = "plan"
	Build     Mode = "build"
	Delegate  Mode = "delegate"
	Supervise Mode = "supervise"
)

// ModeChanged switches an instance's active capability.
type ModeChanged struct {
	Instance string `json:"instance"`
	To       Mode   `json:"to"`
}

// Delegated is delegation as one atomic step (F-D9 rule 4): it specifies the
// child (contract, boundary, tools) and launches an attempt at once. A retry
// delegates again to the same child; a reassignment names a new child.
type Delegated struct {
	Parent   string `json:"parent"`
	Task     string `json:"task"`
	Child    string `json:"child"`
	Contract string `json:"contract_id"`
	Boundary string `json:"boundary"`
	Attempt  string `json:"attempt"`
	Packet   Packet `json:"packet"`
	// Feedback carries what the parent tells a retried attempt (the failed
	// checks of the previous one).
	Feedback string `json:"feedback,omitempty"`
}

// Packet is the rest of F-D4.5's work packet ⟨contract, checkpoint, tools,
// constraints⟩ (the task's contract travels beside it): the delegation
// contract that bounds the child (DC1, DC2) — its tools, constraints,
// paths, budget, timeouts, SOP and dispatch targets — and the absolute
// deadline derived from its timeout, so a restart restores it exactly
// (DC8). A child's packet only narrows its parent's (DC3).
type Packet struct {
	Checkpoint string                   `json:"checkpoint,omitempty"` // the parent's execution baseline
	Contract   scope.DelegationContract `json:"contract"`
	Deadline   time.Time                `json:"deadline,omitempty"`
}

// HelpRequested is a child's request_help (DC4): what it needs and why.
// The host numbers the rounds; nothing the child writes counts them.
type HelpRequested struct {
	Instance string   `json:"instance"`
	Round    int      `json:"round"`
	Need     string   `json:"need"` // tools, read, budget, time
	Items    []string `json:"items,omitempty"`
	Tokens   int64    `json:"tokens,omitempty"`
	Ms       int64    `json:"ms,omitempty"`
	Reason   string   `json:"reason"`
}

// HelpDecided answers a request: approved as a temporary revision of the
// child's contract (never beyond its parent's), or refused.
type HelpDecided struct {
	Instance string                    `json:"instance"`
	Round    int                       `json:"round"`
	Approved bool                      `json:"approved"`
	By       string                    `json:"by"` // rules, meta, user, host
	Revision *scope.DelegationContract `json:"revision,omitempty"`
	Deadline time.Time                 `json:"deadline,omitempty"`
	Note     string                    `json:"note"`
}

// SessionEnded closes one Worker relay session (DA-A1): its exit signal
// (declare_done, blocked, handoff, context_exhausted, watchdog, turns),
// why, and the done criteria as the host evaluated them at that moment.
type SessionEnded struct {
	Instance string `json:"instance"`
	Attempt  string `json:"attempt"`
	Session  int    `json:"session"`
	Signal   string `json:"signal"`
	Reason   string `json:"reason,omitempty"`
	Passing  []int  `json:"passing,omitempty"` // checks passing at the end (from 0)
	Failing  []int  `json:"failing,omitempty"`
	Tokens   int    `json:"tokens"` // the session's context use
}

// MetaDecision is Meta's position after a session end: start another
// worker session (with a message), give up the attempt, or ask the user.
// The host never restarts a worker on its own.
type MetaDecision struct {
	Instance string `json:"instance"`
	Session  int    `json:"session"`
	Action   string `json:"action"` // start_worker, give_up, ask_user
	Message  string `json:"message,omitempty"`
}

// Observation is a Watcher's note to Meta about a worker's stream, citing
// its evidence (a stream file and line, or an artifact path). It never
// reaches the worker.
type Observation struct {
	Instance string `json:"instance"`
	Note     string `json:"note"`
	Evidence string `json:"evidence"`
}

// WatchdogTrip records a watchdog threshold crossed (DA-A5). It is a
// message to Meta, never an automatic restart.
type WatchdogTrip struct {
	Instance string `json:"instance"`
	Kind     string `json:"kind"`
	Detail   string `json:"detail"`
}

// UserMessage is a message to the user (DA-B4): a question, a delivery
// report or a notification, in plain words. A question carries its
// options; an answer taken by default says so.
type UserMessage struct {
	Kind      string   `json:"kind"`
	Text      string   `json:"text"`
	Options   []string `json:"options,omitempty"`
	Default   string   `json:"default,omitempty"`
	Answer    string   `json:"answer,omitempty"`
	Defaulted bool     `json:"defaulted,omitempty"`
	Note      string   `json:"note,omitempty"`
}

// FinalReading records that Meta opened every deliverable of a top-level
// contract before delivery (DA-B1 (d)); the host took the list from the
// tool log, not from Meta's word.
type FinalReading struct {
	Instance string   `json:"instance"`
	Files    []string `json:"files"`
	Report   string   `json:"report"`
}

// IntakeStep is one step of the discussion or of the harness's making
// (F-D3.5, DA-B3): a question round, the answers, a refused constraint, a
// harness write (recorded before the file is written: path, size, hash,
// reason, author), a precheck, a review.
type IntakeStep struct {
	Kind     string   `json:"kind"`
	Detail   string   `json:"detail,omitempty"`
	Path     string   `json:"path,omitempty"`
	SHA256   string   `json:"sha256,omitempty"`
	Size     int      `json:"size,omitempty"`
	Author   string   `json:"author,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Passed   bool     `json:"passed,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

// HarnessChanged is an audited write of the task harness while the run is
// running (DA-A5), recorded before the file is written. Large changes need
// a harness revision review.
type HarnessChanged struct {
	Path   string `json:"path"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	Reason string `json:"reason"`
	Author string `json:"author"`
	Large  bool   `json:"large,omitempty"`
}

// HarnessReviewed is a harness revision review (DA-A2). A review by the
// change's own author counts as no review.
type HarnessReviewed struct {
	By     string   `json:"by"`
	Author string   `json:"author"`
	Paths  []string `json:"paths"`
	Passed bool     `json:"passed"`
	Note   string   `json:"note,omitempty"`
}

// Constraint is one of the six explicit constraints of DA-B3, with the
// quotation of the user's words it comes from.
type Constraint struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Text   string `json:"text"`
	Quote  string `json:"quote"`
	Source string `json:"source"`
}

// Constraints records the discussion's constraints, and its whole outcome
// (rounds and answers included) so a resumed run can review the harness
// against exactly what was agreed.
type Constraints struct {
	List    []Constraint    `json:"list"`
	Outcome json.RawMessage `json:"outcome,omitempty"`
}

// BootstrapReviewed records the bootstrap review gate (DA-A2): running may
// be entered only after it passed.
type BootstrapReviewed struct {
	Passed bool   `json:"passed"`
	By     string `json:"by"` // reviewer, or "task file" when the contracts were given and no harness written
	Note   string `json:"note,omitempty"`
}

// StallAlert tells the parent that a child has made no progress for its
// stall threshold (DC7). Nothing is killed: the parent decides.
type StallAlert struct {
	Instance string    `json:"instance"`
	Since    time.Time `json:"since"`
	Note     string    `json:"note"`
}

// Checkpoint is F-D8's checkpoint: the execution baseline of an attempt, so
// a failed attempt can be located and retried.
type Checkpoint struct {
	Instance string `json:"instance"`
	Attempt  string `json:"attempt"`
	ID       string `json:"id"`
	PlanRef  string `json:"plan_ref,omitempty"`
	Tree     string `json:"tree"` // content hash of the boundary's files
	Files    int    `json:"files"`
}

// ModelCallStarted brackets a model call. A started call without a finish is
// simply redone on recovery: model calls change no world state.
type ModelCallStarted struct {
	Instance string     `json:"instance"`
	Call     string     `json:"call"`
	Role     model.Role `json:"role"`
	// Reserve is the call's worst case in tokens (a conservative prompt
	// estimate plus max_tokens), held against the run's budget and every
	// budget on the instance's path to the root until the call finishes.
	Reserve int64 `json:"reserve,omitempty"`
}

// ModelAttempt records one failed try of a model call (a retry or a
// fallback), so the journal shows every attempt, not only the outcome.
type ModelAttempt struct {
	Instance string        `json:"instance"`
	Call     string        `json:"call"`
	Attempt  model.Attempt `json:"attempt"`
}

// ModelCallFinished records the answer's usage and where the transcript is.
type ModelCallFinished struct {
	Instance   string      `json:"instance"`
	Call       string      `json:"call"`
	Role       model.Role  `json:"role"`
	Usage      model.Usage `json:"usage"`
	Model      string      `json:"model,omitempty"`
	Transcript string      `json:"transcript,omitempty"` // run-relative file holding the call's request and answer
	Offset     int64       `json:"offset,omitempty"`     // byte offset of the call's line in Transcript
	SHA256     string      `json:"sha256,omitempty"`
	Err        string      `json:"error,omitempty"`
}

// ToolCallStarted is proposed before a tool runs. Writes lists the
// run-relative paths the call would write; the Guard refuses the event (and
// so the call) when one falls outside the instance's boundary.
type ToolCallStarted struct {
	Instance string     `json:"instance"`
	Call     string     `json:"call"`
	Tool     string     `json:"tool"`
	Role     model.Role `json:"role"`
	ArgsHash string     `json:"args_hash"`
	Writes   []string   `json:"writes,omitempty"`
}

// ToolCallFinished records the outcome. Writes are the paths really written.
type ToolCallFinished struct {
	Instance string   `json:"instance"`
	Call     string   `json:"call"`
	Tool     string   `json:"tool"`
	ErrCode  string   `json:"error_code,omitempty"`
	Writes   []string `json:"writes,omitempty"`
}

// Refused records a proposal the Guard (or a tool's own confinement)
// refused, so the audit trail shows attempts, not only successes.
type Refused struct {
	Instance string `json:"instance"`
	Proposed Type   `json:"proposed"`
	Code     string `json:"code"`
	Detail   string `json:"detail"`
}

// SelfCheck is the worker's own claim about one check.
type SelfCheck struct {
	Check    int    `json:"check"`
	Pass     bool   `json:"pass"`
	Evidence string `json:"evidence,omitempty"`
}

// EvidenceSubmitted is a submission (F-D9): a child hands its evidence to
// its parent, ending the attempt. The host computed the results; SelfReport
// is only what the worker claimed.
type EvidenceSubmitted struct {
	Instance   string            `json:"instance"`
	Attempt    string            `json:"attempt"`
	Evidence   contract.Evidence `json:"evidence"`
	SelfReport []SelfCheck       `json:"self_report,omitempty"`
	Summary    string            `json:"summary,omitempty"`
	// Gates is what the submission gates found (DC5); the parent may
	// accept only evidence that satisfies its contract and passed them.
	Gates Gates `json:"gates"`
}

// Gates records the submission gates of DC5: the host's rule checks, the
// Reviewer's quality review (fails closed), the delivery gate, and the
// structured result the parent receives instead of raw text.
type Gates struct {
	Rules    []string    `json:"rules,omitempty"`    // rule-check problems
	Review   string      `json:"review"`             // "passed", or why not
	Delivery []string    `json:"delivery,omitempty"` // delivery-gate problems
	Result   gate.Result `json:"result"`
}

// Passed reports whether every gate passed.
func (g Gates) Passed() bool {
	return len(g.Rules) == 0 && g.Review == ReviewPassed && len(g.Delivery) == 0
}

// ReviewPassed is Gates.Review for a passed quality review.
const ReviewPassed = "passed"

// AttemptStatus is F-D8's attempt status.
type AttemptStatus string

// Attempt statuses.
const (
	AttemptRunning     AttemptStatus = "running"
	AttemptSubmitted   AttemptStatus = "submitted" // evidence given, verdict pending
	AttemptPassed      AttemptStatus = "passed"
	AttemptFailed      AttemptStatus = "failed"
	AttemptInterrupted AttemptStatus = "interrupted"
	AttemptTimeout     AttemptStatus = "timeout" // its deadline passed (DC7)
)

// AttemptEnded ends an attempt without evidence: it failed (the model broke,
// the script ran out) or was interrupted by a crash of the host.
type AttemptEnded struct {
	Instance string        `json:"instance"`
	Attempt  string        `json:"attempt"`
	Status   AttemptStatus `json:"status"` // failed, interrupted or timeout
	Reason   string        `json:"reason"`
	// Code is the Guard code that stopped the attempt, if one did (for
	// example E-BUDGET).
	Code string `json:"code,omitempty"`
}

// Verdict is v(c,e) given by the parent (F-T3): only the parent that
// defined the child's checks may accept.
type Verdict struct {
	By      string         `json:"by"`
	Child   string         `json:"child"`
	Task    string         `json:"task"`
	Attempt string         `json:"attempt"`
	Verdict policy.Verdict `json:"verdict"`
	Failed  []int          `json:"failed,omitempty"`
}

// Decision is r(c,e,p) after a rejection or a failed or interrupted
// attempt. The Guard recomputes it from the policy and the host's tally.
type Decision struct {
	By     string        `json:"by"`
	Task   string        `json:"task"`
	Action policy.Action `json:"action"`
	Risk   float64       `json:"risk,omitempty"`
	Reason string        `json:"reason,omitempty"`
}

// MergedFile is one promoted file.
type MergedFile struct {
	From   string `json:"from"` // run-relative
	To     string `json:"to"`   // run-relative
	SHA256 string `json:"sha256"`
}

// Merged records the files a parent promoted from accepted children into
// its own boundary.
type Merged struct {
	Instance string       `json:"instance"`
	Files    []MergedFile `json:"files"`
}

// Stage is the run's stage as kept in manifest.yaml (DA-A4).
type Stage string

// The stages of the spine. Later stages (clarifying, bootstrapping, paused)
// slot in without changing these.
const (
	StageSubmitted    Stage = "submitted"
	StageClarifying   Stage = "clarifying"
	StageBootstrap    Stage = "bootstrapping"
	StageRunning      Stage = "running"
	StagePaused       Stage = "paused"
	StageAwaitingUser Stage = "awaiting_user"
	StageDone         Stage = "done"
	StageFailed       Stage = "failed"
	StageCancelled    Stage = "cancelled"
)

// StageChanged mirrors a manifest compare-and-swap in the journal.
type StageChanged struct {
	From   Stage  `json:"from"`
	To     Stage  `json:"to"`
	By     string `json:"by"` // host, meta or user (DA-A4)
	Reason string `json:"reason,omitempty"`
}

// RunFinished closes the run; nothing but stage changes may follow.
type RunFinished struct {
	Status      Stage    `json:"status"` // done, failed, cancelled
	Reason      string   `json:"reason,omitempty"`
	Deliverable []string `json:"deliverable,omitempty"` // run-relative files handed to the user
}
