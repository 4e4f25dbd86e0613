package intake

import (
	"fmt"
	"strings"

	"github.com/fractal-harness/fractal/discuss"
	"github.com/fractal-harness/fractal/harness"
)

// kindWords names each kind of constraint the way the person thinks of
// it.
var kindWords = map[harness.Kind]string{
	harness.Audience:    "Who it is for",
	harness.Form:        "Form",
	harness.TimeWindow:  "Period covered",
	harness.MustInclude: "Must include",
	harness.Exclude:     "Leave out",
	harness.Quality:     "Quality",
}

// proposalSummary is what the person confirms in interactive mode: what
// will be delivered, where, what will be checked, and what the work keeps
// to — in plain words, without ids, codes or file formats of the
// framework (DA-B4).
func proposalSummary(o discuss.Outcome) string {
	var b strings.Builder
	b.WriteString("Here is what I understood. Please check it before the work starts.\n\nWhat will be delivered:\n")
	for i, p := range o.Contracts {
		fmt.Fprintf(&b, "%d. %s\n   In the folder work/%s/. It will be checked that:\n", i+1, oneLine(p.Intent), p.Name)
		for _, ch := range p.Checks {
			fmt.Fprintf(&b, "   - %s\n", ch.Describe())
		}
	}
	if len(o.Constraints) > 0 {
		b.WriteString("\nWhat the work will keep to:\n")
		for _, k := range harness.Kinds {
			for _, c := range o.Constraints {
				if c.Kind != k {
					continue
				}
				text := oneLine(c.Text)
				if c.IsNone() {
					text = "nothing particular"
				}
				fmt.Fprintf(&b, "- %s: %s\n", kindWords[k], text)
			}
		}
	}
	return b.String()
}

// proposalDetail is the journal line of a valid proposal: each contract's
// name, id and intent, and the constraints by id and kind.
func proposalDetail(o discuss.Outcome) string {
	var parts []string
	for _, p := range o.Contracts {
		parts = append(parts, fmt.Sprintf("%s (%s): %s", p.Name, p.Contract().ID, oneLine(p.Intent)))
	}
	var cs []string
	for _, c := range o.Constraints {
		cs = append(cs, c.ID+" "+string(c.Kind))
	}
	s := fmt.Sprintf("%d contract(s): %s", len(o.Contracts), strings.Join(parts, "; "))
	if len(cs) > 0 {
		s += "; constraints " + strings.Join(cs, ", ")
	}
	if o.FastPath {
		s += "; fast path (no questions)"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
