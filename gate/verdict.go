package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Decision is the Reviewer's overall call.
type Decision string

// The decisions.
const (
	Pass          Decision = "pass"
	NeedsRevision Decision = "needs_revision"
	Unsafe        Decision = "unsafe"
)

// Severity grades one issue.
type Severity string

// The severities.
const (
	Critical Severity = "critical" // blocks acceptance on its own
	Major    Severity = "major"
	Minor    Severity = "minor"
)

// Category says what kind of fault an issue is.
type Category string

// The categories.
const (
	Fabrication Category = "fabrication" // content with no source: invented facts, figures, quotes (always critical)
	Missing     Category = "missing"     // something the task asks for is absent
	Format      Category = "format"      // the form is wrong: file type, structure, length
	Quality     Category = "quality"     // present and sourced, but poor
	Safety      Category = "safety"      // harmful or sensitive content
	Other       Category = "other"
)

var (
	decisions  = []Decision{Pass, NeedsRevision, Unsafe}
	severities = []Severity{Critical, Major, Minor}
	categories = []Category{Fabrication, Missing, Format, Quality, Safety, Other}
)

// Issue is one fault the Reviewer found.
type Issue struct {
	Severity Severity `json:"severity"`
	// Location names a file of the run (and a line or section within it),
	// so anyone can go and look: "output/report.md:42",
	// "output/report.md § Costs".
	Location    string   `json:"location"`
	Description string   `json:"description"`
	Category    Category `json:"category"`
}

// EffectiveSeverity is the severity the host acts on: fabrication is
// critical whatever the Reviewer wrote (DA-B1).
func (i Issue) EffectiveSeverity() Severity {
	if i.Category == Fabrication {
		return Critical
	}
	return i.Severity
}

// Verdict is the Reviewer's structured answer (DA-A2, DC5).
type Verdict struct {
	Verdict Decision `json:"verdict"`
	Issues  []Issue  `json:"issues"`
	Summary string   `json:"summary"`
}

// Passed reports whether the work may go on. It fails closed: only a
// "pass" with no critical issue (counting fabrication as critical) passes;
// anything else — needs_revision, unsafe, an unknown value, the zero
// Verdict — does not.
func (v Verdict) Passed() bool {
	if v.Verdict != Pass {
		return false
	}
	for _, i := range v.Issues {
		if i.EffectiveSeverity() == Critical {
			return false
		}
	}
	return true
}

// The wire form, with pointers so that a missing field can be told from an
// empty one.
type rawVerdict struct {
	Verdict *Decision   `json:"verdict"`
	Issues  *[]rawIssue `json:"issues"`
	Summary *string     `json:"summary"`
}

type rawIssue struct {
	Severity    *Severity `json:"severity"`
	Location    *string   `json:"location"`
	Description *string   `json:"description"`
	Category    *Category `json:"category"`
}

// ParseVerdict reads the Reviewer's submission strictly. It refuses: text
// that is not exactly one JSON object; unknown or repeated fields; a
// missing field (verdict, issues — an empty list is fine for a pass —,
// summary, and all four fields of each issue); an unknown verdict,
// severity or category; an empty summary or description; an issue whose
// location names no file in files; and a needs_revision or unsafe verdict
// with no issue to act on. The error lists every fault, in words the
// Reviewer can fix.
//
// files holds the run-relative paths a location may name. Include the
// paths the contract expects even when the file does not exist, so that
// "the report is missing" can point at it.
func ParseVerdict(raw json.RawMessage, files []string) (Verdict, error) {
	fail := func(format string, args ...any) (Verdict, error) {
		return Verdict{}, fmt.Errorf("gate: verdict: "+format, args...)
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fail("want exactly one JSON object {\"verdict\", \"issues\", \"summary\"}, got %s", clip(string(trimmed), 40))
	}
	if err := noDuplicateKeys(trimmed); err != nil {
		return fail("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var r rawVerdict
	if err := dec.Decode(&r); err != nil {
		return fail("not valid: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail("more than one JSON value; submit exactly one verdict")
	}
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	var v Verdict
	switch {
	case r.Verdict == nil:
		bad(`"verdict" is missing`)
	case !slices.Contains(decisions, *r.Verdict):
		bad(`"verdict" is %q; want pass, needs_revision or unsafe`, *r.Verdict)
	default:
		v.Verdict = *r.Verdict
	}
	switch {
	case r.Summary == nil:
		bad(`"summary" is missing`)
	case strings.TrimSpace(*r.Summary) == "":
		bad(`"summary" is empty`)
	default:
		v.Summary = *r.Summary
	}
	if r.Issues == nil {
		bad(`"issues" is missing (use [] when there are none)`)
	} else {
		v.Issues = []Issue{}
		for n, ri := range *r.Issues {
			n++
			var is Issue
			switch {
			case ri.Severity == nil:
				bad("issue %d: \"severity\" is missing", n)
			case !slices.Contains(severities, *ri.Severity):
				bad("issue %d: severity %q; want critical, major or minor", n, *ri.Severity)
			default:
				is.Severity = *ri.Severity
			}
			switch {
			case ri.Category == nil:
				bad("issue %d: \"category\" is missing", n)
			case !slices.Contains(categories, *ri.Category):
				bad("issue %d: category %q; want fabrication, missing, format, quality, safety or other", n, *ri.Category)
			default:
				is.Category = *ri.Category
			}
			switch {
			case ri.Description == nil:
				bad("issue %d: \"description\" is missing", n)
			case strings.TrimSpace(*ri.Description) == "":
				bad("issue %d: \"description\" is empty", n)
			default:
				is.Description = *ri.Description
			}
			switch {
			case ri.Location == nil:
				bad("issue %d: \"location\" is missing", n)
			case !namesFile(*ri.Location, files):
				bad("issue %d: location %q names no file of this run; name one of these in it: %s", n, clip(*ri.Location, 60), fileHint(files))
			default:
				is.Location = *ri.Location
			}
			v.Issues = append(v.Issues, is)
		}
	}
	if len(errs) == 0 && v.Verdict != Pass && len(v.Issues) == 0 {
		bad("a %s verdict needs at least one issue saying what to change", v.Verdict)
	}
	if len(errs) > 0 {
		return fail("%s", strings.Join(errs, "; "))
	}
	return v, nil
}

// noDuplicateKeys refuses an object with a repeated key at any depth:
// encoding/json would silently keep the last one, so {"verdict":"unsafe",
// "verdict":"pass"} would read as a pass.
func noDuplicateKeys(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	var walk func() error
	walk = func() error {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("not valid JSON: %w", err)
		}
		switch t {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return fmt.Errorf("not valid JSON: %w", err)
				}
				k, _ := kt.(string)
				if seen[k] {
					return fmt.Errorf("field %q appears twice in one object; give each field once", k)
				}
				seen[k] = true
				if err := walk(); err != nil {
					return err
				}
			}
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
		default:
			return nil
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return fmt.Errorf("not valid JSON: %w", err)
		}
		return nil
	}
	return walk()
}

