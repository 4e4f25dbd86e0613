package contract

import (
	"errors"
	"strings"
	"testing"
)

// F-D1: a check path can only name something inside the folder the contract
// is evaluated in; every way of spelling your way out is refused.
func TestValidatePathRejects(t *testing.T) {
	for _, tc := range []struct {
		path, want string
	}{
		{"", "empty"},
		{"/etc/passwd", "absolute"},
		{"/", "absolute"},
		{"..", `".."`},
		{"../x", `".."`},
		{"a/../../x", `".."`},
		{"a/..", `".."`},
		{`a\b`, "backslash"},
		{`..\x`, "backslash"},
		{"C:/x", `":"`},
		{"http://x", `":"`},
		{"a\x00b", "NUL"},
		{"a\xffb", "UTF-8"},
		{".", "folder itself"},
	} {
		err := ValidatePath(tc.path)
		if err == nil {
			t.Errorf("ValidatePath(%q) = nil, want an error mentioning %s", tc.path, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidatePath(%q) = %q, want it to mention %s", tc.path, err, tc.want)
		}
	}
}

// F-D1: ordinary relative paths pass; "." only where a folder is meant.
func TestValidatePathAccepts(t *testing.T) {
	for _, p := range []string{"a", "a/b.txt", "./a", "a/./b", "..a", "a..", "a/..b/c", "report final.md", "报告.md", ".hidden"} {
		if err := ValidatePath(p); err != nil {
			t.Errorf("ValidatePath(%q) = %v, want nil", p, err)
		}
	}
	if err := ValidateDirPath("."); err != nil {
		t.Errorf(`ValidateDirPath(".") = %v, want nil`, err)
	}
	if err := ValidateDirPath("../x"); err == nil {
		t.Errorf(`ValidateDirPath("../x") = nil, want an error`)
	}
}

// F-D1: each kind's required fields, allowed values and foreign fields.
// A field that does not belong to the kind is an error so typos surface.
func TestCheckValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check Check
		field string // "" when the check is valid
		want  string // substring of the error
	}{
		{"missing kind", Check{Path: "a"}, "kind", "kind is missing"},
		{"unknown kind", Check{Kind: "file_exist", Path: "a"}, "kind", `unknown kind "file_exist"`},

		{"file_exists ok", Check{Kind: FileExists, Path: "a.md", Note: "why"}, "", ""},
		{"file_exists no path", Check{Kind: FileExists}, "path", "path is missing"},
		{"file_exists dot", Check{Kind: FileExists, Path: "."}, "path", "folder itself"},
		{"file_exists escaping path", Check{Kind: FileExists, Path: "../a"}, "path", `".."`},
		{"file_exists with min", Check{Kind: FileExists, Path: "a", Min: 3}, "min", "min does not apply to file_exists"},
		{"file_exists with text", Check{Kind: FileExists, Path: "a", Text: "x"}, "text", "text does not apply"},

		{"file_min_lines ok", Check{Kind: FileMinLines, Path: "a", Min: 1}, "", ""},
		{"file_min_lines no min", Check{Kind: FileMinLines, Path: "a"}, "min", "at least 1"},
		{"file_min_lines negative", Check{Kind: FileMinLines, Path: "a", Min: -2}, "min", "at least 1, got -2"},
		{"file_min_lines no path", Check{Kind: FileMinLines, Min: 2}, "path", "path is missing"},
		{"file_min_lines with glob", Check{Kind: FileMinLines, Path: "a", Min: 2, Glob: "*"}, "glob", "glob does not apply"},

		{"file_min_bytes ok", Check{Kind: FileMinBytes, Path: "a", Min: 100}, "", ""},
		{"file_min_bytes zero", Check{Kind: FileMinBytes, Path: "a"}, "min", "at least 1"},
		{"file_min_bytes with field", Check{Kind: FileMinBytes, Path: "a", Min: 1, Field: "x"}, "field", "field does not apply"},

		{"yaml ok", Check{Kind: YAMLFieldPresent, Path: "m.yaml", Field: "meta.title"}, "", ""},
		{"yaml no field", Check{Kind: YAMLFieldPresent, Path: "m.yaml"}, "field", "field is missing"},
		{"yaml empty segment", Check{Kind: YAMLFieldPresent, Path: "m.yaml", Field: "a..b"}, "field", "empty segment"},
		{"yaml leading dot", Check{Kind: YAMLFieldPresent, Path: "m.yaml", Field: ".a"}, "field", "empty segment"},
		{"yaml trailing dot", Check{Kind: YAMLFieldPresent, Path: "m.yaml", Field: "a."}, "field", "empty segment"},
		{"yaml no path", Check{Kind: YAMLFieldPresent, Field: "a"}, "path", "path is missing"},
		{"yaml with min", Check{Kind: YAMLFieldPresent, Path: "m.yaml", Field: "a", Min: 1}, "min", "min does not apply"},

		{"dir ok", Check{Kind: DirMinFiles, Path: "out", Min: 3, Glob: "*.md"}, "", ""},
		{"dir dot", Check{Kind: DirMinFiles, Path: ".", Min: 1}, "", ""},
		{"dir no glob", Check{Kind: DirMinFiles, Path: "out", Min: 1}, "", ""},
		{"dir no path", Check{Kind: DirMinFiles, Min: 1}, "path", `"." for the whole folder`},
		{"dir no min", Check{Kind: DirMinFiles, Path: "out"}, "min", "at least 1"},
		{"dir bad glob", Check{Kind: DirMinFiles, Path: "out", Min: 1, Glob: "[a"}, "glob", "not a valid pattern"},
		{"dir glob slash", Check{Kind: DirMinFiles, Path: "out", Min: 1, Glob: "a/*.md"}, "glob", `contains "/"`},
		{"dir glob dotdot", Check{Kind: DirMinFiles, Path: "out", Min: 1, Glob: ".."}, "glob", `contains ".."`},
		{"dir escaping", Check{Kind: DirMinFiles, Path: "..", Min: 1}, "path", `".."`},
		{"dir with text", Check{Kind: DirMinFiles, Path: "out", Min: 1, Text: "x"}, "text", "text does not apply"},

		{"script ok", Check{Kind: Script, Path: "t.py", Interpreter: "python3", Args: []string{"-v"}, TimeoutSec: 60}, "", ""},
		{"script max timeout", Check{Kind: Script, Path: "t.sh", Interpreter: "sh", TimeoutSec: 3600}, "", ""},
		{"script no path", Check{Kind: Script, Interpreter: "sh"}, "path", "script file"},
		{"script no interpreter", Check{Kind: Script, Path: "t.sh"}, "interpreter", "interpreter is missing"},
		{"script bad interpreter", Check{Kind: Script, Path: "t.rb", Interpreter: "ruby"}, "interpreter", `"ruby" is not allowed`},
		{"script interpreter path", Check{Kind: Script, Path: "t.sh", Interpreter: "/bin/sh"}, "interpreter", "not allowed"},
		{"script negative timeout", Check{Kind: Script, Path: "t.sh", Interpreter: "sh", TimeoutSec: -1}, "timeout_sec", "between 0 and 3600"},
		{"script long timeout", Check{Kind: Script, Path: "t.sh", Interpreter: "sh", TimeoutSec: 3601}, "timeout_sec", "between 0 and 3600"},
		{"script NUL arg", Check{Kind: Script, Path: "t.sh", Interpreter: "sh", Args: []string{"a\x00"}}, "args", "NUL"},
		{"script with min", Check{Kind: Script, Path: "t.sh", Interpreter: "sh", Min: 1}, "min", "min does not apply"},

		{"contains ok", Check{Kind: Contains, Path: "a.md", Text: "## Summary"}, "", ""},
		{"contains no text", Check{Kind: Contains, Path: "a.md"}, "text", "text is missing"},
		{"contains no path", Check{Kind: Contains, Text: "x"}, "path", "path is missing"},
		{"contains with args", Check{Kind: Contains, Path: "a", Text: "x", Args: []string{"y"}}, "args", "args does not apply"},

		{"matches ok", Check{Kind: Matches, Path: "a.md", Text: `(?m)^# \w+`}, "", ""},
		{"matches bad regexp", Check{Kind: Matches, Path: "a.md", Text: "a("}, "text", "not a valid regular expression: missing closing )"},
		{"matches no text", Check{Kind: Matches, Path: "a.md"}, "text", "text is missing"},
		{"matches with interpreter", Check{Kind: Matches, Path: "a", Text: "x", Interpreter: "sh"}, "interpreter", "interpreter does not apply"},

		{"rubric ok", Check{Kind: Rubric, Text: "The summary names the three risks."}, "", ""},
		{"rubric no text", Check{Kind: Rubric}, "text", "statement the reviewer grades"},
		{"rubric blank text", Check{Kind: Rubric, Text: " \n"}, "text", "statement the reviewer grades"},
		{"rubric with path", Check{Kind: Rubric, Text: "x", Path: "a.md"}, "path", "path does not apply to rubric"},
		{"rubric with timeout", Check{Kind: Rubric, Text: "x", TimeoutSec: 5}, "timeout_sec", "timeout_sec does not apply"},

		{"invalid utf8 text", Check{Kind: Contains, Path: "a", Text: "\xff"}, "text", "UTF-8"},
		{"invalid utf8 note", Check{Kind: FileExists, Path: "a", Note: "\xfe"}, "note", "UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.check.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate() = %v, want a *ValidationError", err)
			}
			if ve.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %q (field %q), want field %q and %q", err, ve.Field, tc.field, tc.want)
			}
		})
	}
}

