package harness_test

import (
	"fmt"

	"github.com/fractal-harness/fractal/harness"
)

// A constraint must quote the user's words; one drawn from "what boards
// usually want" has nothing to quote and is refused.
func ExampleCheckSources() {
	sources := map[string]string{
		harness.TaskSource: "Write a brief for the board of directors, at most 10 pages.",
	}
	cs := []harness.Constraint{
		{ID: "C1", Kind: harness.Audience, Text: "For the board.", Quote: "for the board of directors", Source: harness.TaskSource},
		{ID: "C2", Kind: harness.Quality, Text: "Use IFRS terms.", Quote: "boards expect IFRS terms", Source: harness.TaskSource},
	}
	for _, p := range harness.CheckSources(cs, sources) {
		if p.Code == harness.CodeUnsourced {
			fmt.Println(p)
		}
	}
	// Output:
	// E-CONSTRAINT-UNSOURCED: C2: the quote "boards expect IFRS terms" is not in inputs/task.md: copy the user's words exactly
}

// Only the audited tool writes under harness/.
func ExampleGuard() {
	fmt.Println(harness.Guard("work/brief/notes.md"))
	fmt.Println(harness.Guard("harness/done_criteria.yaml"))
	// Output:
	// <nil>
	// E-HARNESS-DIRECT: "harness/done_criteria.yaml" is in the task harness, which is changed only through the audited harness_write tool (Meta's); ask Meta to change it
}