// namesFile reports whether loc names one of files: the file's path, or a
// trailing part of it cut at a "/", appears in loc as a whole path (not
// inside a longer name). "output/report.md:12", "report.md § Costs" and
// "section 2 of report.md." all name "work/r/output/report.md".
func namesFile(loc string, files []string) bool {
	loc = dotSlash.ReplaceAllString(loc, "$1")
	for _, f := range files {
		f = cleanPath(f)
		for f != "" && f != "." {
			if occursAsPath(loc, f) {
				return true
			}
			i := strings.IndexByte(f, '/')
			if i < 0 {
				break
			}
			f = f[i+1:]
		}
	}
	return false
}

// dotSlash matches a "./" that starts a path.
var dotSlash = regexp.MustCompile(`(^|[^\w./-])\./`)

func occursAsPath(loc, name string) bool {
	for off := 0; off < len(loc); {
		i := strings.Index(loc[off:], name)
		if i < 0 {
			return false
		}
		start, end := off+i, off+i+len(name)
		before := start == 0 || !pathByte(loc[start-1]) && loc[start-1] != '.'
		after := end == len(loc) || !pathByte(loc[end]) && !(loc[end] == '.' && end+1 < len(loc) && pathByte(loc[end+1]))
		if before && after {
			return true
		}
		off = start + 1
	}
	return false
}

// pathByte reports whether c can continue a path name.
func pathByte(c byte) bool {
	return c == '/' || c == '_' || c == '-' || c >= 0x80 || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))
}

func fileHint(files []string) string {
	if len(files) == 0 {
		return "(no files were given to the review)"
	}
	s := slices.Clone(files)
	slices.Sort(s)
	if len(s) > 6 {
		return strings.Join(s[:6], ", ") + ", …"
	}
	return strings.Join(s, ", ")
}

// Outcome is what the host does with a review: accept the work or not, and
// why, in words fit for the journal and for the worker.
type Outcome struct {
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason"`
}

// ReviewOutcome turns a review into an outcome, failing closed (DA-B1,
// NOTES: "a semantic review that passed when the reviewer errored"): an
// error (a crash, malformed JSON, a cancelled or timed-out call) or a nil
// verdict (the reviewer never submitted) is not accepted, and neither is a
// verdict that does not pass.
func ReviewOutcome(v *Verdict, err error) Outcome {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Outcome{Reason: "not accepted: the reviewer timed out before giving a verdict"}
	case errors.Is(err, context.Canceled):
		return Outcome{Reason: "not accepted: the review was cancelled before a verdict"}
	case err != nil:
		return Outcome{Reason: "not accepted: the review failed: " + err.Error()}
	case v == nil:
		return Outcome{Reason: "not accepted: the reviewer submitted no verdict"}
	case v.Passed():
		return Outcome{Accepted: true, Reason: "accepted: " + v.Summary}
	}
	var b strings.Builder
	switch v.Verdict {
	case Pass:
		b.WriteString("not accepted: the reviewer said pass but reported a critical issue")
	case NeedsRevision:
		b.WriteString("not accepted: the reviewer asks for revision")
	case Unsafe:
		b.WriteString("not accepted: the reviewer judged the work unsafe")
	default:
		fmt.Fprintf(&b, "not accepted: %q is not a verdict", v.Verdict)
	}
	if v.Summary != "" {
		b.WriteString(": " + v.Summary)
	}
	for _, i := range v.Issues {
		fmt.Fprintf(&b, "\n- [%s, %s] %s: %s", i.EffectiveSeverity(), i.Category, i.Location, i.Description)
	}
	return Outcome{Reason: b.String()}
}
