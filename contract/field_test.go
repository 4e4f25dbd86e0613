package contract

import (
	"fmt"
	"strings"
	"testing"
)

// F-D3: yaml_field_present is decidable: present and non-null passes,
// anything else fails with a reason, and text that is not YAML is an error
// (undecided), never a pass.
func TestLookupField(t *testing.T) {
	const doc = `
report:
  owner: Ada
  reviewed: false
  count: 0
  empty: ""
  missing:
  nothing: null
  list: [1, 2]
2024:
  q3: done
base: &base
  region: EU
  tags: {a: 1}
derived:
  <<: *base
  region: US
alias: *base
`
	for _, tc := range []struct {
		field  string
		ok     bool
		reason string
	}{
		{"report", true, ""},
		{"report.owner", true, ""},
		{"report.reviewed", true, ""}, // false is a value
		{"report.count", true, ""},    // so is 0
		{"report.empty", true, ""},    // and ""
		{"report.list", true, ""},
		{"2024.q3", true, ""},
		{"derived.region", true, ""}, // its own key, beside a merge key
		{"derived.tags.a", true, ""}, // through a merge key
		{"alias.region", true, ""},   // through an alias
		{"report.missing", false, "report.missing is empty (null)"},
		{"report.nothing", false, "report.nothing is empty (null)"},
		{"report.absent", false, "report has no key absent"},
		{"absent", false, "the document has no key absent"},
		{"report.owner.name", false, "report.owner is text, not a mapping"},
		{"report.list.0", false, "report.list is a list, not a mapping"},
	} {
		ok, reason, err := LookupField([]byte(doc), tc.field)
		if err != nil {
			t.Fatalf("%s: %v", tc.field, err)
		}
		if ok != tc.ok || reason != tc.reason {
			t.Errorf("LookupField(%s) = %v, %q; want %v, %q", tc.field, ok, reason, tc.ok, tc.reason)
		}
	}
}

func TestLookupFieldUndecidable(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"syntax", "a: 'x\n", "1:4"},
		{"binary", "a: \xff\xfe\n", "not valid UTF-8"},
		{"deep", strings.Repeat("[", 5000), "nested more than"},
	} {
		ok, _, err := LookupField([]byte(tc.doc), "a")
		if ok || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ok=%v err=%v, want an error with %q", tc.name, ok, err, tc.want)
		}
	}
	for _, doc := range []string{"", "# only a comment\n", "- a\n- b\n", "just text\n"} {
		ok, reason, err := LookupField([]byte(doc), "a")
		if ok || err != nil || reason == "" {
			t.Errorf("LookupField(%q) = %v, %q, %v; want a plain failure", doc, ok, reason, err)
		}
	}
}

// An alias bomb is answered without expanding it.
func TestLookupFieldAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 30; i++ {
		prev := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "l%d: &l%d [%s%s]\n", i, i, strings.Repeat(prev+", ", 9), prev)
	}
	b.WriteString("top:\n  key: value\n")
	ok, _, err := LookupField([]byte(b.String()), "top.key")
	if err != nil || !ok {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
}

// A block mapping with very many keys is refused before parsing (the
// parser is quadratic in them); a long list of small mappings is not.
func TestLookupFieldWideMapping(t *testing.T) {
	var wide, long strings.Builder
	for i := range maxMappingKeys + 1 {
		fmt.Fprintf(&wide, "k%d: v\n", i)
		fmt.Fprintf(&long, "- id: %d\n  name: n\n", i)
	}
	ok, _, err := LookupField([]byte(wide.String()), "k1")
	if ok || err == nil || !strings.Contains(err.Error(), "more than 20000 keys") {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	ok, why, err := LookupField([]byte("meta:\n  items:\n"+indent(long.String(), "    ")+"  owner: Ada\n"), "meta.owner")
	if !ok || err != nil {
		t.Fatalf("a long list was refused: %v %s %v", ok, why, err)
	}
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+by) + "\n"
}
