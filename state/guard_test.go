package state

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/gate"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/scope"
)

// scenario builds a State event by event through Step, so every fixture is
// itself a journal the Guard accepts.
type scenario struct {
	t *testing.T
	s *State
}

// base is the fixtures' clock: event n happens n seconds after it.
var base = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func (sc *scenario) ev(e Event) Event {
	if e.Type == TDelegated && e.Delegated != nil && e.Delegated.Packet.Contract.Identity.AgentKind == "" && sc.s.Inst[e.Delegated.Parent] != nil {
		d := *e.Delegated
		d.Packet = packetFor(sc.s, d.Parent, d.Boundary, 100_000)
		e.Delegated = &d
	}
	e.Seq, e.V = sc.s.Seq+1, Version
	e.Time = base.Add(time.Duration(e.Seq) * time.Second)
	return e
}

func (e Event) payloadsCheck(t *testing.T) {
	t.Helper()
	if p := e.payloads(); len(p) != 1 || p[0] != e.Type {
		t.Fatalf("fixture event %s has payloads %v", e.Type, p)
	}
}

func (sc *scenario) step(e Event) {
	sc.t.Helper()
	e.payloadsCheck(sc.t)
	if err := sc.s.Step(sc.ev(e)); err != nil {
		sc.t.Fatalf("step %s: %v", e.Type, err)
	}
}

// try proposes e and returns the Guard's verdict without applying it.
func (sc *scenario) try(e Event) error { return Guard(sc.s, sc.ev(e)) }

var (
	cRoot = contract.New("root: write a.md and b.md", []contract.Check{{Kind: contract.FileExists, Path: "a/a.md"}, {Kind: contract.FileExists, Path: "b/b.md"}})
	cA    = contract.New("part a", []contract.Check{{Kind: contract.FileExists, Path: "a.md"}})
	cB    = contract.New("part b", []contract.Check{{Kind: contract.FileExists, Path: "b.md"}})
)

func mode(id string, m Mode) Event {
	return Event{Type: TModeChanged, ModeChanged: &ModeChanged{Instance: id, To: m}}
}

func register(c contract.Contract, src Source, by string) Event {
	return Event{Type: TContractRegistered, ContractRegistered: &ContractRegistered{Contract: c, Source: src, By: by}}
}

// packetFor clones the parent's delegation contract down to the child's
// folder (DC3), with the given token budget, ending an hour after base.
func packetFor(s *State, parent, boundary string, tokens int64) Packet {
	p := s.Inst[parent]
	pc := p.Packet.Contract
	read := []string{"inputs", p.Boundary}
	if parent == Session {
		read = []string{"inputs", boundary}
	}
	c, err := scope.Clone(pc, scope.Request{AgentKind: "general", Inherit: scope.InheritFull, DispatchTargets: pc.DispatchTargets,
		Scope: scope.Scope{Read: read, Write: []string{boundary}}, Budget: scope.Budget{MaxTokens: tokens}})
	if err != nil {
		panic(err)
	}
	return Packet{Contract: c, Deadline: base.Add(time.Hour)}
}

// delegate's packet is cloned from the parent's when the event is
// proposed (scenario.ev), as the engine does.
func delegate(parent, task, child, cid, boundary, attempt string) Event {
	return Event{Type: TDelegated, Delegated: &Delegated{Parent: parent, Task: task, Child: child, Contract: cid, Boundary: boundary, Attempt: attempt}}
}

func rootContract() scope.DelegationContract {
	c := scope.Root()
	c.Constraints.NoNetwork = true
	return c
}

func evidence(inst, attempt string, c contract.Contract, pass bool) Event {
	e := contract.Evidence{ContractID: c.ID, Artifacts: []string{"out.md"}}
	for i := range c.Checks {
		e.Results = append(e.Results, contract.Result{Check: i, Pass: pass})
	}
	g := Gates{Review: ReviewPassed, Result: gate.Result{Status: gate.StatusCompleted, Summary: "done", Artifacts: e.Artifacts}}
	if !pass {
		g = Gates{Review: "not run: the checks do not pass", Result: gate.Result{Status: gate.StatusFailed, Summary: "not done"}}
	}
	return Event{Type: TEvidenceSubmitted, EvidenceSubmitted: &EvidenceSubmitted{Instance: inst, Attempt: attempt, Evidence: e, Gates: g}}
}

