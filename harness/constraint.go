package harness

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Kind is one of the six kinds of constraint every raw task is translated
// into (DA-B3).
type Kind string

// The six kinds. Each must be considered for every task: stated by at least
// one constraint, or explicitly "none stated" (see Constraint.IsNone).
const (
	Audience    Kind = "audience"     // who reads or uses the result
	Form        Kind = "form"         // file type, length, structure, language
	TimeWindow  Kind = "time_window"  // the period the content covers, deadlines
	MustInclude Kind = "must_include" // what the result has to contain
	Exclude     Kind = "exclude"      // what it must leave out
	Quality     Kind = "quality"      // standards: sourcing, accuracy, tone
)

// Kinds lists the six kinds in the order people read them.
var Kinds = []Kind{Audience, Form, TimeWindow, MustInclude, Exclude, Quality}

// Valid reports whether k is one of the six kinds.
func (k Kind) Valid() bool { return slices.Contains(Kinds, k) }

// NoneStated is the Text of a constraint that records that the user, asked
// about a kind, stated nothing for it.
const NoneStated = "none stated"

// Source names. A constraint may quote only the raw task or a clarification
// round's answers: these are the user's words. Meta's questions file is
// not a source — it holds Meta's words, not the user's.
const TaskSource = "inputs/task.md"

// AnswersSource returns the source name of clarification round n's answers,
// "inputs/clarify/round_<n>_answers.md".
func AnswersSource(n int) string { return fmt.Sprintf("inputs/clarify/round_%d_answers.md", n) }

// QuestionsFile returns the path of clarification round n's questions,
// "inputs/clarify/round_<n>_questions.md".
func QuestionsFile(n int) string { return fmt.Sprintf("inputs/clarify/round_%d_questions.md", n) }

var answersRe = regexp.MustCompile(`^inputs/clarify/round_([1-9][0-9]*)_answers\.md$`)