// F-D1: a contract needs an intent and at least one valid check, and
// errors name the check 1-based, the way people count.
func TestContractValidate(t *testing.T) {
	good := []Check{{Kind: FileExists, Path: "a"}, {Kind: Rubric, Text: "ok"}, {Kind: FileMinLines, Path: "b", Min: 3}}
	for _, tc := range []struct {
		name string
		c    Contract
		want string
	}{
		{"valid without id", Contract{Intent: "x", Checks: good}, ""},
		{"valid with id", New("x", good), ""},
		{"empty intent", Contract{Intent: "  ", Checks: good}, "intent is empty"},
		{"no checks", Contract{Intent: "x"}, "at least one check"},
		{"bad third check", Contract{Intent: "x", Checks: []Check{good[0], good[1], {Kind: FileMinLines, Path: "b"}}}, "check 3 (file_min_lines): min must be at least 1"},
		{"unknown kind", Contract{Intent: "x", Checks: []Check{{Kind: "nope"}}}, `check 1: unknown kind "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

// F-T4: a contract edited after it was made (its id no longer the address
// of its content) is refused, with an explanation a user can act on.
func TestContractValidateEditedAfterMade(t *testing.T) {
	c := New("write the report", []Check{{Kind: FileMinLines, Path: "report.md", Min: 10}})
	c.Checks[0].Min = 1 // weakening the bar in place
	err := c.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "id" {
		t.Fatalf("Validate() = %v, want an id error", err)
	}
	for _, want := range []string{"does not match the content", "changed after it was made", "immutable", "new contract"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
