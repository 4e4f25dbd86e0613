package harness

import (
	"errors"
	"strings"
	"testing"

	"github.com/fractal-harness/fractal/contract"
)

// DA-B1: done_criteria.yaml is a list of contract checks, read as strictly
// as a contract, with errors positioned in the file itself.
func TestParseCriteria(t *testing.T) {
	checks, err := ParseCriteria([]byte("---\n# the deliverable\n- kind: file_exists\n  path: brief.md\n- {kind: file_min_lines, path: brief.md, min: 40}\n- kind: contains\n  path: brief.md\n  text: |\n    ## Risks\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 3 || checks[1].Min != 40 || checks[2].Text != "## Risks\n" {
		t.Fatalf("checks = %+v", checks)
	}

	for _, tc := range []struct {
		name, src  string
		line, col  int
		msgContent string
	}{
		{"empty", "  \n", 1, 1, "empty"},
		{"mapping", "kind: file_exists\npath: a.md\n", 1, 1, "must be a list of checks"},
		{"unknown key", "- kind: file_exists\n  path: a.md\n  mn: 3\n", 3, 3, `unknown key "mn"`},
		{"min zero", "- kind: file_min_lines\n  path: a.md\n  min: 0\n", 3, 8, "min must be at least 1"},
		{"outside", "- kind: file_exists\n  path: ../secret.md\n", 2, 9, `".."`},
		{"two documents", "- kind: file_exists\n  path: a.md\n---\n- kind: file_exists\n  path: b.md\n", 3, 1, "more than one YAML document"},
		{"bad yaml", "- kind: file_exists\n  path: [a\n", 2, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCriteria([]byte(tc.src))
			var pe *contract.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want a *contract.ParseError", err, err)
			}
			if pe.Name != DoneCriteria || !strings.Contains(pe.Msg, tc.msgContent) {
				t.Errorf("err = %v", err)
			}
			if tc.name != "bad yaml" && (pe.Line != tc.line || pe.Col != tc.col) {
				t.Errorf("position %d:%d, want %d:%d (%v)", pe.Line, pe.Col, tc.line, tc.col, err)
			}
		})
	}
}

// DA-B1: a done criterion that can never fail, or never pass, is caught.
func TestCriteriaThatCannotPassOrFail(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		code string
	}{
		{"matches everything", `{kind: matches, path: a.md, text: '.*'}`, CodeVacuous},
		{"matches an empty start", `{kind: matches, path: a.md, text: '^'}`, CodeVacuous},
		{"matches an empty end", `{kind: matches, path: a.md, text: '(?m)x*$'}`, CodeVacuous},
		{"empty alternative", `{kind: matches, path: a.md, text: 'Revenue|'}`, CodeVacuous},
		{"optional group", `{kind: matches, path: a.md, text: '(Revenue)?'}`, CodeVacuous},
		{"whitespace text", `{kind: contains, path: a.md, text: "  "}`, CodeVacuous},
		{"worker notes", `{kind: file_exists, path: progress.md}`, CodeVacuous},
		{"empty class", `{kind: matches, path: a.md, text: '[^\x00-\x{10FFFF}]'}`, CodeImpossible},
		{"text after the end", `{kind: matches, path: a.md, text: '$x'}`, CodeImpossible},
		{"text before the start", `{kind: matches, path: a.md, text: 'x\A'}`, CodeImpossible},
		{"absurd lines", `{kind: file_min_lines, path: a.md, min: 5000000}`, CodeImpossible},
		{"absurd bytes", `{kind: file_min_bytes, path: a.md, min: 9000000000}`, CodeImpossible},
		{"run-relative path", `{kind: file_exists, path: work/brief/a.md}`, CodeCriteriaPath},
		{"inputs path", `{kind: file_exists, path: inputs/sales.csv}`, CodeCriteriaPath},
		{"rubric", `{kind: rubric, text: The brief is persuasive.}`, CodeCriteriaKind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := criteriaProblems([]byte("- " + tc.yaml + "\n"))
			if len(ps) != 1 || ps[0].Code != tc.code {
				t.Fatalf("got %v, want one %s", ps, tc.code)
			}
		})
	}
	// A file and a folder at one path cannot both exist.
	ps := criteriaProblems([]byte("- {kind: file_exists, path: charts}\n- {kind: dir_min_files, path: charts, min: 2}\n"))
	if len(ps) != 1 || ps[0].Code != CodeImpossible {
		t.Fatalf("file and folder: %v", ps)
	}
	ps = criteriaProblems([]byte("- {kind: file_exists, path: report}\n- {kind: file_exists, path: report/a.md}\n"))
	if len(ps) != 1 || ps[0].Code != CodeImpossible || !strings.Contains(ps[0].Msg, "checks 1 and 2") {
		t.Fatalf("file and parent: %v", ps)
	}
	// The invalid ones are refused by contract validation already.
	for _, y := range []string{`{kind: file_min_lines, path: a.md, min: 0}`, `{kind: contains, path: a.md, text: ""}`, `{kind: file_exists, path: /etc/passwd}`} {
		if ps := criteriaProblems([]byte("- " + y + "\n")); len(ps) != 1 || ps[0].Code != CodeCriteria {
			t.Errorf("%s: %v", y, ps)
		}
	}
}

// DA-B1: ordinary checks, including anchored and word-bounded patterns
// that can fail, are not refused.
func TestCriteriaThatCanPassAndFail(t *testing.T) {
	src := `- {kind: matches, path: a.md, text: '(?m)^Revenue: \$[0-9,]+$'}
- {kind: matches, path: a.md, text: '^$'}
- {kind: matches, path: a.md, text: '\b'}
- {kind: matches, path: a.md, text: 'x*y'}
- {kind: matches, path: a.md, text: '(?m)$\n^x'}
- {kind: contains, path: a.md, text: "## Risks"}
- {kind: dir_min_files, path: charts, min: 3, glob: "*.png"}
- {kind: file_exists, path: charts/a.png}
- {kind: dir_min_files, path: ., min: 1}
- {kind: file_min_lines, path: a.md, min: 40}
- {kind: yaml_field_present, path: meta.yaml, field: report.owner}
- {kind: file_exists, path: output/progress.md}
`
	if ps := criteriaProblems([]byte(src)); len(ps) != 0 {
		t.Fatalf("%v", ps)
	}
}
