package contract

import (
	"os"
	"strings"
	"testing"
)

// F-D1, F-T4: the user documentation's example is a valid contract whose
// id is right, and the error it shows for an edited file is the one Parse
// gives, so the page cannot drift from the code.
func TestDocsExample(t *testing.T) {
	page, err := os.ReadFile("../docs/contracts.md")
	if err != nil {
		t.Skipf("docs not available: %v", err)
	}
	doc := string(page)
	start := strings.Index(doc, "```yaml\n")
	if start < 0 {
		t.Fatal("no YAML example in docs/contracts.md")
	}
	example := doc[start+len("```yaml\n"):]
	example = example[:strings.Index(example, "```")]
	if _, err := Parse([]byte(example), "report.contract.yaml"); err != nil {
		t.Fatalf("the documented example does not parse: %v", err)
	}
	_, err = Parse([]byte(strings.Replace(example, "min: 40", "min: 4", 1)), "report.contract.yaml")
	if err == nil {
		t.Fatal("the edited example was accepted")
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if !strings.Contains(flat(doc), flat(err.Error())) {
		t.Fatalf("the page does not show the real error for an edited file:\n%s", err)
	}
}
