package gate

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// The copy measure. A deliverable is compared with each input line by
// line, after normalizing each line (white space, quote style and dashes
// folded; leading list and heading marks such as "- ", "* ", "# ", "> "
// dropped) and ignoring lines with no letter or digit (rules, table
// borders, blank lines). With D the deliverable's lines and I the input's,
// both as multisets:
//
//	containment = |D ∩ I| / |D|   how much of the deliverable is copied
//	coverage    = |D ∩ I| / |I|   how much of the input it reproduces
//
// The deliverable is flagged when containment ≥ CopyContainment and
// coverage ≥ CopyCoverage. Containment alone would flag honest extracts (a
// task "list the rows that…" copies lines too, but only some); coverage
// alone would flag a report that quotes its whole source and adds pages of
// its own. Both together mean: nothing new was written, and most of an input
// came back. Lines, not words, so a reformatted table (CSV to Markdown) is
// not a copy. Multisets, so a repeated line counts as often as it occurs.
const (
	CopyContainment = 0.9
	CopyCoverage    = 0.5
)

// placeholders are the template remnants Suspicious looks for. The
// all-caps markers are case-sensitive whole words, so "todo list" or a
// "tbd" inside a word is not flagged; the others ignore case.
var placeholders = []struct {
	name string
	re   *regexp.Regexp
}{
	{"TODO/TBD/TBC/FIXME/XXX marker", regexp.MustCompile(`\b(TODO|TBD|TBC|FIXME|XXX+)\b`)},
	{"lorem ipsum", regexp.MustCompile(`(?i)\blorem ipsum\b`)},
	{"[insert …] slot", regexp.MustCompile(`(?i)\[\s*(insert|add|enter|fill|your|placeholder)\b[^\]\n]*\]`)},
	{"{{…}} template field", regexp.MustCompile(`\{\{[^{}\n]*\}\}`)},
	{"<placeholder> slot", regexp.MustCompile(`(?i)<\s*(placeholder|insert|enter|fill|your)\b[^>\n]*>`)},
}

// Suspicious checks a deliverable's text for the cheap ways to look done
// (DA-B1): it is empty or white space only (E-SUSPECT-EMPTY); it is nearly
// a copy of one of the inputs (E-SUSPECT-COPY, see CopyContainment); it
// still holds template placeholders (E-SUSPECT-PLACEHOLDER, one problem per
// kind of placeholder, naming the lines).
//
// inputs maps an input's name to its text. A quoted placeholder word that
// really is in an input is still flagged: a template with its slots left in
// is exactly the case to catch, and rewording ("to be decided") is cheap.
func Suspicious(deliverable string, inputs map[string]string) []Problem {
	if strings.TrimSpace(deliverable) == "" {
		return []Problem{{Item: "deliverable", Code: ESuspectEmpty,
			Message: "the deliverable is empty; write the actual content before declaring done"}}
	}
	var out []Problem
	d := contentLines(deliverable)
	names := make([]string, 0, len(inputs))
	for n := range inputs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		in := contentLines(inputs[name])
		shared := sharedCount(d, in)
		if len(d) == 0 || len(in) == 0 {
			continue
		}
		contain := float64(shared) / float64(len(d))
		cover := float64(shared) / float64(len(in))
		if contain >= CopyContainment && cover >= CopyCoverage {
			out = append(out, Problem{Item: name, Code: ESuspectCopy, Message: fmt.Sprintf(
				"the deliverable is a copy of the input %s: %d of its %d lines are taken from it word for word, reproducing %.0f%% of it; write the deliverable the task asks for, quoting the input only where needed",
				name, shared, len(d), 100*cover)})
		}
	}
	lines := strings.Split(deliverable, "\n")
	for _, p := range placeholders {
		var at []int
		var seen []string
		for i, l := range lines {
			for _, m := range p.re.FindAllString(l, -1) {
				if len(at) == 0 || at[len(at)-1] != i+1 {
					at = append(at, i+1)
				}
				if !slices.Contains(seen, m) && len(seen) < 3 {
					seen = append(seen, m)
				}
			}
		}
		if len(at) == 0 {
			continue
		}
		quoted := make([]string, len(seen))
		for i, s := range seen {
			quoted[i] = fmt.Sprintf("%q", clip(s, 40))
		}
		out = append(out, Problem{Item: fmt.Sprintf("line %d", at[0]), Code: ESuspectPlaceholder, Message: fmt.Sprintf(
			"the deliverable still holds template placeholders (%s: %s) on %s; replace each with the real content",
			p.name, strings.Join(quoted, ", "), lineListAnd(at))})
	}
	return out
}

// contentLines returns the comparison form of every line of s that holds a
// letter or a digit.
func contentLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		n := strings.TrimLeft(normalize(l).text, "#>*-+• ")
		if strings.IndexFunc(n, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			out = append(out, n)
		}
	}
	return out
}

// sharedCount is |a ∩ b| for multisets.
func sharedCount(a, b []string) int {
	left := map[string]int{}
	for _, s := range b {
		left[s]++
	}
	n := 0
	for _, s := range a {
		if left[s] > 0 {
			left[s]--
			n++
		}
	}
	return n
}

func lineListAnd(ls []int) string {
	s := []string{}
	word := "line "
	if len(ls) > 1 {
		word = "lines "
	}
	for i, l := range ls {
		if i == 8 {
			s = append(s, fmt.Sprintf("and %d more", len(ls)-8))
			break
		}
		s = append(s, fmt.Sprint(l))
	}
	return word + strings.Join(s, ", ")
}