func verdict(by, child, task, attempt string, v policy.Verdict) Event {
	return Event{Type: TVerdict, Verdict: &Verdict{By: by, Child: child, Task: task, Attempt: attempt, Verdict: v}}
}

// started returns a run whose root instance "r" holds cRoot and has
// planned tasks a and b (b after a), delegated a, and sits in supervise.
func started(t *testing.T, pol policy.Policy) *scenario {
	sc := &scenario{t: t, s: New()}
	sc.step(Event{Type: TRunStarted, RunStarted: &RunStarted{RunID: "t", Policy: pol, Model: "script", Boundary: "work", Root: rootContract()}})
	sc.step(register(cRoot, FromDiscussion, Session))
	sc.step(Event{Type: TPlanRecorded, PlanRecorded: &PlanRecorded{Instance: Session, Tasks: []PlanTask{{ID: "r", ContractID: cRoot.ID, Boundary: "work/r"}}}})
	sc.step(mode(Session, Delegate))
	sc.step(delegate(Session, "r", "r", cRoot.ID, "work/r", "r#1"))
	sc.step(mode(Session, Idle))
	sc.step(mode(Session, Supervise))
	sc.step(mode("r", Plan))
	sc.step(register(cA, FromDecomposition, "r"))
	sc.step(register(cB, FromDecomposition, "r"))
	sc.step(Event{Type: TPlanRecorded, PlanRecorded: &PlanRecorded{Instance: "r",
		Tasks:    []PlanTask{{ID: "a", ContractID: cA.ID, Boundary: "work/r/a"}, {ID: "b", ContractID: cB.ID, Boundary: "work/r/b", Deps: []string{"a"}}},
		CheckMap: []CheckLink{{ParentCheck: 0, Task: "a", ChildCheck: 0}, {ParentCheck: 1, Task: "b", ChildCheck: 0}}}})
	sc.step(mode("r", Idle))
	sc.step(mode("r", Delegate))
	sc.step(delegate("r", "a", "r/a", cA.ID, "work/r/a", "r/a#1"))
	sc.step(mode("r", Idle))
	sc.step(mode("r", Supervise))
	sc.step(mode("r/a", Build))
	return sc
}

func wantCode(t *testing.T, err error, code Code) {
	t.Helper()
	var v *Violation
	if !errors.As(err, &v) {
		t.Fatalf("want %s, got %v", code, err)
	}
	if v.Code != code {
		t.Fatalf("want %s, got %s: %s", code, v.Code, v.Detail)
	}
}

// widenMarker stands for a delegation widened after cloning, built once
// the scenario exists.
var widenMarker = Event{Type: TDelegated, Delegated: &Delegated{Parent: "r", Task: "b"}}

