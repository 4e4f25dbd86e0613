package contract

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// F-D1: the id is the content address: fixed for fixed content, across
// runs and builds. The golden value pins the canonical form, since changing
// it would silently re-address every stored contract.
func TestIDIsContentAddressedAndStable(t *testing.T) {
	checks := []Check{
		{Kind: FileMinLines, Path: "report.md", Min: 40},
		{Kind: Script, Path: "tools/verify.py", Interpreter: "python3", Args: []string{"--strict"}, TimeoutSec: 120},
	}
	a := New("Write the quarterly report", checks)
	b := New("Write the quarterly report", slices.Clone(checks))
	if a.ID != b.ID {
		t.Fatalf("same content, different ids: %s vs %s", a.ID, b.ID)
	}
	const golden = "c-622da396a8c92282"
	if a.ID != golden {
		t.Fatalf("id = %s, want %s: the canonical form changed", a.ID, golden)
	}
	if !a.IDValid() || !a.Equal(b) {
		t.Fatal("a freshly made contract does not validate its own id")
	}
	// An empty args list and no args are the same content.
	withEmpty := slices.Clone(checks)
	withEmpty[0].Args = []string{}
	if ComputeID("Write the quarterly report", withEmpty) != golden {
		t.Fatal("an empty args list changed the id")
	}
}

// fieldMutations changes one field of a check, for every field Check has.
var fieldMutations = map[string]func(*Check){
	"Kind":        func(c *Check) { c.Kind = Contains },
	"Path":        func(c *Check) { c.Path += "x" },
	"Min":         func(c *Check) { c.Min++ },
	"Field":       func(c *Check) { c.Field += ".x" },
	"Glob":        func(c *Check) { c.Glob += "x" },
	"Text":        func(c *Check) { c.Text += " " },
	"Interpreter": func(c *Check) { c.Interpreter = "bash" },
	"Args":        func(c *Check) { c.Args = append(c.Args, "") },
	"TimeoutSec":  func(c *Check) { c.TimeoutSec++ },
	"Note":        func(c *Check) { c.Note += "!" },
}

// F-D1, F-T4: every field of a check is part of the id, so no part of a
// requirement can be changed in place. The test fails if Check gains a
// field that this table does not cover.
func TestIDChangesWithEveryField(t *testing.T) {
	typ := reflect.TypeFor[Check]()
	for i := range typ.NumField() {
		if name := typ.Field(i).Name; fieldMutations[name] == nil {
			t.Errorf("Check.%s has no mutation in this test; does it change the id?", name)
		}
	}
	base := Check{Kind: Script, Path: "a", Min: 1, Field: "f", Glob: "*", Text: "t", Interpreter: "sh", Args: []string{"x"}, TimeoutSec: 1, Note: "n"}
	id := ComputeID("intent", []Check{base})
	if ComputeID("intent.", []Check{base}) == id {
		t.Error("changing the intent kept the id")
	}
	for name, mutate := range fieldMutations {
		m := base
		m.Args = slices.Clone(base.Args)
		mutate(&m)
		if ComputeID("intent", []Check{m}) == id {
			t.Errorf("changing %s kept the id", name)
		}
	}
	// Order, number and position of checks are content too.
	other := Check{Kind: Rubric, Text: "r"}
	ids := map[string]bool{}
	for _, cs := range [][]Check{{base}, {base, other}, {other, base}, {base, base}, {other}} {
		ids[ComputeID("intent", cs)] = true
	}
	if len(ids) != 5 {
		t.Errorf("reordering, adding or removing checks reused an id")
	}
}

func genSegment(sep string) *rapid.Generator[string] {
	return rapid.StringN(1, 8, -1).Filter(func(s string) bool {
		return s != "." && s != ".." && !strings.ContainsAny(s, sep+":\\\x00")
	})
}

func genPath() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return strings.Join(rapid.SliceOfN(genSegment("/"), 1, 3).Draw(t, "segments"), "/")
	})
}

// genText draws either anything at all or multi-line text made of the
// characters that decide how YAML lays out a scalar (indentation, block
// indicators, comments, trailing blanks), which rapid's alphabet rarely
// strings together.
func genText() *rapid.Generator[string] {
	layout := rapid.Custom(func(t *rapid.T) string {
		line := rapid.StringOf(rapid.RuneFrom([]rune("ab #:-|>\t'\"\r\u00a0界")))
		s := strings.Join(rapid.SliceOfN(line, 1, 4).Draw(t, "lines"), "\n")
		return s + rapid.SampledFrom([]string{"", "\n", "\n\n"}).Draw(t, "end")
	})
	return rapid.OneOf(rapid.String(), layout)
}

