package state

import "fmt"

// Code is a stable Guard error code. Codes never change meaning; new
// invariants get new codes.
type Code string

// The Guard's codes. Catalogue gives each one's meaning and what the engine
// does next; docs/guard.md is the same table for people.
const (
	EEvent           Code = "E-EVENT"
	ESeq             Code = "E-SEQ"
	ERun             Code = "E-RUN"
	EFinished        Code = "E-FINISHED"
	EStage           Code = "E-STAGE"
	EContractMutate  Code = "E-CONTRACT-MUTATE"
	EContractUnknown Code = "E-CONTRACT-UNKNOWN"
	EContractSource  Code = "E-CONTRACT-SOURCE"
	EEvidenceUnbound Code = "E-EVIDENCE-UNBOUND"
	EParent          Code = "E-PARENT"
	EBoundaryWrite   Code = "E-BOUNDARY-WRITE"
	EBoundaryOverlap Code = "E-BOUNDARY-OVERLAP"
	EOneMode         Code = "E-ONE-MODE"
	EOneHandler      Code = "E-ONE-HANDLER"
	EDepth           Code = "E-DEPTH"
	EDAGCycle        Code = "E-DAG-CYCLE"
	ECheckMap        Code = "E-CHECK-MAP"
	EPredecessor     Code = "E-PRED-NOT-ACCEPTED"
	EFrozen          Code = "E-FROZEN"
	EAttempt         Code = "E-ATTEMPT"
	EAcceptNotParent Code = "E-ACCEPT-NOT-PARENT"
	EAcceptUnsat     Code = "E-ACCEPT-UNSAT"
	EAcceptTwice     Code = "E-ACCEPT-TWICE"
	EVerdict         Code = "E-VERDICT"
	EDecision        Code = "E-DECISION"
	EChildrenOpen    Code = "E-CHILDREN-OPEN"
	EBudget          Code = "E-BUDGET"
	EWiden           Code = "E-WIDEN"
	EConcurrency     Code = "E-CONCURRENCY"
	EHelpRounds      Code = "E-HELP-ROUNDS"
	EAcceptUngated   Code = "E-ACCEPT-UNGATED"
	ENotDone         Code = "E-NOT-DONE"
)

// Entry describes one code.
type Entry struct {
	Code    Code
	Meaning string // one line: the invariant the event would break
	Next    string // what the engine does when it meets this code
}

// Catalogue lists every code the Guard can return.
var Catalogue = []Entry{
	{EEvent, "the event is malformed: unknown type or version, or its payload does not match its type", "refuse it; on replay, stop and report the line"},
	{ESeq, "the event's sequence number is not the next one (a line was removed, repeated or reordered)", "on replay, stop: the journal was edited"},
	{ERun, "run_started is missing, repeated, or not the first event", "on replay, stop; a new run writes it first"},
	{EFinished, "an event other than a stage change follows run_finished", "refuse it; the run is over"},
	{EStage, "a stage change does not start from the current stage", "re-read the manifest and retry the compare-and-swap"},
	{EContractMutate, "a contract's id does not match its content, or a known id is registered with other content (I-Contract, F-T4)", "refuse it; a changed requirement must become a new contract"},
	{EContractUnknown, "an event refers to a contract that was never registered", "refuse it; register the contract first"},
	{EContractSource, "a contract comes neither from the discussion nor from a planning instance's decomposition (F-A2)", "refuse it"},
	{EEvidenceUnbound, "evidence names another contract, or does not hold exactly one result per check, in order (I-Evidence)", "refuse the submission; the attempt must produce evidence for its own contract"},
	{EParent, "an instance would have no parent, two parents, or an id already taken (I-Parent)", "refuse the delegation"},
	{EBoundaryWrite, "a write falls outside the writing instance's boundary (I-Boundary, F-A3)", "refuse the tool call, record the refusal, tell the model"},
	{EBoundaryOverlap, "a child's boundary is not strictly inside its parent's, or overlaps a sibling's", "refuse the plan or delegation; Meta must plan disjoint folders"},
	{EOneMode, "an instance would have two capabilities active at once, or acts outside the capability that allows it (I-OneMode)", "refuse it; the instance must return to idle first"},
	{EOneHandler, "a contract would be processed by a second instance at the same time (I-OneHandler, F-T1)", "refuse the delegation"},
	{EDepth, "a delegation would exceed max_depth (F-D7)", "refuse the plan; the contract must be built directly"},
	{EDAGCycle, "a plan's dependencies form a cycle or name an unknown task", "refuse the plan; Meta must resubmit"},
	{ECheckMap, "the check map leaves a parent check unserved or names a check that does not exist", "refuse the plan; Meta must map every parent check"},
	{EPredecessor, "a task would start before all its predecessors are accepted (F-D9 rule 1)", "refuse the delegation; wait for the predecessors"},
	{EFrozen, "a parent would act while its children run (F-D9 rule 3)", "refuse it; the parent waits for its children"},
	{EAttempt, "an event refers to an attempt that is not the instance's running (or submitted) attempt", "refuse it"},
	{EAcceptNotParent, "a verdict comes from someone other than the child's parent (F-T3)", "refuse it; only the parent accepts"},
	{EAcceptUnsat, "evidence would be accepted although sat(c,e) is false (F-D3)", "refuse the acceptance"},
	{EAcceptTwice, "a task that is already accepted would be accepted again", "refuse it; accepted work is never accepted twice"},
	{EVerdict, "a verdict differs from v(c,e): evidence that satisfies its contract was rejected", "refuse it; v is deterministic"},
	{EDecision, "a decision differs from r(c,e,p) for the task's tally and the policy, or no decision is due", "refuse it; the policy decides"},
	{EChildrenOpen, "a parent would merge or submit before every task of its plan is accepted (F-D9 rule 3)", "refuse it; supervise until all are accepted"},
	{EWiden, "a child's delegation contract is wider than its parent's in any dimension, or a worker calls a tool its contract does not grant (F-D4.5, DC3)", "refuse it; a child can never do more than its parent"},
	{EConcurrency, "a parent would run more children at once than its contract's max_concurrent (DC6)", "refuse the delegation; the task waits for a running sibling to end"},
	{EHelpRounds, "a request for help is out of turn or past the three rounds the host allows (DC4)", "refuse it; the child must adapt or give up"},
	{EAcceptUngated, "evidence would be accepted although its submission gates (rules, quality review, delivery) did not pass (DC5)", "refuse the acceptance; a failed or missing review is never a pass"},
	{EBudget, "a model call's worst case, or a child's budget, does not fit a budget on the way to the root (DC6)", "refuse it; the decision goes to the user"},
	{ENotDone, "the run would finish as done with a top-level contract not accepted", "refuse it"},
}

// Violation is the error Guard returns.
type Violation struct {
	Code   Code
	Detail string
}

func (v *Violation) Error() string { return string(v.Code) + ": " + v.Detail }

func violate(c Code, format string, a ...any) *Violation {
	return &Violation{Code: c, Detail: fmt.Sprintf(format, a...)}
}