// F-D12: every code of the catalogue is shown refusing the event it names.
func TestGuardCodes(t *testing.T) {
	pol := policy.Default()
	cases := []struct {
		code  Code
		setup func(sc *scenario)
		event Event
	}{
		{EEvent, nil, Event{Type: TModeChanged, ModelCallStarted: &ModelCallStarted{Instance: "r"}}},
		{ERun, nil, Event{Type: TRunStarted, RunStarted: &RunStarted{RunID: "again", Policy: pol, Boundary: "work"}}},
		{EFinished, func(sc *scenario) {
			sc.step(Event{Type: TRunFinished, RunFinished: &RunFinished{Status: StageFailed}})
		}, mode("r/a", Idle)},
		{EStage, nil, Event{Type: TStageChanged, StageChanged: &StageChanged{From: StageRunning, To: StageDone}}},
		// I-Contract, F-T4: an edited contract keeps its old id.
		{EContractMutate, nil, register(contract.Contract{ID: cA.ID, Intent: "part a, but more", Checks: cA.Checks}, FromDiscussion, Session)},
		{EContractUnknown, func(sc *scenario) { sc.step(mode("r/a", Idle)); sc.step(mode("r/a", Plan)) },
			Event{Type: TPlanRecorded, PlanRecorded: &PlanRecorded{Instance: "r/a", Tasks: []PlanTask{{ID: "x", ContractID: "c-0000000000000000", Boundary: "work/r/a/x"}}}}},
		// F-A2: a contract from nowhere.
		{EContractSource, nil, register(contract.New("smuggled", cA.Checks), FromDecomposition, "r/a")},
		// I-Evidence.
		{EEvidenceUnbound, nil, evidence("r/a", "r/a#1", cB, true)},
		// I-Parent: no instance without an existing parent.
		{EParent, nil, delegate("ghost", "b", "ghost/b", cB.ID, "work/r/b", "ghost/b#1")},
		// I-Boundary, F-A3: "work/r/ab" is not inside "work/r/a".
		{EBoundaryWrite, nil, Event{Type: TToolCallStarted, ToolCallStarted: &ToolCallStarted{Instance: "r/a", Call: "t1", Tool: "write_file", Writes: []string{"work/r/ab/x.md"}}}},
		{EBoundaryOverlap, func(sc *scenario) {
			sc.step(mode("r/a", Idle))
			sc.step(mode("r/a", Plan))
			sc.step(register(contract.New("x", cA.Checks), FromDecomposition, "r/a"))
		},
			Event{Type: TPlanRecorded, PlanRecorded: &PlanRecorded{Instance: "r/a", Tasks: []PlanTask{{ID: "x", ContractID: contract.New("x", cA.Checks).ID, Boundary: "work/r/b/x"}}, AfterMerge: []int{0}}}},
		// I-OneMode.
		{EOneMode, nil, mode("r/a", Plan)},
		// I-OneHandler: r/a is processing cA.
		{EOneHandler, func(sc *scenario) { sc.step(mode("r/a", Idle)); sc.step(mode("r/a", Plan)) },
			Event{Type: TPlanRecorded, PlanRecorded: &PlanRecorded{Instance: "r/a", Tasks: []PlanTask{{ID: "x", ContractID: cA.ID, Boundary: "work/r/a/x"}}, AfterMerge: []int{0}}}},
		{EDAGCycle, func(sc *scenario) {
			sc.step(mode("r/a", Idle))
			sc.step(mode("r/a", Plan))
			sc.step(register(contract.New("x", cA.Checks), FromDecomposition, "r/a"))
			sc.step(register(contract.New("y", cA.Checks), FromDecomposition, "r/a"))
		}, Event{Type: TPlanRecorded, PlanRecorded: &PlanRecorded{Instance: "r/a", AfterMerge: []int{0}, Tasks: []PlanTask{
			{ID: "x", ContractID: contract.New("x", cA.Checks).ID, Boundary: "work/r/a/x", Deps: []string{"y"}},
			{ID: "y", ContractID: contract.New("y", cA.Checks).ID, Boundary: "work/r/a/y", Deps: []string{"x"}}}}}},
		{ECheckMap, func(sc *scenario) {
			sc.step(mode("r/a", Idle))
			sc.step(mode("r/a", Plan))
			sc.step(register(contract.New("x", cA.Checks), FromDecomposition, "r/a"))
		}, Event{Type: TPlanRecorded, PlanRecorded: &PlanRecorded{Instance: "r/a", Tasks: []PlanTask{{ID: "x", ContractID: contract.New("x", cA.Checks).ID, Boundary: "work/r/a/x"}}}}},
		// F-D9 rule 1: b depends on a, which is not accepted.
		{EPredecessor, func(sc *scenario) { sc.step(mode("r", Idle)); sc.step(mode("r", Delegate)) },
			delegate("r", "b", "r/b", cB.ID, "work/r/b", "r/b#1")},
		// F-D9 rule 3: the parent is frozen while r/a runs.
		{EFrozen, nil, Event{Type: TToolCallStarted, ToolCallStarted: &ToolCallStarted{Instance: "r", Call: "t1", Tool: "read_file"}}},
		{EAttempt, nil, evidence("r/a", "r/a#7", cA, true)},
		// F-T3: only the parent accepts.
		{EAcceptNotParent, func(sc *scenario) { sc.step(evidence("r/a", "r/a#1", cA, true)) },
			verdict(Session, "r/a", "a", "r/a#1", policy.Accept)},
		// F-D3: no acceptance without sat.
		{EAcceptUnsat, func(sc *scenario) { sc.step(evidence("r/a", "r/a#1", cA, false)) },
			verdict("r", "r/a", "a", "r/a#1", policy.Accept)},
		{EAcceptTwice, func(sc *scenario) {
			sc.step(evidence("r/a", "r/a#1", cA, true))
			sc.step(verdict("r", "r/a", "a", "r/a#1", policy.Accept))
		}, verdict("r", "r/a", "a", "r/a#1", policy.Accept)},
		{EVerdict, func(sc *scenario) { sc.step(evidence("r/a", "r/a#1", cA, true)) },
			verdict("r", "r/a", "a", "r/a#1", policy.Reject)},
		// F-D6: r is the policy's, not the supervisor's.
		{EDecision, func(sc *scenario) {
			sc.step(evidence("r/a", "r/a#1", cA, false))
			sc.step(verdict("r", "r/a", "a", "r/a#1", policy.Reject))
		}, Event{Type: TDecision, Decision: &Decision{By: "r", Task: "a", Action: policy.Reassign}}},
		{EChildrenOpen, func(sc *scenario) {
			sc.step(evidence("r/a", "r/a#1", cA, true))
			sc.step(verdict("r", "r/a", "a", "r/a#1", policy.Accept))
		}, evidence("r", "r#1", cRoot, true)},
		// F-D4.5: a child's packet only narrows its parent's.
		{EWiden, func(sc *scenario) {
			sc.step(evidence("r/a", "r/a#1", cA, true))
			sc.step(verdict("r", "r/a", "a", "r/a#1", policy.Accept))
			sc.step(mode("r", Idle))
			sc.step(mode("r", Delegate))
		},
			widenMarker},
		{EBudget, func(sc *scenario) {
			sc.step(Event{Type: TModelCallStarted, ModelCallStarted: &ModelCallStarted{Instance: "r/a", Call: "m1", Role: model.Worker}})
			sc.step(Event{Type: TModelCallFinished, ModelCallFinished: &ModelCallFinished{Instance: "r/a", Call: "m1", Role: model.Worker, Usage: model.Usage{Input: int(pol.Budget.Tokens)}}})
		}, Event{Type: TModelCallStarted, ModelCallStarted: &ModelCallStarted{Instance: "r/a", Call: "m2", Role: model.Worker}}},
		{ENotDone, nil, Event{Type: TRunFinished, RunFinished: &RunFinished{Status: StageDone}}},
		// DC5: checks that pass are not enough; the gates must pass too.
		{EAcceptUngated, func(sc *scenario) {
			ev := evidence("r/a", "r/a#1", cA, true)
			ev.EvidenceSubmitted.Gates.Review = "not accepted: the reviewer submitted no verdict"
			sc.step(ev)
		}, verdict("r", "r/a", "a", "r/a#1", policy.Accept)},
		// DC4: the host counts rounds; a fourth is refused.
		{EHelpRounds, func(sc *scenario) {
			for n := 1; n <= MaxHelpRounds; n++ {
				sc.step(Event{Type: THelpRequested, HelpRequested: &HelpRequested{Instance: "r/a", Round: n, Need: "tools", Reason: "x"}})
				sc.step(Event{Type: THelpDecided, HelpDecided: &HelpDecided{Instance: "r/a", Round: n, Note: "no"}})
			}
		}, Event{Type: THelpRequested, HelpRequested: &HelpRequested{Instance: "r/a", Round: MaxHelpRounds + 1, Need: "tools", Reason: "x"}}},
	}
	seen := map[Code]bool{}
	for _, tc := range cases {
		t.Run(string(tc.code), func(t *testing.T) {
			sc := started(t, pol)
			if tc.setup != nil {
				tc.setup(sc)
			}
			before := sc.s.Seq
			ev := tc.event
			if ev.Type == widenMarker.Type && ev.Delegated == widenMarker.Delegated {
				ev = sc.widened("r", "b", "r/b", cB.ID, "work/r/b", "r/b#1", func(p *Packet) {
					p.Contract.Capabilities.Allowed = append(p.Contract.Capabilities.Allowed, "shell")
				})
			}
			wantCode(t, sc.try(ev), tc.code)
			if sc.s.Seq != before {
				t.Fatal("Guard changed the state")
			}
		})
		seen[tc.code] = true
	}
	// ESeq, EDepth and EConcurrency have tests of their own below.
	seen[ESeq], seen[EDepth], seen[EConcurrency] = true, true, true
	for _, e := range Catalogue {
		if !seen[e.Code] {
			t.Errorf("code %s has no test", e.Code)
		}
	}
}