func genNonBlank() *rapid.Generator[string] {
	return genText().Filter(func(s string) bool { return strings.TrimSpace(s) != "" })
}

// genCheck draws a valid check of any kind, with text drawn from rapid's
// adversarial alphabet (controls, BOM, quotes, YAML indicators, newlines).
func genCheck() *rapid.Generator[Check] {
	return rapid.Custom(func(t *rapid.T) Check {
		ch := Check{Kind: rapid.SampledFrom(Kinds).Draw(t, "kind")}
		if ch.Kind != Rubric {
			ch.Path = genPath().Draw(t, "path")
		}
		switch ch.Kind {
		case FileMinLines, FileMinBytes:
			ch.Min = rapid.IntRange(1, 1<<40).Draw(t, "min")
		case YAMLFieldPresent:
			ch.Field = strings.Join(rapid.SliceOfN(genSegment("."), 1, 3).Draw(t, "field"), ".")
		case DirMinFiles:
			if rapid.Bool().Draw(t, "dot") {
				ch.Path = "."
			}
			ch.Min = rapid.IntRange(1, 1000).Draw(t, "min")
			ch.Glob = rapid.SampledFrom([]string{"", "*", "*.md", "report-??.txt", "[abc]*", "报告*"}).Draw(t, "glob")
		case Script:
			ch.Interpreter = rapid.SampledFrom(AllowedInterpreters).Draw(t, "interpreter")
			ch.Args = rapid.SliceOfN(genText().Filter(func(s string) bool { return !strings.ContainsRune(s, 0) }), 0, 3).Draw(t, "args")
			if len(ch.Args) == 0 {
				ch.Args = nil
			}
			ch.TimeoutSec = rapid.IntRange(0, MaxTimeoutSec).Draw(t, "timeout")
		case Contains:
			ch.Text = genText().Filter(func(s string) bool { return s != "" }).Draw(t, "text")
		case Matches:
			ch.Text = regexp.QuoteMeta(rapid.StringN(1, 20, -1).Draw(t, "literal"))
		case Rubric:
			ch.Text = genNonBlank().Draw(t, "statement")
		}
		ch.Note = genText().Draw(t, "note")
		return ch
	})
}

func genContract() *rapid.Generator[Contract] {
	return rapid.Custom(func(t *rapid.T) Contract {
		return New(genNonBlank().Draw(t, "intent"), rapid.SliceOfN(genCheck(), 1, 4).Draw(t, "checks"))
	})
}

// F-D1, F-T4: any contract survives Marshal and Parse unchanged, id and
// all, and changing any one field of it gives a different id.
func TestRapidRoundTripAndMutation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genContract().Draw(t, "contract")
		if err := c.Validate(); err != nil {
			t.Fatalf("generated contract is invalid: %v", err)
		}
		data, err := Marshal(c)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		got, err := Parse(data, "gen.yaml")
		if err != nil {
			t.Fatalf("Parse of Marshal output: %v\n%s", err, data)
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("round trip changed the contract\nwant %#v\ngot  %#v\nyaml:\n%s", c, got, data)
		}
		if !got.Equal(c) {
			t.Fatal("round trip is not Equal")
		}

		m := Contract{Intent: c.Intent, Checks: slices.Clone(c.Checks)}
		if rapid.Bool().Draw(t, "mutate intent") {
			m.Intent += rapid.StringN(1, 3, -1).Draw(t, "suffix")
		} else {
			i := rapid.IntRange(0, len(m.Checks)-1).Draw(t, "check")
			names := make([]string, 0, len(fieldMutations))
			for name := range fieldMutations {
				names = append(names, name)
			}
			slices.Sort(names)
			name := rapid.SampledFrom(names).Draw(t, "field")
			ch := m.Checks[i]
			ch.Args = slices.Clone(ch.Args)
			if name == "Kind" && ch.Kind == Contains {
				ch.Kind = Matches
			} else if name == "Interpreter" && ch.Interpreter == "bash" {
				ch.Interpreter = "sh"
			} else {
				fieldMutations[name](&ch)
			}
			m.Checks[i] = ch
		}
		if ComputeID(m.Intent, m.Checks) == c.ID {
			t.Fatalf("mutated contract kept the id %s:\n%#v\n%#v", c.ID, c, m)
		}
	})
}
