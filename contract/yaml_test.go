package contract

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const example = `# The quarterly report, as agreed with the user.
intent: |
  Write the Q3 report for the board: revenue, risks, next steps.
checks:
  - kind: file_exists
    path: report.md
  - kind: file_min_lines
    path: report.md
    min: 40
  - kind: file_min_bytes
    path: data/figures.csv
    min: 200
  - kind: yaml_field_present
    path: meta.yaml
    field: report.owner
  - kind: dir_min_files
    path: charts
    min: 3
    glob: "*.png"
  - kind: script
    path: tools/verify.py
    interpreter: python3
    args: [--strict, report.md]
    timeout_sec: 120
  - kind: contains
    path: report.md
    text: "## Risks"
  - kind: matches
    path: report.md
    text: '(?m)^Revenue: \$[0-9,]+$'
  - kind: rubric
    text: Every risk names an owner and a date.
    note: graded by the reviewer
`

// F-D1: a contract file without an id gets its content address; with the
// right id it reads the same; Marshal writes it back readably.
func TestParseExample(t *testing.T) {
	c, err := Parse([]byte(example), "report.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Checks) != 9 || c.Checks[5].Args[1] != "report.md" || c.Checks[7].Text != `(?m)^Revenue: \$[0-9,]+$` {
		t.Fatalf("unexpected contract: %#v", c)
	}
	if c.Intent != "Write the Q3 report for the board: revenue, risks, next steps.\n" {
		t.Fatalf("intent = %q", c.Intent)
	}
	if !c.IDValid() {
		t.Fatal("Parse returned an id that is not the content address")
	}
	withID := "id: " + c.ID + "\n" + example
	c2, err := Parse([]byte(withID), "report.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, c2) {
		t.Fatal("the same contract with its id reads differently")
	}
	out, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "id: "+c.ID+"\nintent: |\n  Write the Q3 report") {
		t.Errorf("Marshal output does not start with the id and a readable intent:\n%s", out)
	}
	if strings.Contains(string(out), "min: 0") || strings.Contains(string(out), "glob: \"\"") {
		t.Errorf("Marshal wrote unset fields:\n%s", out)
	}
	back, err := Parse(out, "out.yaml")
	if err != nil || !reflect.DeepEqual(back, c) {
		t.Fatalf("Marshal output does not read back: %v\n%s", err, out)
	}
}