// E-SEQ: a removed or repeated journal line is caught on replay.
func TestGuardSeq(t *testing.T) {
	sc := started(t, policy.Default())
	ev := sc.ev(mode("r/a", Idle))
	ev.Seq += 2
	wantCode(t, Guard(sc.s, ev), ESeq)
	ev.Seq = sc.s.Seq
	wantCode(t, Guard(sc.s, ev), ESeq)
}

// F-D7 / F-T5: depth is bounded by max_depth.
func TestGuardDepth(t *testing.T) {
	pol := policy.Default()
	pol.MaxDepth = 1 // r/a (depth 1) may not delegate further
	sc := started(t, pol)
	sc.step(mode("r/a", Idle))
	sc.step(mode("r/a", Plan))
	x := contract.New("x", cA.Checks)
	sc.step(register(x, FromDecomposition, "r/a"))
	err := sc.try(Event{Type: TPlanRecorded, PlanRecorded: &PlanRecorded{Instance: "r/a", Tasks: []PlanTask{{ID: "x", ContractID: x.ID, Boundary: "work/r/a/x"}}, AfterMerge: []int{0}}})
	wantCode(t, err, EDepth)
}

// F-D9, F-D6: a full cycle — reject, retry by policy, accept, then the
// next task starts, the parent merges and submits, and the session accepts.
func TestGuardHappyPathAndRetry(t *testing.T) {
	sc := started(t, policy.Default())
	sc.step(Event{Type: TToolCallStarted, ToolCallStarted: &ToolCallStarted{Instance: "r/a", Call: "t1", Tool: "write_file", Writes: []string{"work/r/a/a.md"}}})
	sc.step(Event{Type: TToolCallFinished, ToolCallFinished: &ToolCallFinished{Instance: "r/a", Call: "t1", Tool: "write_file", Writes: []string{"work/r/a/a.md"}}})
	sc.step(evidence("r/a", "r/a#1", cA, false))
	if sc.s.Inst["r/a"].Mode != Idle {
		t.Fatal("submission must end the build capability")
	}
	sc.step(verdict("r", "r/a", "a", "r/a#1", policy.Reject))
	if got := sc.s.Decide("r", "a", 0); got != policy.Retry {
		t.Fatalf("first rejection: policy says %s", got)
	}
	sc.step(Event{Type: TDecision, Decision: &Decision{By: "r", Task: "a", Action: policy.Retry}})
	sc.step(mode("r", Idle))
	sc.step(mode("r", Delegate))
	// A retry goes to the same instance with a new attempt.
	wantCode(t, sc.try(delegate("r", "a", "r/a2", cA.ID, "work/r/a", "r/a2#1")), EParent)
	sc.step(delegate("r", "a", "r/a", cA.ID, "work/r/a", "r/a#2"))
	if a := sc.s.Attempt["r/a#2"]; a.Number != 2 {
		t.Fatalf("attempt number %d", a.Number)
	}
	sc.step(mode("r", Idle))
	sc.step(mode("r", Supervise))
	sc.step(mode("r/a", Build))
	sc.step(evidence("r/a", "r/a#2", cA, true))
	sc.step(verdict("r", "r/a", "a", "r/a#2", policy.Accept))
	sc.step(mode("r", Idle))
	sc.step(mode("r", Delegate))
	sc.step(delegate("r", "b", "r/b", cB.ID, "work/r/b", "r/b#1"))
	sc.step(mode("r", Idle))
	sc.step(mode("r", Supervise))
	sc.step(mode("r/b", Build))
	sc.step(evidence("r/b", "r/b#1", cB, true))
	sc.step(verdict("r", "r/b", "b", "r/b#1", policy.Accept))
	sc.step(Event{Type: TMerged, Merged: &Merged{Instance: "r", Files: []MergedFile{{From: "work/r/a/a.md", To: "work/r/a.md"}}}})
	sc.step(evidence("r", "r#1", cRoot, true))
	sc.step(verdict(Session, "r", "r", "r#1", policy.Accept))
	// DA-B1 (d): not done until Meta has read the deliverables.
	wantCode(t, sc.try(Event{Type: TRunFinished, RunFinished: &RunFinished{Status: StageDone}}), ENotDone)
	sc.step(Event{Type: TFinalReading, FinalReading: &FinalReading{Instance: "r", Files: []string{"work/r/a/a.md"}, Report: "Done."}})
	sc.step(Event{Type: TRunFinished, RunFinished: &RunFinished{Status: StageDone}})
	if sc.s.Stage != StageDone {
		t.Fatalf("stage %s", sc.s.Stage)
	}
}

