package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/discuss"
	"github.com/fractal-harness/fractal/gate"
	"github.com/fractal-harness/fractal/harness"
	"github.com/fractal-harness/fractal/intake"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/tool"
)

// errNeedsUser stops a run whose harness the Reviewer would not pass in
// interactive mode: the person decides.
var errNeedsUser = errors.New("the task harness needs the person's decision")

// intake is the way from a person's words to running (F-D3.5, DA-B2,
// DA-B3): clarifying — inventory the inputs, discuss the task, agree on
// contracts and six sourced constraints — then bootstrapping — Meta writes
// the task harness through audited writes, the host prechecks it, the
// Reviewer reviews it — and only then running. Every step is an event. The
// model calls are the session's, so they count against the run's budget.
func (e *Engine) intake(ctx context.Context) error {
	var (
		cur     state.Stage
		planned bool
		pol     policy.Policy
	)
	e.view(func(s *state.State) {
		cur, pol = s.Stage, s.Policy
		planned = s.Inst[state.Session].Plan != nil
	})
	raw, err := os.ReadFile(filepath.Join(e.dir, InputsDir, "task.md"))
	if err != nil {
		return fmt.Errorf("engine: the task text: %w", err)
	}
	cfg := intake.Config{
		Model: model.Func(func(ctx context.Context, req model.Request) (model.Response, error) {
			return e.callModel(ctx, state.Session, req.Role, req)
		}),
		Dir: e.dir, Mode: pol.Mode, Wait: pol.AnswerWait, In: e.cfg.In, Out: e.cfg.Out, Clock: e.cfg.Clock,
		Record: func(st intake.Step) error {
			// Recorded and durable before its effect (a harness write).
			return e.commit(ctx, state.Event{Type: state.TIntakeStep, IntakeStep: &state.IntakeStep{Kind: st.Kind, Detail: st.Detail, Path: st.Path,
				SHA256: st.SHA256, Size: st.Size, Author: st.Author, Reason: st.Reason, Passed: st.Passed, Problems: st.Problems}})
		},
	}
	if pol.Mode == policy.Interactive && (e.cfg.In == nil || e.cfg.Out == nil) {
		return errors.New("engine: interactive mode needs a terminal")
	}
	if cur == state.StageSubmitted {
		if err := e.setStage(ctx, state.StageClarifying, "host", "the discussion of the task starts"); err != nil {
			return err
		}
		cur = state.StageClarifying
	}
	var out discuss.Outcome
	if !planned {
		if out, err = intake.Discuss(ctx, cfg, string(raw)); err != nil {
			return fmt.Errorf("the discussion did not agree on the work: %w", err)
		}
		var tops []TopContract
		for _, p := range out.Contracts {
			tops = append(tops, TopContract{Name: p.Name, Contract: p.Contract()})
		}
		evs := discussed(tops)
		var cs state.Constraints
		if cs.Outcome, err = json.Marshal(out); err != nil {
			return err
		}
		for _, c := range out.Constraints {
			cs.List = append(cs.List, state.Constraint{ID: c.ID, Kind: string(c.Kind), Text: c.Text, Quote: c.Quote, Source: c.Source})
		}
		evs = append([]state.Event{{Type: state.TConstraints, Constraints: &cs}}, evs...)
		for _, ev := range evs {
			if err := e.note(ev); err != nil {
				return fmt.Errorf("engine: record the discussion: %w", err)
			}
		}
		if err := e.flush(ctx); err != nil {
			return err
		}
		for _, t := range tops {
			if err := e.writeContract(t.Contract); err != nil {
				return err
			}
		}
	} else {
		out = e.outcome()
	}
	if cur == state.StageClarifying {
		if err := e.setStage(ctx, state.StageBootstrap, "host", "the contracts are agreed"); err != nil {
			return err
		}
	}
	res, err := intake.Bootstrap(ctx, cfg, out)
	if err != nil {
		return fmt.Errorf("the task harness could not be written: %w", err)
	}
	if err := e.commit(ctx, state.Event{Type: state.TBootstrapReviewed, BootstrapReviewed: &state.BootstrapReviewed{Passed: res.Passed, By: "reviewer",
		Note: strings.TrimSpace(res.Review + " " + strings.Join(res.Problems, "; "))}}); err != nil {
		return err
	}
	if !res.Passed {
		why := fmt.Sprintf("the plan of work did not pass its review after %d round(s): %s", res.Rounds, strings.Join(append([]string{res.Review}, res.Problems...), "; "))
		if pol.Mode == policy.Interactive {
			e.raise([]string{why + ". Change the task and start again, or stop?"})
			return errNeedsUser
		}
		return &failedRun{reason: why}
	}
	return e.setStage(ctx, state.StageRunning, "host", "the Reviewer passed the task harness")
}

