package gate

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Status is how a piece of work ended, in a structured result (DC5).
type Status string

// The statuses.
const (
	StatusCompleted Status = "completed"  // done; artifacts name what was made
	StatusPartial   Status = "partial"    // some of it done; the resume hint says where to pick up
	StatusBlocked   Status = "blocked"    // cannot go on without something outside its reach
	StatusNeedsAuth Status = "needs_auth" // needs a permission or credential only a person can give
	StatusNeedsHelp Status = "needs_help" // needs a decision or a wider contract (DC4)
	StatusFailed    Status = "failed"     // tried and could not do it
	StatusTimeout   Status = "timeout"    // ran out of time
)

var statuses = []Status{StatusCompleted, StatusPartial, StatusBlocked, StatusNeedsAuth, StatusNeedsHelp, StatusFailed, StatusTimeout}

// resumable are the statuses after which the work is picked up again, so
// the result must say where.
var resumable = []Status{StatusPartial, StatusBlocked, StatusTimeout}

// Result is the structured return of a piece of work — never raw text
// (DC5).
type Result struct {
	Status     Status   `json:"status"`
	Summary    string   `json:"summary"`
	Artifacts  []string `json:"artifacts,omitempty"`   // run-relative paths of what was made
	ResumeHint string   `json:"resume_hint,omitempty"` // where to pick up again
}

// Validate says what is wrong with r, every fault at once: an unknown
// status, an empty summary, a completed result with no artifacts, an
// artifact path that is empty, absolute, leaves the run (".."), or repeats,
// and a partial, blocked or timed-out result with no resume hint.
func (r Result) Validate() error {
	var errs []error
	for _, s := range r.faults() {
		errs = append(errs, errors.New(s))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("gate: result: %w", errors.Join(errs...))
}

func (r Result) faults() []string {
	var out []string
	if !slices.Contains(statuses, r.Status) {
		out = append(out, fmt.Sprintf("status %q is not one of completed, partial, blocked, needs_auth, needs_help, failed, timeout", r.Status))
	}
	if strings.TrimSpace(r.Summary) == "" {
		out = append(out, "the summary is empty; say in a few sentences what was done")
	}
	if r.Status == StatusCompleted && len(r.Artifacts) == 0 {
		out = append(out, "a completed result lists no artifacts; name the files you made")
	}
	seen := map[string]bool{}
	for i, a := range r.Artifacts {
		c := cleanPath(a)
		switch {
		case c == "":
			out = append(out, fmt.Sprintf("artifact %d is empty", i+1))
		case path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../"):
			out = append(out, fmt.Sprintf("artifact %q is not a path inside the run; give it relative to the run folder", a))
		case seen[c]:
			out = append(out, fmt.Sprintf("artifact %q is listed twice", a))
		}
		seen[c] = true
	}
	if slices.Contains(resumable, r.Status) && strings.TrimSpace(r.ResumeHint) == "" {
		out = append(out, fmt.Sprintf("a %s result has no resume_hint; say where the next session should pick up", r.Status))
	}
	return out
}

// DeliveryGate is the gate between a finished piece of work and its
// delivery (DC5): every step of the SOP is accounted for, and the result is
// well formed. sop holds the steps in order; accounted maps a step's
// 1-based number — the numbering the model sees — to where the step was
// done (a file and section, or, for a step not done, why). A nil result
// means the gate passes.
func DeliveryGate(sop []string, accounted map[int]string, result Result) []Problem {
	var out []Problem
	for i, step := range sop {
		if strings.TrimSpace(accounted[i+1]) == "" {
			out = append(out, Problem{Item: fmt.Sprintf("step %d", i+1), Code: ESOPMissing, Message: fmt.Sprintf(
				"SOP step %d (%s) is not accounted for; say where it was done (file and section), or why it was not", i+1, clip(step, 60))})
		}
	}
	var extra []int
	for n := range accounted {
		if n < 1 || n > len(sop) {
			extra = append(extra, n)
		}
	}
	slices.Sort(extra)
	for _, n := range extra {
		out = append(out, Problem{Item: fmt.Sprintf("step %d", n), Code: ESOPUnknown, Message: fmt.Sprintf(
			"there is no SOP step %d: the steps are numbered 1 to %d", n, len(sop))})
	}
	for _, f := range result.faults() {
		out = append(out, Problem{Item: "result", Code: EResultInvalid, Message: f})
	}
	return out
}