// AnswersRound returns the round number of an answers source name, or false
// when name is not one.
func AnswersRound(name string) (int, bool) {
	m := answersRe.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// isSource reports whether name may be a constraint's source at all.
func isSource(name string) bool {
	_, ok := AnswersRound(name)
	return ok || name == TaskSource
}

// Constraint is one explicit constraint of the task, traced to the user's
// words.
type Constraint struct {
	// ID is "C" and a number, such as "C1". Files mark the places the
	// constraint lands in with "[C1]" (Marker).
	ID   string `json:"id" yaml:"id"`
	Kind Kind   `json:"kind" yaml:"kind"`
	// Text states the constraint for the workers, or is NoneStated.
	Text string `json:"text" yaml:"text"`
	// Quote is the user's words it comes from, copied from Source.
	Quote string `json:"quote" yaml:"quote"`
	// Source is TaskSource or an AnswersSource.
	Source string `json:"source" yaml:"source"`
}

// IsNone reports whether c records that nothing was stated for its kind:
// its Text is NoneStated, in any case, with or without a final period.
func (c Constraint) IsNone() bool {
	return strings.TrimSuffix(normalize(c.Text), ".") == NoneStated
}

// Marker is the tag that places c in a file: its ID in square brackets.
func (c Constraint) Marker() string { return Marker(c.ID) }

// Marker returns the tag of constraint id: "[C1]".
func Marker(id string) string { return "[" + id + "]" }

var idRe = regexp.MustCompile(`^C[1-9][0-9]{0,3}$`)

// MinQuoteWords is how many words a quotation needs. A word or two ("the
// board", "PDF") occurs almost anywhere, so it proves nothing about where
// a constraint came from; three words of the user's own phrasing do.
// In Chinese and Japanese, written without spaces, two characters count as
// one word (about the length of a word there).
const MinQuoteWords = 3

// The codes of Problems.
const (
	CodeUnsourced      = "E-CONSTRAINT-UNSOURCED"    // no quote, or a quote not in its source
	CodeConstraint     = "E-CONSTRAINT-INVALID"      // bad id, kind or text; duplicates; conflicts
	CodeKindMissing    = "E-CONSTRAINT-KIND-MISSING" // one of the six kinds not considered
	CodeNoneUnasked    = "E-CONSTRAINT-NONE-UNASKED" // "none stated" without a clarification answer
	CodeUnderplaced    = "E-CONSTRAINT-UNDERPLACED"  // in fewer than the required places
	CodeTable          = "E-METHODOLOGY-TABLE"       // the opening table is missing, malformed or wrong
	CodeInventory      = "E-METHODOLOGY-INVENTORY"   // methodology.md does not cite inputs/inventory.md
	CodeCriteria       = "E-CRITERIA-INVALID"        // done_criteria.yaml does not parse or validate
	CodeCriteriaKind   = "E-CRITERIA-KIND"           // a judgement where a structural check belongs
	CodeVacuous        = "E-CRITERIA-VACUOUS"        // a check that can never fail
	CodeImpossible     = "E-CRITERIA-IMPOSSIBLE"     // a check that can never pass
	CodeCriteriaPath   = "E-CRITERIA-PATH"           // a check that looks outside the deliverable
	CodeCriteriaAbsent = "E-CRITERIA-MISSING"        // no done_criteria.yaml
	CodePath           = "E-HARNESS-PATH"            // not a whitelisted harness path
	CodeMissing        = "E-HARNESS-MISSING"         // a required harness file is absent
	CodeDirect         = "E-HARNESS-DIRECT"          // a write under harness/ by an ordinary tool
	CodeContent        = "E-HARNESS-CONTENT"         // content that is not usable text
	CodeReason         = "E-HARNESS-REASON"          // a write without a reason
)

// Problem is one finding of the static checks. It is an error, so a single
// Problem can be returned as one.
type Problem struct {
	Code string `json:"code"`
	// Constraint is the constraint id the problem is about, if any.
	Constraint string `json:"constraint,omitempty"`
	// File is the harness-relative file the problem is about, if any.
	File string `json:"file,omitempty"`
	Msg  string `json:"message"`
}

func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.Code)
	b.WriteString(": ")
	if p.File != "" {
		b.WriteString(p.File + ": ")
	}
	if p.Constraint != "" {
		b.WriteString(p.Constraint + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

func problem(code, id, file, format string, a ...any) Problem {
	return Problem{Code: code, Constraint: id, File: file, Msg: fmt.Sprintf(format, a...)}
}

// CheckSources checks that every constraint is traced to the user's words
// and that all six kinds were considered (DA-B3). sources maps a source
// name (TaskSource, AnswersSource(n)) to its text.
//
// A constraint is refused (E-CONSTRAINT-UNSOURCED) when its source is not
// the task or a clarification answer, is not in sources, or its quote is
// shorter than MinQuoteWords or does not occur in that source. Quotes are
// compared after normalising case, whitespace, quotation marks, dashes
// and full-width forms, so copying through a model's rendering does not
// break them; anything else must be verbatim. That is the point: "domain
// common sense" and training memory have no quote, so they cannot become
// constraints.
//
// A kind may be recorded as NoneStated only with a quote from a
// clarification answer (E-CONSTRAINT-NONE-UNASKED): the absence counts only
// once the user was asked about it. Silence in the raw task is not an
// answer.
func CheckSources(cs []Constraint, sources map[string]string) []Problem {
	var ps []Problem
	norm := map[string]string{}
	for name, text := range sources {
		norm[name] = normalize(text)
	}
	seen := map[string]bool{}
	stated := map[Kind]bool{}
	none := map[Kind]string{}
	for i, c := range cs {
		id := c.ID
		switch {
		case !idRe.MatchString(c.ID):
			ps = append(ps, problem(CodeConstraint, c.ID, "", "constraint %d: id %q must be C followed by a number, such as C1", i+1, c.ID))
			if id == "" {
				id = fmt.Sprintf("#%d", i+1)
			}
		case seen[c.ID]:
			ps = append(ps, problem(CodeConstraint, id, "", "the id is used twice"))
		}
		seen[c.ID] = true
		if !c.Kind.Valid() {
			ps = append(ps, problem(CodeConstraint, id, "", "unknown kind %q; use one of %s", c.Kind, kindList()))
		}
		if strings.TrimSpace(c.Text) == "" {
			ps = append(ps, problem(CodeConstraint, id, "", "text is empty: state the constraint, or write %q", NoneStated))
		}
		// A faulty constraint still counts as considering its kind, so one
		// fault is reported once, not again as a missing kind.
		p, quoted := checkQuote(id, c, norm)
		if !quoted {
			ps = append(ps, p)
		}
		if c.IsNone() {
			if _, ok := AnswersRound(c.Source); !ok && quoted {
				ps = append(ps, problem(CodeNoneUnasked, id, "",
					"%q for %s needs a quote from a clarification answer showing the user was asked about it; silence in the task is not an answer — ask, or state the constraint",
					NoneStated, c.Kind))
			}
			none[c.Kind] = id
		} else {
			stated[c.Kind] = true
		}
	}
	for _, k := range Kinds {
		if stated[k] && none[k] != "" {
			ps = append(ps, problem(CodeConstraint, none[k], "", "%s is marked %q but other constraints state it; drop one", k, NoneStated))
		}
		if !stated[k] && none[k] == "" {
			ps = append(ps, problem(CodeKindMissing, "", "",
				"no constraint of kind %s: state one with the user's words, or record %q quoting the clarification answer", k, NoneStated))
		}
	}
	return ps
}

// checkQuote checks c's source and quote against the normalised sources.
func checkQuote(id string, c Constraint, norm map[string]string) (Problem, bool) {
	fail := func(format string, a ...any) (Problem, bool) {
		return problem(CodeUnsourced, id, "", format, a...), false
	}
	switch {
	case strings.TrimSpace(c.Source) == "":
		return fail("no source: quote the user's words from %s or a clarification answer (inputs/clarify/round_N_answers.md); domain knowledge is not a source", TaskSource)
	case !isSource(c.Source):
		return fail("source %q is not the task (%s) or a clarification answer (inputs/clarify/round_N_answers.md); only the user's words are sources", c.Source, TaskSource)
	}
	text, ok := norm[c.Source]
	if !ok {
		return fail("source %s is not available", c.Source)
	}
	q := normalize(c.Quote)
	if q == "" {
		return fail("no quote: copy the user's words from %s that this constraint comes from", c.Source)
	}
	if n := quoteWords(q); n < MinQuoteWords {
		return fail("the quote %q is too short (%d of at least %d words) to show where the constraint comes from", c.Quote, n, MinQuoteWords)
	}
	if !strings.Contains(text, q) {
		var elsewhere []string
		for name, t := range norm {
			if name != c.Source && strings.Contains(t, q) {
				elsewhere = append(elsewhere, name)
			}
		}
		if len(elsewhere) > 0 {
			sort.Strings(elsewhere)
			return fail("the quote %q is not in %s (it is in %s); name the source it comes from", c.Quote, c.Source, strings.Join(elsewhere, ", "))
		}
		return fail("the quote %q is not in %s: copy the user's words exactly", c.Quote, c.Source)
	}
	return Problem{}, true
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// normalize folds what a faithful copy may change: letter case, runs of
// whitespace (and line breaks between Chinese or Japanese characters, where
// a line break is not a space), double quotation marks of any style (they
// are dropped), typographic apostrophes and dashes, full-width forms, and
// invisible characters.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	prev := rune(-1)
	for _, r := range strings.ReplaceAll(s, "\u2026", "...") {
		switch r {
		case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad':
			continue // zero-width and soft hyphen: invisible
		}
		r = fold(r)
		if r == '"' {
			// Double quotation marks are dropped: whether a copy keeps
			// the user's marks around a phrase says nothing about where
			// the phrase came from.
			continue
		}
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space && !(wide(prev) && wide(r)) {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// fold maps one rune to its comparison form.
func fold(r rune) rune {
	switch r {
	case '\u201c', '\u201d', '\u201e', '\u201f', '\u00ab', '\u00bb', '\u300c', '\u300d', '\u300e', '\u300f', '\u2033':
		return '"'
	case '\u2018', '\u2019', '\u201a', '\u201b', '\u2032', '\u2039', '\u203a':
		return '\''
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-'
	case '\u3002':
		return '.'
	case '\u3001':
		return ','
	}
	if r >= '\uff01' && r <= '\uff5e' { // full-width ASCII forms
		r -= 0xfee0
	}
	return unicode.ToLower(r)
}

// wide reports a character of a script written without spaces.
func wide(r rune) bool {
	return r >= 0 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r))
}

// quoteWords counts the words of a normalised quote: runs of letters and
// digits, and one word per two characters of Chinese or Japanese.
func quoteWords(q string) int {
	words, wideChars, in := 0, 0, false
	for _, r := range q {
		switch {
		case wide(r):
			wideChars++
			in = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !in {
				words++
			}
			in = true
		default:
			in = false
		}
	}
	return words + wideChars/2
}