// F-D6: after the retries, r reassigns to a fresh instance, which retires
// the old one; an interruption is retried without spending a retry.
func TestGuardReassignAndInterrupt(t *testing.T) {
	pol := policy.Default()
	pol.RetryCount = 0
	sc := started(t, pol)
	sc.step(Event{Type: TAttemptEnded, AttemptEnded: &AttemptEnded{Instance: "r/a", Attempt: "r/a#1", Status: AttemptInterrupted, Reason: "crash"}})
	if got := sc.s.Decide("r", "a", 0); got != policy.Retry {
		t.Fatalf("interrupted: %s", got)
	}
	sc.step(Event{Type: TDecision, Decision: &Decision{By: "r", Task: "a", Action: policy.Retry}})
	sc.step(mode("r", Idle))
	sc.step(mode("r", Delegate))
	sc.step(delegate("r", "a", "r/a", cA.ID, "work/r/a", "r/a#2"))
	sc.step(mode("r", Idle))
	sc.step(mode("r", Supervise))
	sc.step(Event{Type: TAttemptEnded, AttemptEnded: &AttemptEnded{Instance: "r/a", Attempt: "r/a#2", Status: AttemptFailed, Reason: "model broke"}})
	wantCode(t, sc.try(Event{Type: TDecision, Decision: &Decision{By: "r", Task: "a", Action: policy.Retry}}), EDecision)
	sc.step(Event{Type: TDecision, Decision: &Decision{By: "r", Task: "a", Action: policy.Reassign}})
	sc.step(mode("r", Idle))
	sc.step(mode("r", Delegate))
	sc.step(delegate("r", "a", "r/a@2", cA.ID, "work/r/a", "r/a@2#3"))
	if !sc.s.Inst["r/a"].Retired {
		t.Fatal("the reassigned instance must be retired")
	}
	wantCode(t, sc.try(Event{Type: TModelCallStarted, ModelCallStarted: &ModelCallStarted{Instance: "r/a", Call: "m9"}}), EParent)
}

