package gate_test

import (
	"encoding/json"
	"fmt"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/gate"
)

// The worker quotes a figure its report does not contain.
func ExampleCheckSelfAssessment() {
	c := contract.New("a sales brief", []contract.Check{{Kind: contract.FileExists, Path: "out/brief.md"}})
	files := map[string]string{"out/brief.md": "# Brief\nRevenue grew 12% in Q3.\n"}
	items := []gate.SelfItem{{
		Kind: gate.KindCheck, Index: 1, Pass: true,
		Quote:  "Revenue grew 15% in Q3.",
		Source: gate.Source{File: "out/brief.md", Line: 2, Origin: "inputs/sales.xlsx"},
	}}
	for _, p := range gate.CheckSelfAssessment(c, nil, items, files) {
		fmt.Println(p)
	}
	// Output:
	// E-SELF-QUOTE-ABSENT check 1: the quote "Revenue grew 15% in Q3." is not in out/brief.md (compared ignoring white space and quote style, but case-sensitive); copy the exact words from the file, or fix the file first
}

// A reviewer that says "pass" but reports a fabrication does not pass.
func ExampleReviewOutcome() {
	raw := json.RawMessage(`{"verdict":"pass","summary":"reads well","issues":[
	  {"severity":"minor","category":"fabrication","location":"out/brief.md:2","description":"the 12% is in no input"}]}`)
	v, err := gate.ParseVerdict(raw, []string{"out/brief.md"})
	fmt.Println(gate.ReviewOutcome(&v, err).Reason)
	// Output:
	// not accepted: the reviewer said pass but reported a critical issue: reads well
	// - [critical, fabrication] out/brief.md:2: the 12% is in no input
}
