package gate

import (
	"strings"
	"unicode"
)

// Text comparison for quotes and copies. A model that quotes a file
// reliably changes a few things it does not see as changes: line breaks
// and runs of spaces, straight versus typographic quotes, hyphens versus
// dashes, "..." versus "…". Those are folded; everything else, case
// included, must match.

// fold maps one rune to its comparison form; "" drops it.
func fold(r rune) string {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B', '\u2032', '\u0060', '\u00B4':
		return "'"
	case '\u201C', '\u201D', '\u201E', '\u201F', '\u2033', '\u00AB', '\u00BB':
		return `"`
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return "-"
	case '\u2026':
		return "..."
	case '\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u00AD':
		return "" // invisible: zero-width characters, soft hyphen
	}
	return string(r)
}

// normalized is text in comparison form, with the 1-based line of the
// original text that each byte came from.
type normalized struct {
	text string
	line []int // line[i] is the original line of text[i]
}

// normalize folds s and collapses every run of white space to one space,
// trimming both ends.
func normalize(s string) normalized {
	var b strings.Builder
	var lines []int
	line, space := 1, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if r == '\n' {
				line++
			}
			space = b.Len() > 0
			continue
		}
		f := fold(r)
		if f == "" {
			continue
		}
		if space {
			b.WriteByte(' ')
			lines = append(lines, line)
			space = false
		}
		b.WriteString(f)
		for range len(f) {
			lines = append(lines, line)
		}
	}
	return normalized{b.String(), lines}
}

// startLines returns the original lines on which q (already normalized)
// begins in n, in order, without repeats.
func (n normalized) startLines(q string) []int {
	var out []int
	if q == "" {
		return nil
	}
	for off := 0; ; {
		i := strings.Index(n.text[off:], q)
		if i < 0 {
			return out
		}
		l := n.line[off+i]
		if len(out) == 0 || out[len(out)-1] != l {
			out = append(out, l)
		}
		off += i + 1
	}
}

// clip shortens s for a message.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