// F-D12: the catalogue has one entry per code with a meaning and a next
// step, and docs/guard.md documents every code.
func TestCatalogueDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/guard.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Code]bool{}
	for _, e := range Catalogue {
		if seen[e.Code] {
			t.Errorf("%s listed twice", e.Code)
		}
		seen[e.Code] = true
		if e.Meaning == "" || e.Next == "" {
			t.Errorf("%s lacks a meaning or a next step", e.Code)
		}
		if !strings.Contains(string(doc), "`"+string(e.Code)+"`") {
			t.Errorf("docs/guard.md does not document %s", e.Code)
		}
	}
}

// widened is a delegation whose packet was edited after cloning.
func (sc *scenario) widened(parent, task, child, cid, boundary, attempt string, edit func(*Packet)) Event {
	ev := sc.ev(delegate(parent, task, child, cid, boundary, attempt))
	edit(&ev.Delegated.Packet)
	return ev
}

// F-D4.5, DC3: at every delegation the Guard checks that the child's
// contract narrows its parent's in every dimension; a worker may call only
// the tools its contract grants.
func TestGuardPacketNarrows(t *testing.T) {
	sc := started(t, policy.Default())
	ev := Event{Type: TToolCallStarted, ToolCallStarted: &ToolCallStarted{Instance: "r/a", Call: "t1", Tool: "shell", Role: model.Worker}}
	wantCode(t, sc.try(ev), EWiden)
	sc.step(evidence("r/a", "r/a#1", cA, true))
	sc.step(verdict("r", "r/a", "a", "r/a#1", policy.Accept))
	sc.step(mode("r", Idle))
	sc.step(mode("r", Delegate))
	for name, edit := range map[string]func(*Packet){
		"drops no_network":       func(p *Packet) { p.Contract.Constraints.NoNetwork = false },
		"more tokens than r has": func(p *Packet) { p.Contract.Budget.MaxTokens = 30_000_000 },
		"later deadline":         func(p *Packet) { p.Deadline = base.Add(100 * time.Hour) },
		"no deadline":            func(p *Packet) { p.Deadline = time.Time{} },
		"writes the parent":      func(p *Packet) { p.Contract.Scope.Write = []string{"work/r"} },
		"longer timeout":         func(p *Packet) { p.Contract.TimeoutMs = scope.RootTimeoutMs + 1 },
	} {
		err := sc.try(sc.widened("r", "b", "r/b", cB.ID, "work/r/b", "r/b#1", edit))
		var v *Violation
		if !errors.As(err, &v) || (v.Code != EWiden && v.Code != EBudget && v.Code != EBoundaryOverlap) {
			t.Errorf("%s: %v", name, err)
		}
	}
	sc.step(sc.widened("r", "b", "r/b", cB.ID, "work/r/b", "r/b#1", func(p *Packet) {
		p.Contract.Capabilities.Allowed = []string{"read_file"}
		p.Contract.Constraints.ReadOnly = true
		p.Contract.Scope.Write = nil
	}))
	// A read-only child may not write even its own folder.
	sc.step(mode("r", Idle))
	sc.step(mode("r", Supervise))
	sc.step(mode("r/b", Build))
	wantCode(t, sc.try(Event{Type: TToolCallStarted, ToolCallStarted: &ToolCallStarted{Instance: "r/b", Call: "t2", Tool: "read_file", Role: model.Worker, Writes: []string{"work/r/b/x.md"}}}), EBoundaryWrite)
}