// F-T4: editing a contract file in place (here, lowering a bound) while
// keeping its id is caught: the file now describes a different contract.
func TestParseEditedFileIsRefused(t *testing.T) {
	c, err := Parse([]byte(example), "report.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace("id: "+c.ID+"\n"+example, "min: 40", "min: 4", 1)
	_, err = Parse([]byte(edited), "report.yaml")
	if err == nil {
		t.Fatal("an edited contract with its old id was accepted")
	}
	if !strings.HasPrefix(err.Error(), "report.yaml:1:5: the id "+c.ID+" does not match the content") {
		t.Fatalf("error = %q", err)
	}
	if !strings.Contains(err.Error(), "a changed requirement is a new contract") {
		t.Fatalf("error does not explain immutability: %q", err)
	}
}

// F-D1: strict decoding. Every error reads name:LINE:COL: message, on one
// line, and points at the offending key or value.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		at        string // "LINE:COL"
		want      string
	}{
		{"unknown top key", "intent: x\nchekcs: []\n", "2:1", `unknown key "chekcs"`},
		{"unknown check key", "intent: x\nchecks:\n  - kind: file_min_lines\n    path: a\n    mn: 3\n", "5:5", `check 1 (file_min_lines): unknown key "mn"; a file_min_lines check takes kind, path, min, note`},
		{"unknown key, unknown kind", "intent: x\nchecks:\n  - kind: nope\n    foo: 3\n", "4:5", `check 1: unknown key "foo"; check keys are kind`},
		{"unknown kind", "intent: x\nchecks:\n  - kind: file_exists\n    path: a\n  - kind: file_exist\n    path: b\n", "5:11", `check 2: unknown kind "file_exist"`},
		{"missing kind", "intent: x\nchecks:\n  - path: a\n", "3:5", "check 1: kind is missing"},
		{"min is text", "intent: x\nchecks:\n  - kind: file_min_lines\n    path: a\n    min: lots\n", "5:10", `check 1: min must be a number, not text ("lots")`},
		{"min is quoted", "intent: x\nchecks:\n  - kind: file_min_lines\n    path: a\n    min: \"3\"\n", "5:10", "min must be a number"},
		{"min is fractional", "intent: x\nchecks:\n  - kind: file_min_lines\n    path: a\n    min: 1.5\n", "5:10", "min must be a whole number, got 1.5"},
		{"min too large", "intent: x\nchecks:\n  - kind: file_min_lines\n    path: a\n    min: 99999999999999999999\n", "5:10", "min"},
		{"min null", "intent: x\nchecks:\n  - kind: file_min_lines\n    path: a\n    min:\n", "5:10", "min has no value"},
		{"min zero", "intent: x\nchecks:\n  - kind: file_min_lines\n    path: a\n    min: 0\n", "5:10", "check 1 (file_min_lines): min must be at least 1, got 0"},
		{"zero min on file_exists", "intent: x\nchecks:\n  - kind: file_exists\n    path: a\n    min: 0\n", "5:10", "min does not apply to file_exists"},
		{"path is a list", "intent: x\nchecks:\n  - kind: file_exists\n    path: [a, b]\n", "4:11", "path must be text, not a list"},
		{"args is text", "intent: x\nchecks:\n  - kind: script\n    path: t.sh\n    interpreter: sh\n    args: -v\n", "6:11", "args must be a list"},
		{"args item is a mapping", "intent: x\nchecks:\n  - kind: script\n    path: t.sh\n    interpreter: sh\n    args: [{a: 1}]\n", "6:13", "args item 1 must be text, not a mapping"},
		{"checks is a mapping", "intent: x\nchecks:\n  kind: file_exists\n", "3:3", "checks must be a list of checks, not a mapping"},
		{"check is text", "intent: x\nchecks:\n  - file_exists\n", "3:5", "check 1 must be a mapping"},
		{"no checks", "intent: x\nchecks: []\n", "2:9", "at least one check"},
		{"checks missing", "intent: x\n", "1:1", "checks is missing"},
		{"intent missing", "checks:\n  - kind: rubric\n    text: ok\n", "1:1", "intent is missing"},
		{"intent blank", "intent: \"  \"\nchecks:\n  - kind: rubric\n    text: ok\n", "1:9", "intent is empty"},
		{"intent is a list", "intent: [a]\nchecks: []\n", "1:9", "intent must be text, not a list"},
		{"bad path", "intent: x\nchecks:\n  - kind: file_exists\n    path: ../secret\n", "4:11", `check 1 (file_exists): path "../secret" contains ".."`},
		{"bad regexp", "intent: x\nchecks:\n  - kind: matches\n    path: a\n    text: \"a(\"\n", "5:11", "not a valid regular expression"},
		{"rubric with path", "intent: x\nchecks:\n  - kind: rubric\n    text: ok\n    path: a.md\n", "5:11", "path does not apply to rubric"},
		{"wrong id", "id: c-0000000000000000\nintent: x\nchecks:\n  - kind: rubric\n    text: ok\n", "1:5", "does not match the content"},
		{"duplicate key", "intent: x\nintent: y\nchecks: []\n", "2:1", "already defined"},
		{"duplicate check key", "intent: x\nchecks:\n  - kind: file_exists\n    path: a\n    path: b\n", "5:5", "already defined"},
		{"syntax error", "intent: 'x\nchecks: []\n", "1:9", "single-quoted"},
		{"tab indentation", "intent: x\n\tchecks: []\n", "2:1", "'\\t'"},
		{"top level list", "- intent: x\n", "1:1", "a contract is a mapping"},
		{"empty file", "", "1:1", "the file is empty"},
		{"only a comment", "# nothing\n", "1:1", "the file is empty"},
		{"two documents", "intent: x\nchecks: []\n---\nintent: y\n", "4:1", "more than one YAML document"},
		{"anchor", "intent: &i x\nchecks: []\n", "1:9", "anchors (&) and aliases (*) are not supported"},
		{"tag", "intent: !!str x\nchecks: []\n", "1:9", "tags (!) are not supported"},
		{"merge key", "intent: x\nchecks:\n  - <<: {kind: rubric}\n    text: ok\n", "3:5", "merge keys (<<) are not supported"},
		{"invalid utf8", "intent: a\xffb\n", "1:10", "not valid UTF-8"},
		{"too deep", "intent: " + strings.Repeat("[", 2000) + "\n", "1:1", "nested more than 1000 levels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "c.yaml")
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tc.src)
			}
			msg := err.Error()
			prefix := "c.yaml:" + tc.at + ": "
			if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.want) {
				t.Fatalf("error = %q\nwant prefix %q and %q", msg, prefix, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Fatalf("error spans lines: %q", msg)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || fmt.Sprintf("%d:%d", pe.Line, pe.Col) != tc.at {
				t.Fatalf("not a *ParseError at %s: %#v", tc.at, err)
			}
		})
	}
}

// F-D1: a validation error reached through Parse still carries its
// structure, for callers that want to act on the field rather than parse
// the message.
func TestParseErrorUnwrapsValidation(t *testing.T) {
	_, err := Parse([]byte("intent: x\nchecks:\n  - kind: rubric\n  - kind: file_exists\n    path: a\n    min: 0\n"), "c.yaml")
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Check != 0 || ve.Field != "text" {
		t.Fatalf("err = %v, want a ValidationError for check 0, field text", err)
	}
	if !strings.HasPrefix(err.Error(), "c.yaml:3:5: check 1 (rubric): text is missing") {
		t.Fatalf("err = %q", err)
	}
}

// F-D1: plain numbers and booleans in text fields are the text as written.
func TestParseScalarsAsText(t *testing.T) {
	c, err := Parse([]byte("intent: 2024\nchecks:\n  - kind: contains\n    path: a\n    text: 1.10\n  - kind: contains\n    path: b\n    text: yes\n  - kind: script\n    path: t.sh\n    interpreter: sh\n    args: [1, true, 0x1F]\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Intent != "2024" || c.Checks[0].Text != "1.10" || c.Checks[1].Text != "yes" || !reflect.DeepEqual(c.Checks[2].Args, []string{"1", "true", "0x1F"}) {
		t.Fatalf("got %#v", c)
	}
}

func TestMarshalRefusesInvalid(t *testing.T) {
	if _, err := Marshal(Contract{Intent: "x"}); err == nil {
		t.Fatal("Marshal wrote a contract without checks")
	}
	c := New("x", []Check{{Kind: Rubric, Text: "ok"}})
	c.Intent = "y"
	if _, err := Marshal(c); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("Marshal wrote a contract whose id does not match: %v", err)
	}
}
