package harness

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/fractal-harness/fractal/contract"
)

// criteriaIntent is the fixed intent under which done_criteria.yaml is read
// as a contract: the file holds only the checks.
const criteriaIntent = "done criteria of the task harness"

// The header ParseCriteria puts before the file's lines, which it indents
// by criteriaIndent columns.
const (
	criteriaHeader = "intent: " + criteriaIntent + "\nchecks:\n"
	headerLines    = 2
	criteriaIndent = 2
)

// ParseCriteria reads done_criteria.yaml: a YAML list of contract checks
// (docs/contracts.md), read as strictly as a contract file (unknown keys,
// wrong types, keys that do not belong to a check's kind, anchors and tags
// are errors). The error is a *contract.ParseError naming
// done_criteria.yaml with the line and column in that file.
//
// The file is read by contract.Parse itself, as the checks of a contract
// with a fixed intent, so done criteria and contracts can never drift
// apart in what they accept. A leading "---" is allowed.
func ParseCriteria(data []byte) ([]contract.Check, error) {
	fail := func(line, col int, format string, a ...any) error {
		return &contract.ParseError{Name: DoneCriteria, Line: line, Col: col, Msg: fmt.Sprintf(format, a...)}
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, fail(1, 1, "the file is empty: list at least one check, one \"- kind: ...\" item each")
	}
	var b strings.Builder
	b.Grow(len(criteriaHeader) + len(data) + 64)
	b.WriteString(criteriaHeader)
	content := false // a line other than blank or comment was seen
	for i, line := range strings.Split(string(data), "\n") {
		bare := strings.TrimRight(line, " \r")
		switch {
		case bare == "---" && !content:
			line = "" // the document start marker; indenting it would change its meaning
		case bare == "---" || strings.HasPrefix(bare, "--- ") || bare == "..." || strings.HasPrefix(bare, "... "):
			return nil, fail(i+1, 1, "the file holds more than one YAML document; write one list of checks")
		case strings.HasPrefix(bare, "%"):
			return nil, fail(i+1, 1, "YAML directives (%%) are not supported; write the list of checks")
		case bare != "" && !strings.HasPrefix(strings.TrimSpace(bare), "#"):
			content = true
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		if line != "" {
			// Indenting every line alike keeps the YAML's meaning: block
			// structure and literal blocks are relative to their parent.
			b.WriteString(strings.Repeat(" ", criteriaIndent))
		}
		b.WriteString(line)
	}
	c, err := contract.Parse([]byte(b.String()), DoneCriteria)
	if err != nil {
		var pe *contract.ParseError
		if errors.As(err, &pe) {
			return nil, criteriaError(pe)
		}
		return nil, err
	}
	return c.Checks, nil
}

// criteriaError maps a position in the wrapped text back to the file and
// rewords the messages that speak of the wrapper.
func criteriaError(pe *contract.ParseError) error {
	line, col := pe.Line-headerLines, pe.Col-criteriaIndent
	if line < 1 {
		line, col = 1, 1
	}
	col = max(col, 1)
	msg := pe.Msg
	switch {
	case strings.HasPrefix(msg, "checks must be a list of checks"):
		msg = "done_criteria.yaml must be a list of checks, one \"- kind: ...\" item each" + strings.TrimPrefix(msg, "checks must be a list of checks")
	case strings.Contains(msg, "a contract needs at least one check"):
		msg = "list at least one check"
	}
	return &contract.ParseError{Name: DoneCriteria, Line: line, Col: col, Msg: msg, Err: pe.Err}
}

// Bounds beyond which a minimum cannot be met by any deliverable of a task
// of one hour to two days; a number that large is a slip (a byte count
// where lines were meant, an extra zero), and a check that cannot pass
// would stall the run at the final gate.
const (
	MaxMinLines = 1_000_000
	MaxMinBytes = 1 << 30
	MaxMinFiles = 100_000
)

// runFolders are the top-level folders of a run. A done criterion's path
// is relative to the deliverable folder, so a path starting with one of
// them was written relative to the run and points at a file that the
// deliverable folder will not hold.
var runFolders = []string{"inputs", "harness", "work", "deliverable", "contracts", "control"}

// bookkeeping are the worker's own notes in its folder. A check on them
// says nothing about the deliverable, and the worker writes them anyway,
// so it cannot fail.
var bookkeeping = []string{"progress.md", "streams"}

// CheckCriteria finds done criteria that cannot do their job (DA-B1):
//
//   - E-CRITERIA-KIND: a rubric. Done criteria are structural checks and
//     explicitly not a semantic judge; judgements belong to the Reviewer.
//   - E-CRITERIA-VACUOUS (can never fail): a contains whose text is only
//     whitespace; a matches whose pattern matches every text, because it
//     can match the empty text at the start or at the end of any file
//     (".*", "x*", "^", "(?m)$", "a|"); a path on the worker's own
//     bookkeeping (progress.md, streams/). A min of 0 and an empty text
//     are already refused by contract validation.
//   - E-CRITERIA-IMPOSSIBLE (can never pass): a pattern that matches
//     nothing (an empty class, text after \z or before \A); a minimum
//     beyond MaxMinLines, MaxMinBytes or MaxMinFiles; one path used both
//     as a file and as a folder (by dir_min_files, or as the parent of
//     another check's path).
//   - E-CRITERIA-PATH: a path starting with a run folder (inputs/,
//     harness/, work/, ...): paths are relative to the deliverable folder,
//     and contract validation already refuses absolute paths and "..".
//
// Vacuity is decided only where it is certain; a check that passes these
// may still be weak, which is the Reviewer's to judge.
func CheckCriteria(checks []contract.Check) []Problem {
	var ps []Problem
	add := func(i int, ch contract.Check, code, format string, a ...any) {
		ps = append(ps, problem(code, "", DoneCriteria, "check %d (%s): %s", i+1, ch.Kind, fmt.Sprintf(format, a...)))
	}
	asFile := map[string]int{}   // path -> first check that needs it to be a file
	asFolder := map[string]int{} // path -> first check that needs it to be a folder
	for i, ch := range checks {
		if ch.Kind == contract.Rubric {
			add(i, ch, CodeCriteriaKind, "done criteria are structural checks, not judgements; state %q in methodology.md for the Reviewer instead", ch.Text)
			continue
		}
		p := path.Clean(ch.Path)
		first, _, _ := strings.Cut(p, "/")
		switch {
		case slices.Contains(runFolders, first):
			add(i, ch, CodeCriteriaPath, "path %q starts with the run folder %s/, but paths are relative to the deliverable folder; write the path inside it", ch.Path, first)
		case slices.Contains(bookkeeping, first):
			add(i, ch, CodeVacuous, "path %q is the worker's own notes, which it writes anyway; check the deliverable instead", ch.Path)
		}
		switch ch.Kind {
		case contract.FileMinLines:
			if ch.Min > MaxMinLines {
				add(i, ch, CodeImpossible, "min %d lines is beyond any deliverable of this size of task (at most %d)", ch.Min, MaxMinLines)
			}
		case contract.FileMinBytes:
			if ch.Min > MaxMinBytes {
				add(i, ch, CodeImpossible, "min %d bytes is beyond any deliverable of this size of task (at most %d)", ch.Min, MaxMinBytes)
			}
		case contract.DirMinFiles:
			if ch.Min > MaxMinFiles {
				add(i, ch, CodeImpossible, "min %d files is beyond any deliverable of this size of task (at most %d)", ch.Min, MaxMinFiles)
			}
		case contract.Contains:
			if ch.Text != "" && strings.TrimSpace(ch.Text) == "" {
				add(i, ch, CodeVacuous, "text is only whitespace, which almost every file contains; name words the deliverable must hold")
			}
		case contract.Matches:
			re, err := syntax.Parse(ch.Text, syntax.Perl)
			if err != nil {
				break // contract validation reports it
			}
			re = re.Simplify()
			switch {
			case nullable(re, atStart) || nullable(re, atEnd):
				add(i, ch, CodeVacuous, "the pattern %q matches every text (it can match empty text), so the check can never fail", ch.Text)
			case !canMatch(re):
				add(i, ch, CodeImpossible, "the pattern %q can match no text, so the check can never pass", ch.Text)
			}
		}
		if ch.Kind == contract.DirMinFiles {
			if _, ok := asFolder[p]; !ok {
				asFolder[p] = i
			}
		} else if _, ok := asFile[p]; !ok {
			asFile[p] = i
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := asFolder[d]; !ok {
				asFolder[d] = i
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(asFile)) {
		i := asFile[p]
		if j, ok := asFolder[p]; ok {
			a, b := min(i, j), max(i, j)
			ps = append(ps, problem(CodeImpossible, "", DoneCriteria,
				"checks %d and %d need %q to be both a file and a folder, so they can never both pass", a+1, b+1, p))
		}
	}
	return ps
}

// position says where in a text an empty match is tried: at its start or
// at its end. The text is otherwise arbitrary, so an assertion counts as
// satisfied only when it holds for every text at that position.
type position int

const (
	atStart position = iota
	atEnd
)

// nullable reports whether re matches the empty string at pos in every
// text. Word-boundary assertions depend on the text, so they count as
// unsatisfied: the answer errs towards "can fail", never towards a false
// refusal.
func nullable(re *syntax.Regexp, pos position) bool {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return true
	case syntax.OpLiteral:
		return len(re.Rune) == 0
	case syntax.OpBeginLine, syntax.OpBeginText:
		return pos == atStart
	case syntax.OpEndLine, syntax.OpEndText:
		return pos == atEnd
	case syntax.OpCapture:
		return nullable(re.Sub[0], pos)
	case syntax.OpStar, syntax.OpQuest:
		return true
	case syntax.OpPlus:
		return nullable(re.Sub[0], pos)
	case syntax.OpRepeat:
		return re.Min == 0 || nullable(re.Sub[0], pos)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !nullable(s, pos) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if nullable(s, pos) {
				return true
			}
		}
	}
	return false
}

// canMatch reports whether re matches some text. It is exact for empty
// classes and for text required after \z or before \A in a sequence, and
// says "can" for everything else.
func canMatch(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpCharClass:
		return len(re.Rune) > 0
	case syntax.OpCapture, syntax.OpPlus:
		return canMatch(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min == 0 || canMatch(re.Sub[0])
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if canMatch(s) {
				return true
			}
		}
		return false
	case syntax.OpConcat:
		consumed, ended := false, false
		for _, s := range re.Sub {
			if !canMatch(s) {
				return false
			}
			consumes := mustConsume(s)
			if ended && consumes || s.Op == syntax.OpBeginText && consumed {
				return false
			}
			consumed = consumed || consumes
			ended = ended || s.Op == syntax.OpEndText
		}
	}
	return true
}

// mustConsume reports whether every match of re is at least one character.
func mustConsume(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune) > 0
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	case syntax.OpCapture, syntax.OpPlus:
		return mustConsume(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min > 0 && mustConsume(re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if mustConsume(s) {
				return true
			}
		}
		return false
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !mustConsume(s) {
				return false
			}
		}
		return len(re.Sub) > 0
	}
	return false
}

// criteriaProblems parses done_criteria.yaml and checks it: the problems a
// write or the bootstrap precheck refuses.
func criteriaProblems(data []byte) []Problem {
	checks, err := ParseCriteria(data)
	if err != nil {
		var pe *contract.ParseError
		if errors.As(err, &pe) {
			return []Problem{problem(CodeCriteria, "", DoneCriteria, "line %d, column %d: %s", pe.Line, pe.Col, pe.Msg)}
		}
		return []Problem{problem(CodeCriteria, "", DoneCriteria, "%v", err)}
	}
	return CheckCriteria(checks)
}