// DC6: a parent runs at most max_concurrent children at once.
func TestGuardConcurrency(t *testing.T) {
	sc := &scenario{t: t, s: New()}
	root := rootContract()
	root.Budget.MaxConcurrent = 1
	sc.step(Event{Type: TRunStarted, RunStarted: &RunStarted{RunID: "t", Policy: policy.Default(), Model: "script", Boundary: "work", Root: root}})
	sc.step(register(cA, FromDiscussion, Session))
	sc.step(register(cB, FromDiscussion, Session))
	sc.step(Event{Type: TPlanRecorded, PlanRecorded: &PlanRecorded{Instance: Session, Tasks: []PlanTask{
		{ID: "x", ContractID: cA.ID, Boundary: "work/x"}, {ID: "y", ContractID: cB.ID, Boundary: "work/y"}}}})
	sc.step(mode(Session, Delegate))
	sc.step(delegate(Session, "x", "x", cA.ID, "work/x", "x#1"))
	wantCode(t, sc.try(delegate(Session, "y", "y", cB.ID, "work/y", "y#1")), EConcurrency)
}

// Hard budgets (issue #3, DC6): a call's worst case is reserved before it
// starts, against the run's budget and every budget on the instance's path
// to the root; finishing settles the reservation to the real usage.
func TestGuardReservations(t *testing.T) {
	pol := policy.Default()
	pol.Budget.Tokens = 10_000
	sc := started(t, pol)
	sc.s.Inst["r/a"].Packet.Contract.Budget.MaxTokens = 5_000 // r/a's budget
	start := func(call string, n int64) Event {
		return Event{Type: TModelCallStarted, ModelCallStarted: &ModelCallStarted{Instance: "r/a", Call: call, Role: model.Worker, Reserve: n}}
	}
	sc.step(start("m1", 3_000))
	wantCode(t, sc.try(start("m2", 2_500)), EBudget) // r's 5,000 would be exceeded by reservations alone
	sc.step(Event{Type: TModelCallFinished, ModelCallFinished: &ModelCallFinished{Instance: "r/a", Call: "m1", Role: model.Worker, Model: "x", Usage: model.Usage{Input: 800, Output: 200}}})
	if sc.s.Reserved != 0 || sc.s.Inst["r"].TreeTokens != 1000 || sc.s.Inst["r/a"].TreeReserved != 0 {
		t.Fatalf("settle: reserved %d tree %d/%d", sc.s.Reserved, sc.s.Inst["r"].TreeTokens, sc.s.Inst["r/a"].TreeReserved)
	}
	sc.step(start("m2", 2_500)) // fits now that m1 settled at 1,000
	wantCode(t, sc.try(start("m3", 1_600)), EBudget)
	// A failed attempt releases what its open calls reserved.
	sc.step(Event{Type: TAttemptEnded, AttemptEnded: &AttemptEnded{Instance: "r/a", Attempt: "r/a#1", Status: AttemptFailed, Reason: "x"}})
	if sc.s.Reserved != 0 || sc.s.Inst["r"].TreeReserved != 0 || sc.s.Inst["r/a"].TreeReserved != 0 {
		t.Fatalf("reservations leaked: %d %d", sc.s.Reserved, sc.s.Inst["r"].TreeReserved)
	}
}

