package engine

import (
	"fmt"
	"io"
	"strings"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/state"
)

// progress turns notable events into one plain line each for a person
// watching the run. It is called with the engine's lock held.
type progress struct{ w io.Writer }

func (p *progress) event(s *state.State, ev state.Event) {
	if p == nil || p.w == nil {
		return
	}
	var line string
	switch ev.Type {
	case state.TPlanRecorded:
		x := ev.PlanRecorded
		if x.Instance == state.Session {
			return
		}
		var ids []string
		for _, t := range x.Tasks {
			ids = append(ids, t.ID)
		}
		line = fmt.Sprintf("%-22s planned %d parts: %s", x.Instance, len(x.Tasks), strings.Join(ids, ", "))
	case state.TDelegated:
		x := ev.Delegated
		a := s.Attempt[x.Attempt]
		line = fmt.Sprintf("%-22s started (attempt %d): %s", x.Child, a.Number, firstLine(s.Contract[x.Contract].Intent))
	case state.TEvidenceSubmitted:
		x := ev.EvidenceSubmitted
		n := len(x.Evidence.Results) - len(contract.Failed(x.Evidence))
		line = fmt.Sprintf("%-22s submitted: %d of %d checks pass", x.Instance, n, len(x.Evidence.Results))
	case state.TAttemptEnded:
		x := ev.AttemptEnded
		line = fmt.Sprintf("%-22s attempt %s: %s", x.Instance, x.Status, x.Reason)
	case state.TVerdict:
		x := ev.Verdict
		if x.Verdict == policy.Accept {
			line = fmt.Sprintf("%-22s accepted by %s", x.Child, x.By)
		} else {
			a := s.Attempt[x.Attempt]
			line = fmt.Sprintf("%-22s rejected by %s: %s", x.Child, x.By, describeFailures(s.Contract[s.Inst[x.Child].Contract], *a.Evidence))
		}
	case state.TDecision:
		x := ev.Decision
		line = fmt.Sprintf("%-22s decides for %s: %s", x.By, x.Task, x.Action)
	case state.TRefused:
		x := ev.Refused
		line = fmt.Sprintf("%-22s refused %s: %s: %s", x.Instance, x.Proposed, x.Code, x.Detail)
	case state.TRunFinished:
		line = fmt.Sprintf("%-22s run %s", state.Session, ev.RunFinished.Status)
	default:
		return
	}
	fmt.Fprintf(p.w, "  %s  %s\n", ev.Time.Local().Format("15:04:05"), line)
}