// failedRun ends a run that cannot go on, with a plain reason.
type failedRun struct{ reason string }

func (f *failedRun) Error() string { return f.reason }

// outcome is the discussion's outcome as the journal recorded it, for a run
// resumed after the discussion.
func (e *Engine) outcome() discuss.Outcome {
	var out discuss.Outcome
	var raw json.RawMessage
	e.view(func(s *state.State) { raw = s.Outcome })
	if len(raw) > 0 && json.Unmarshal(raw, &out) == nil {
		return out
	}
	e.view(func(s *state.State) {
		sess := s.Inst[state.Session]
		for _, pt := range sess.Plan.Tasks {
			c := s.Contract[pt.ContractID]
			out.Contracts = append(out.Contracts, discuss.Proposed{Name: pt.ID, Intent: c.Intent, Checks: append([]contract.Check(nil), c.Checks...)})
		}
		for _, c := range s.Constraints {
			out.Constraints = append(out.Constraints, harness.Constraint{ID: c.ID, Kind: harness.Kind(c.Kind), Text: c.Text, Quote: c.Quote, Source: c.Source})
		}
	})
	return out
}

// harnessPrompt is the task part of a worker's instructions, when the run
// has a task harness (DA-B3).
func (e *Engine) harnessPrompt() string {
	b, err := os.ReadFile(filepath.Join(e.dir, harness.Dir, harness.WorkerPrompt))
	if err != nil {
		return ""
	}
	return "\nHow this task is done (from harness/worker_prompt_taskpart.md; read harness/methodology.md and the SOP of your step too):\n" + string(b)
}

// hasHarness reports whether the run has a task harness.
func (e *Engine) hasHarness() bool {
	_, err := os.Stat(filepath.Join(e.dir, harness.Dir, harness.Methodology))
	return err == nil
}

// revisionReview is the harness revision review (DA-A2, DA-A5): a large
// change made while running goes to the Reviewer — never its author —
// with the person's words and the whole harness, and one verdict. It
// returns a note for the worker when the review did not pass.
func (e *Engine) revisionReview(ctx context.Context, id string, changes []harness.AuditRecord) string {
	var paths []string
	author := ""
	for _, c := range changes {
		if c.Large {
			paths = append(paths, c.Path)
			author = c.Author
		}
	}
	if len(paths) == 0 {
		return ""
	}
	raw, _ := os.ReadFile(filepath.Join(e.dir, InputsDir, "task.md"))
	clar := map[string]string{}
	ans, _ := filepath.Glob(filepath.Join(e.dir, InputsDir, "clarify", "*_answers.md"))
	for _, p := range ans {
		if b, err := os.ReadFile(p); err == nil {
			clar[InputsDir+"/clarify/"+filepath.Base(p)] = string(b)
		}
	}
	files := map[string]string{}
	root := filepath.Join(e.dir, harness.Dir)
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			if b, err := os.ReadFile(p); err == nil {
				files[filepath.ToSlash(rel)] = string(b)
			}
		}
		return nil
	})
	out := e.outcome()
	packet := harness.ReviewPacket(string(raw), clar, out.Constraints, files) + "\nThe harness was revised while the work was under way (" + strings.Join(paths, ", ") + "). Call submit_verdict once."
	var known []string
	for f := range files {
		known = append(known, f, harness.Dir+"/"+f)
	}
	ss := e.newSession(id, model.Reviewer, reviewerSystem, packet, []model.ToolSpec{submitVerdictSpec}, mustRegistry(), toolEnv(e, id), "harness revision review", 1)
	var verdict *gate.Verdict
	err := ss.loop(ctx, map[string]hostTool{toolSubmitVerdict: func(call model.ToolCall) (bool, error) {
		v, err := gate.ParseVerdict(call.Args, known)
		if err != nil {
			return false, tool.Errorf("E-ARGS", "%v", err)
		}
		verdict = &v
		return true, nil
	}})
	res := gate.ReviewOutcome(verdict, err)
	_ = e.note(state.Event{Type: state.THarnessReviewed, HarnessReviewed: &state.HarnessReviewed{By: "reviewer", Author: author, Paths: paths, Passed: res.Accepted, Note: res.Reason}})
	if res.Accepted {
		return ""
	}
	e.addNote(id, "the harness revision was not passed: "+res.Reason)
	return "(The revised method has not passed its review yet: " + res.Reason + ")"
}

func toolEnv(e *Engine, id string) tool.Env {
	return tool.Env{Instance: id, RunRoot: e.dir, Boundary: WorkDir, Readable: []string{InputsDir}}
}
