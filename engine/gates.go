package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/fractal-harness/fractal/check"
	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/gate"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/tool"
)

const toolSubmitVerdict = "submit_verdict"

var submitVerdictSpec = model.ToolSpec{
	Name: toolSubmitVerdict,
	Description: "Submit your one verdict on the work: verdict pass, needs_revision or unsafe; every issue with its severity (critical, major, minor), " +
		"a location that names a file (and line or section), a description, and a category (fabrication, missing, format, quality, safety, other); and a summary. " +
		"Fabricated content is critical.",
	Schema: json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","needs_revision","unsafe"]},` +
		`"issues":{"type":"array","items":{"type":"object","properties":{"severity":{"type":"string"},"location":{"type":"string"},"description":{"type":"string"},"category":{"type":"string"}},"required":["severity","location","description","category"]}},` +
		`"summary":{"type":"string"}},"required":["verdict","issues","summary"]}`),
}

// submission is what the submitting side says of its work.
type submission struct {
	summary   string
	accounted map[int]string // SOP step (from 1) → where it was done
}

// gates runs DC5's gates on a submission, in order: the host's rule
// checks, the Reviewer's quality review (only for work whose checks pass;
// it fails closed), the delivery gate; and builds the structured result
// the parent receives.
func (e *Engine) gates(ctx context.Context, id string, c contract.Contract, ev contract.Evidence, sub submission) state.Gates {
	var (
		in         state.Instance
		violations int
	)
	e.view(func(s *state.State) { in = *s.Inst[id] })
	e.progMu.Lock()
	violations = e.violations[id]
	e.progMu.Unlock()
	var g state.Gates
	if violations > 0 {
		g.Rules = append(g.Rules, fmt.Sprintf("the attempt tried %d time(s) to reach outside its folder or contract", violations))
	}
	delivered := 0
	for _, a := range ev.Artifacts {
		if a != ProgressFile {
			delivered++
		}
	}
	if delivered == 0 {
		g.Rules = append(g.Rules, "nothing was delivered: the folder holds no file")
	}
	// Anti-cheating (DA-B1): a deliverable that is an input copied, or a
	// template with its placeholders left in, is not work.
	inputs := e.inputTexts()
	for _, a := range ev.Artifacts {
		if a == ProgressFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(e.dir, filepath.FromSlash(in.Boundary), filepath.FromSlash(a)))
		if err != nil || len(b) > 1<<20 || !utf8.Valid(b) {
			continue
		}
		for _, p := range gate.Suspicious(string(b), inputs) {
			g.Rules = append(g.Rules, a+": "+p.Message)
		}
	}
	sat := contract.Sat(c, ev)
	switch {
	case !sat:
		g.Review = "not run: the checks do not pass"
	case len(g.Rules) > 0:
		g.Review = "not run: the rule checks failed"
	default:
		out := e.qualityReview(ctx, id, c, in.Boundary, ev.Artifacts)
		if out.Accepted {
			g.Review = state.ReviewPassed
		} else {
			g.Review = out.Reason
		}
	}
	res := gate.Result{Summary: strings.TrimSpace(sub.summary), Artifacts: ev.Artifacts}
	if res.Summary == "" {
		res.Summary = "no summary was given"
	}
	failing := describeFailures(c, ev)
	switch {
	case sat && len(g.Rules) == 0 && g.Review == state.ReviewPassed:
		res.Status = gate.StatusCompleted
	case len(contract.Failed(ev)) < len(c.Checks) && len(ev.Artifacts) > 0:
		res.Status = gate.StatusPartial
		res.ResumeHint = strings.TrimSpace(failing + " " + strings.Join(g.Rules, "; ") + " " + reviewHint(g.Review))
	default:
		res.Status = gate.StatusFailed
	}
	g.Result = res
	for _, p := range gate.DeliveryGate(in.Packet.Contract.SOP, sub.accounted, res) {
		g.Delivery = append(g.Delivery, p.Message)
	}
	return g
}

func reviewHint(r string) string {
	if r == state.ReviewPassed || strings.HasPrefix(r, "not run") {
		return ""
	}
	return "Review: " + r
}

// qualityReview is the Reviewer's one-shot review of a submission (DC5,
// DA-B1): it sees the contract, its checks and the files — never anyone's
// opinion of them — and must submit exactly one well-formed verdict. An
// error, a timeout, no verdict or a malformed one is not a pass.
func (e *Engine) qualityReview(ctx context.Context, id string, c contract.Contract, boundary string, artifacts []string) gate.Outcome {
	var b strings.Builder
	fmt.Fprintf(&b, "Contract intent:\n%s\n\nIts checks (paths relative to %s):\n", c.Intent, boundary)
	for i, ch := range c.Checks {
		fmt.Fprintf(&b, "%d. %s\n", i+1, ch.Describe())
	}
	var files []string
	for _, a := range artifacts {
		files = append(files, boundary+"/"+a)
	}
	fmt.Fprintf(&b, "\nThe work: %s.\nInputs: %s.\nRead what you need, check every figure against its source, then call submit_verdict once.", strings.Join(files, ", "), e.inputList())
	env := tool.Env{Instance: id, RunRoot: e.dir, Boundary: boundary, Readable: []string{InputsDir}}
	var attemptNo int
	e.view(func(s *state.State) {
		if a := s.CurrentAttempt(id); a != nil {
			attemptNo = a.Number
		}
	})
	known := append(append([]string{}, files...), artifacts...)
	ss := e.newSession(id, model.Reviewer, reviewerSystem, b.String(), []model.ToolSpec{submitVerdictSpec}, readOnlyTools, env, c.Intent, attemptNo)
	var verdict *gate.Verdict
	err := ss.loop(ctx, map[string]hostTool{toolSubmitVerdict: func(call model.ToolCall) (bool, error) {
		v, err := gate.ParseVerdict(call.Args, known)
		if err != nil {
			return false, tool.Errorf("E-ARGS", "%v", err)
		}
		verdict = &v
		return true, nil
	}})
	return gate.ReviewOutcome(verdict, err)
}

// verdictOf is the parent's verdict on a submitted attempt: accept exactly
// when v(c,e) accepts and every gate passed.
func verdictOf(c contract.Contract, a *state.Attempt) policy.Verdict {
	if policy.V(c, *a.Evidence) == policy.Accept && a.Gates.Passed() {
		return policy.Accept
	}
	return policy.Reject
}

// inputTexts reads the run's text inputs, for the copy check.
func (e *Engine) inputTexts() map[string]string {
	out := map[string]string{}
	dir := filepath.Join(e.dir, InputsDir)
	for _, rel := range check.Artifacts(dir) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err == nil && len(b) < 1<<20 && utf8.Valid(b) {
			out[InputsDir+"/"+rel] = string(b)
		}
	}
	return out
}