// DA-A4, DA-A2: stage moves follow the table — Meta may never pause — and
// running is entered only after a passed bootstrap review.
func TestGuardStages(t *testing.T) {
	sc := &scenario{t: t, s: New()}
	sc.step(Event{Type: TRunStarted, RunStarted: &RunStarted{RunID: "t", Policy: policy.Default(), Model: "script", Boundary: "work", Root: rootContract()}})
	move := func(from, to Stage, by string) Event {
		return Event{Type: TStageChanged, StageChanged: &StageChanged{From: from, To: to, By: by}}
	}
	wantCode(t, sc.try(move(StageSubmitted, StageRunning, "host")), EStage)
	sc.step(move(StageSubmitted, StageClarifying, "host"))
	sc.step(move(StageClarifying, StageBootstrap, "host"))
	wantCode(t, sc.try(move(StageBootstrap, StageRunning, "host")), EStage) // no review yet
	sc.step(Event{Type: TBootstrapReviewed, BootstrapReviewed: &BootstrapReviewed{Passed: true, By: "reviewer"}})
	sc.step(move(StageBootstrap, StageRunning, "host"))
	wantCode(t, sc.try(move(StageRunning, StagePaused, "meta")), EStage)
	wantCode(t, sc.try(move(StageRunning, StagePaused, "host")), EStage)
	sc.step(move(StageRunning, StagePaused, "user"))
	sc.step(move(StagePaused, StageRunning, "user"))
	sc.step(move(StageRunning, StageAwaitingUser, "meta"))
	wantCode(t, sc.try(move(StageAwaitingUser, StageRunning, "meta")), EStage) // Meta cannot answer itself
}

// DA-A2: a harness change reviewed by its own author counts as unreviewed.
func TestSelfReviewDoesNotCount(t *testing.T) {
	s := New()
	s.Apply(Event{Type: THarnessChanged, HarnessChanged: &HarnessChanged{Path: "done_criteria.yaml", Author: "meta", Large: true}})
	s.Apply(Event{Type: THarnessReviewed, HarnessReviewed: &HarnessReviewed{By: "meta", Author: "meta", Paths: []string{"done_criteria.yaml"}, Passed: true}})
	if _, open := s.Unreviewed["done_criteria.yaml"]; !open {
		t.Fatal("a self-review cleared the change")
	}
	s.Apply(Event{Type: THarnessReviewed, HarnessReviewed: &HarnessReviewed{By: "reviewer", Author: "meta", Paths: []string{"done_criteria.yaml"}, Passed: true}})
	if len(s.Unreviewed) != 0 {
		t.Fatal("an independent review did not clear the change")
	}
}
