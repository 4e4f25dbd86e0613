package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fractal-harness/fractal/contract"
)

// codes returns the problems' codes, in order.
func codes(ps []Problem) []Code {
	var out []Code
	for _, p := range ps {
		out = append(out, p.Code)
	}
	return out
}

// DA-A1: the five signals are distinct values; only an exact name parses;
// continue alone keeps the session; context_exhausted is the host's and
// becomes a handoff.
func TestSignals(t *testing.T) {
	for _, s := range Signals {
		got, err := ParseSignal(string(s))
		if err != nil || got != s {
			t.Errorf("ParseSignal(%q) = %q, %v", s, got, err)
		}
		if s.EndsSession() == (s == Continue) {
			t.Errorf("%s: EndsSession = %v", s, s.EndsSession())
		}
	}
	// Free text never becomes a signal, however close.
	for _, s := range []string{"", "done", "Blocked", " handoff", "handoff\n", "I am blocked", "declare-done", "hand off"} {
		if _, err := ParseSignal(s); err == nil {
			t.Errorf("ParseSignal(%q) accepted free text", s)
		}
	}
	if ContextExhausted.FromModel() || !Blocked.FromModel() {
		t.Error("FromModel wrong")
	}
	if ContextExhausted.Effective() != Handoff || Blocked.Effective() != Blocked || Blocked == Handoff {
		t.Error("Effective wrong")
	}
	if Signal("x").EndsSession() {
		t.Error("unknown signal ends a session")
	}
}

var (
	report = "# Market brief\n\nRevenue grew 12% in Q3, driven by “new customers”.\nCosts fell   by 3%.\n\nSources: sales.xlsx\n"
	files  = map[string]string{"work/root/output/report.md": report}
	ctr    = contract.New("a market brief", []contract.Check{
		{Kind: contract.FileExists, Path: "output/report.md"},
		{Kind: contract.Rubric, Text: "states the revenue trend"},
	})
	constraints = []string{"audience: the sales team", "must include the Q3 revenue"}
)

func item(kind ItemKind, n int, quote string, line int) SelfItem {
	return SelfItem{Kind: kind, Index: n, Pass: true, Quote: quote,
		Source: Source{File: "work/root/output/report.md", Line: line, Origin: "sales.xlsx"}}
}

func honest() []SelfItem {
	return []SelfItem{
		item(KindCheck, 1, "Market brief", 1),
		// Typographic quotes in the file, straight ones in the quote; a
		// line break and double spaces folded.
		item(KindCheck, 2, `Revenue grew 12% in Q3, driven by "new customers". Costs fell by 3%.`, 3),
		item(KindConstraint, 1, "Market brief", 1),
		item(KindConstraint, 2, "Revenue grew 12% in Q3", 3),
	}
}

// DA-B1: an honest, complete self-assessment passes.
func TestSelfAssessmentHonest(t *testing.T) {
	if ps := CheckSelfAssessment(ctr, constraints, honest(), files); ps != nil {
		t.Fatalf("honest assessment refused: %v", ps)
	}
	// "./" and doubled slashes in the file name are the same file.
	its := honest()
	its[0].Source.File = "./work/root//output/report.md"
	if ps := CheckSelfAssessment(ctr, constraints, its, files); ps != nil {
		t.Fatalf("path spelling refused: %v", ps)
	}
}

// DA-B1: every way a self-assessment can fail has its own code.
func TestSelfAssessmentProblems(t *testing.T) {
	cases := []struct {
		name   string
		edit   func([]SelfItem) []SelfItem
		want   []Code
		inText string
	}{
		{"missing check", func(s []SelfItem) []SelfItem { return s[1:] }, []Code{ESelfMissing}, "check 1 (file_exists output/report.md)"},
		{"missing constraint", func(s []SelfItem) []SelfItem { return s[:3] }, []Code{ESelfMissing}, "constraint 2"},
		{"failed", func(s []SelfItem) []SelfItem { s[1].Pass = false; return s }, []Code{ESelfFailed}, "as failing"},
		{"no quote", func(s []SelfItem) []SelfItem { s[1].Quote = " \n "; return s }, []Code{ESelfNoQuote}, "no quote"},
		{"fabricated quote", func(s []SelfItem) []SelfItem { s[1].Quote = "Revenue grew 15% in Q3"; return s }, []Code{ESelfQuoteAbsent}, "is not in"},
		{"case matters", func(s []SelfItem) []SelfItem { s[1].Quote = "revenue grew 12% in Q3"; return s }, []Code{ESelfQuoteAbsent}, "case-sensitive"},
		{"wrong line", func(s []SelfItem) []SelfItem { s[3].Source.Line = 4; return s }, []Code{ESelfWrongLine}, "begins on line 3, not line 4"},
		{"no line", func(s []SelfItem) []SelfItem { s[3].Source.Line = 0; return s }, []Code{ESelfNoSource}, "no line"},
		{"no file", func(s []SelfItem) []SelfItem { s[0].Source.File = ""; return s }, []Code{ESelfNoSource}, "names no file"},
		{"file does not exist", func(s []SelfItem) []SelfItem { s[0].Source.File = "output/other.md"; return s }, []Code{ESelfNoSource}, "does not exist"},
		{"no origin", func(s []SelfItem) []SelfItem { s[2].Source.Origin = ""; return s }, []Code{ESelfNoSource}, "no origin"},
		// DA-B3: memory is not a source.
		{"memory as origin", func(s []SelfItem) []SelfItem { s[2].Source.Origin = " General Knowledge "; return s }, []Code{ESelfNoSource}, "not a source"},
		{"duplicate", func(s []SelfItem) []SelfItem { return append(s, item(KindCheck, 2, "Market brief", 1)) }, []Code{ESelfDuplicate}, "items 2 and 5"},
		{"unknown number", func(s []SelfItem) []SelfItem { return append(s, item(KindCheck, 3, "Market brief", 1)) }, []Code{ESelfUnknown}, "numbered 1 to 2"},
		{"zero-based number", func(s []SelfItem) []SelfItem { s[0].Index = 0; return s }, []Code{ESelfUnknown, ESelfMissing}, "no check 0"},
		{"unknown kind", func(s []SelfItem) []SelfItem { s[0].Kind = "criterion"; return s }, []Code{ESelfUnknown, ESelfMissing}, `"check" or "constraint"`},
		{"nothing at all", func([]SelfItem) []SelfItem { return nil }, []Code{ESelfMissing, ESelfMissing, ESelfMissing, ESelfMissing}, ""},
	}
	for _, c := range cases {
		ps := CheckSelfAssessment(ctr, constraints, c.edit(honest()), files)
		if !slices.Equal(codes(ps), c.want) {
			t.Errorf("%s: codes %v, want %v (%v)", c.name, codes(ps), c.want, ps)
			continue
		}
		if !strings.Contains(ps[0].Message, c.inText) {
			t.Errorf("%s: message %q lacks %q", c.name, ps[0].Message, c.inText)
		}
	}
}

// DA-B1: a quote that appears on several lines may name any of them.
func TestSelfAssessmentRepeatedQuote(t *testing.T) {
	f := map[string]string{"a.md": "total: 4\nnothing\ntotal: 4\n"}
	c := contract.New("x", []contract.Check{{Kind: contract.FileExists, Path: "a.md"}})
	for line, ok := range map[int]bool{1: true, 2: false, 3: true} {
		it := SelfItem{Kind: KindCheck, Index: 1, Pass: true, Quote: "total: 4", Source: Source{File: "a.md", Line: line, Origin: "computed"}}
		ps := CheckSelfAssessment(c, nil, []SelfItem{it}, f)
		if ok != (ps == nil) {
			t.Errorf("line %d: %v", line, ps)
		}
		if !ok && !strings.Contains(ps[0].Message, "line 1 or 3") {
			t.Errorf("line %d: %v", line, ps)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"  a \n\t b  ":              "a b",
		"“x” ‘y’ «z»":               `"x" 'y' "z"`,
		"a — b – c":                 "a - b - c",
		"wait…":                     "wait...",
		"zero\u200bwidth\u00a0nbsp": "zerowidth nbsp",
	} {
		if got := normalize(in).text; got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

const input = `Quarterly sales notes
Region North: revenue 1.2m, up 4%
Region South: revenue 0.8m, down 2%
Region East: revenue 2.1m, flat
Region West: revenue 1.5m, up 9%
Key accounts: Acme, Globex, Initech
Churn rose among small accounts
New product launched in August
Pricing unchanged since January
Headcount: 42 sales staff
`

// DA-B1: the input copied back, or nearly so, is flagged; a real report
// quoting a few of its lines and an honest extract are not.
func TestSuspiciousCopy(t *testing.T) {
	in := map[string]string{"inputs/notes.txt": input, "inputs/other.txt": "unrelated\ntext here\n"}
	lines := strings.Split(strings.TrimSpace(input), "\n")
	cases := []struct {
		name string
		d    string
		copy bool
	}{
		{"verbatim copy", input, true},
		{"copy reflowed with bullets and a title", "# Report\n\n" + "- " + strings.Join(lines, "\n-   ") + "\n", true},
		{"copy with one line changed", strings.Replace(input, "Headcount: 42 sales staff", "Headcount: 43", 1), true},
		{"copy with typographic quotes and dashes", strings.ReplaceAll(input, "-", "—"), true},
		{"report quoting two lines", "# Q3 summary\nSales held up in most regions.\n" + lines[1] + "\n" + lines[4] + "\nThe West grew fastest; the South needs attention.\nChurn among small accounts is the main risk.\nWe recommend a retention offer.\n", false},
		{"extract of two rows", lines[1] + "\n" + lines[4] + "\n", false},
		{"input plus a real analysis", input + strings.Repeat("Analysis line with new content number x\n", 3) + "Finding one\nFinding two\n", false},
	}
	for _, c := range cases {
		ps := Suspicious(c.d, in)
		got := slices.Contains(codes(ps), ESuspectCopy)
		if got != c.copy {
			t.Errorf("%s: copy flagged = %v, want %v (%v)", c.name, got, c.copy, ps)
		}
		if got && ps[0].Item != "inputs/notes.txt" {
			t.Errorf("%s: item %q", c.name, ps[0].Item)
		}
	}
}

// DA-B1: a template with its placeholders left in is flagged, one problem
// per kind, naming the lines; ordinary words are not.
func TestSuspiciousPlaceholders(t *testing.T) {
	tmpl := "# Report for [Insert client name]\n\nSummary: TODO\nRevenue: {{ revenue }}\nLorem ipsum dolor sit amet.\nContact: <your email>\nPhone: XXX-XXXX\nOwner: <placeholder>\nDate: TBD\n"
	ps := Suspicious(tmpl, nil)
	want := []Code{ESuspectPlaceholder, ESuspectPlaceholder, ESuspectPlaceholder, ESuspectPlaceholder, ESuspectPlaceholder}
	if !slices.Equal(codes(ps), want) {
		t.Fatalf("codes %v: %v", codes(ps), ps)
	}
	if ps[0].Item != "line 3" || !strings.Contains(ps[0].Message, "lines 3, 7, 9") {
		t.Errorf("marker problem: %+v", ps[0])
	}
	clean := "# Report\n\nOur todo list is short. The XXXL size sold out; the tbd-free plan {braces} and [1] references and <b>bold</b> are fine.\n"
	if ps := Suspicious(clean, nil); ps != nil {
		t.Errorf("clean text flagged: %v", ps)
	}
}

func TestSuspiciousEmpty(t *testing.T) {
	for _, d := range []string{"", " \n\t\n", "\u00a0"} {
		if ps := Suspicious(d, map[string]string{"a": ""}); !slices.Equal(codes(ps), []Code{ESuspectEmpty}) {
			t.Errorf("%q: %v", d, ps)
		}
	}
}

var runFiles = []string{"work/root/output/report.md", "inputs/sales.xlsx"}

// DA-A2, DC5: strict parsing of the Reviewer's verdict.
func TestParseVerdict(t *testing.T) {
	ok := []struct{ name, raw string }{
		{"pass, no issues", `{"verdict":"pass","issues":[],"summary":"fine"}`},
		{"full path and line", `{"verdict":"needs_revision","issues":[{"severity":"major","location":"work/root/output/report.md:12","description":"no Q4","category":"missing"}],"summary":"s"}`},
		{"trailing part of the path", `{"verdict":"needs_revision","issues":[{"severity":"minor","location":"output/report.md § Costs","description":"d","category":"format"}],"summary":"s"}`},
		{"base name in a sentence", `{"verdict":"unsafe","issues":[{"severity":"critical","location":"section 2 of report.md.","description":"d","category":"safety"}],"summary":"s"}`},
		{"dot slash", `{"verdict":"needs_revision","issues":[{"severity":"minor","location":"./output/report.md#costs","description":"d","category":"quality"}],"summary":"s"}`},
		{"white space around", " \n{\"verdict\":\"pass\",\"issues\":[],\"summary\":\"fine\"}\n "},
	}
	for _, c := range ok {
		if _, err := ParseVerdict(json.RawMessage(c.raw), runFiles); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	issue := func(fields string) string {
		return `{"verdict":"needs_revision","issues":[{` + fields + `}],"summary":"s"}`
	}
	bad := []struct{ name, raw, want string }{
		{"empty", ``, "exactly one JSON object"},
		{"null", `null`, "exactly one JSON object"},
		{"array of verdicts", `[{"verdict":"pass","issues":[],"summary":"s"}]`, "exactly one JSON object"},
		{"two verdicts", `{"verdict":"pass","issues":[],"summary":"s"}{"verdict":"pass","issues":[],"summary":"s"}`, "more than one"},
		{"repeated verdict field", `{"verdict":"unsafe","verdict":"pass","issues":[],"summary":"s"}`, `"verdict" appears twice`},
		{"malformed", `{"verdict":"pass",`, "not valid"},
		{"prose", `The work looks good. PASS`, "exactly one JSON object"},
		{"unknown field", `{"verdict":"pass","issues":[],"summary":"s","confidence":0.9}`, "unknown field"},
		{"missing verdict", `{"issues":[],"summary":"s"}`, `"verdict" is missing`},
		{"missing issues", `{"verdict":"pass","summary":"s"}`, `"issues" is missing`},
		{"missing summary", `{"verdict":"pass","issues":[]}`, `"summary" is missing`},
		{"empty summary", `{"verdict":"pass","issues":[],"summary":"  "}`, `"summary" is empty`},
		{"unknown verdict", `{"verdict":"approved","issues":[],"summary":"s"}`, `"approved"`},
		{"verdict in capitals", `{"verdict":"PASS","issues":[],"summary":"s"}`, `"PASS"`},
		{"revision with no issue", `{"verdict":"needs_revision","issues":[],"summary":"s"}`, "at least one issue"},
		{"unknown severity", issue(`"severity":"blocker","location":"report.md","description":"d","category":"missing"`), `"blocker"`},
		{"unknown category", issue(`"severity":"minor","location":"report.md","description":"d","category":"style"`), `"style"`},
		{"missing location", issue(`"severity":"minor","description":"d","category":"missing"`), `"location" is missing`},
		{"missing description", issue(`"severity":"minor","location":"report.md","category":"missing"`), `"description" is missing`},
		{"unknown issue field", issue(`"severity":"minor","location":"report.md","description":"d","category":"missing","fix":"x"`), "unknown field"},
		{"location names no file", issue(`"severity":"minor","location":"summary.md:3","description":"d","category":"missing"`), "names no file"},
		{"location inside a longer name", issue(`"severity":"minor","location":"old-report.md","description":"d","category":"missing"`), "names no file"},
		{"location a vague section", issue(`"severity":"minor","location":"the introduction","description":"d","category":"missing"`), "names no file"},
	}
	for _, c := range bad {
		_, err := ParseVerdict(json.RawMessage(c.raw), runFiles)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	// Every fault is reported at once.
	_, err := ParseVerdict(json.RawMessage(`{"verdict":"maybe","issues":[{"severity":"x","location":"nowhere","description":"","category":"y"}],"summary":""}`), runFiles)
	for _, w := range []string{`"maybe"`, `"x"`, `"y"`, "nowhere", `"description" is empty`, `"summary" is empty`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("joined error lacks %q: %v", w, err)
		}
	}
}

// DA-B1: Passed fails closed; fabrication is critical whatever the
// Reviewer called it.
func TestPassed(t *testing.T) {
	is := func(s Severity, c Category) []Issue {
		return []Issue{{Severity: s, Category: c, Location: "report.md", Description: "d"}}
	}
	cases := []struct {
		name string
		v    Verdict
		pass bool
	}{
		{"clean pass", Verdict{Verdict: Pass, Issues: []Issue{}, Summary: "s"}, true},
		{"pass with minor", Verdict{Verdict: Pass, Issues: is(Minor, Quality)}, true},
		{"pass with major", Verdict{Verdict: Pass, Issues: is(Major, Format)}, true},
		{"pass with critical", Verdict{Verdict: Pass, Issues: is(Critical, Missing)}, false},
		{"pass with minor fabrication", Verdict{Verdict: Pass, Issues: is(Minor, Fabrication)}, false},
		{"needs revision", Verdict{Verdict: NeedsRevision, Issues: is(Minor, Quality)}, false},
		{"unsafe", Verdict{Verdict: Unsafe, Issues: is(Critical, Safety)}, false},
		{"zero verdict", Verdict{}, false},
		{"unknown verdict", Verdict{Verdict: "PASS"}, false},
	}
	for _, c := range cases {
		if c.v.Passed() != c.pass {
			t.Errorf("%s: Passed = %v", c.name, !c.pass)
		}
	}
	if (Issue{Severity: Minor, Category: Fabrication}).EffectiveSeverity() != Critical {
		t.Error("fabrication not critical")
	}
}

// DA-B1, NOTES ("a semantic review that passed when the reviewer
// errored"): a reviewer that crashes, never submits, times out or submits
// malformed JSON is not accepted.
func TestReviewOutcomeFailsClosed(t *testing.T) {
	malformed := func() (*Verdict, error) {
		v, err := ParseVerdict(json.RawMessage(`{"verdict":"pass"`), runFiles)
		return &v, err
	}
	mv, merr := malformed()
	good := &Verdict{Verdict: Pass, Issues: []Issue{}, Summary: "all checks hold"}
	cases := []struct {
		name   string
		v      *Verdict
		err    error
		accept bool
		want   string
	}{
		{"crash", nil, errors.New("reviewer process exited: signal killed"), false, "the review failed"},
		{"crash after a verdict", good, errors.New("stream reset"), false, "the review failed"},
		{"never submits", nil, nil, false, "no verdict"},
		{"timeout", nil, fmt.Errorf("reviewer: %w", context.DeadlineExceeded), false, "timed out"},
		{"cancelled", nil, context.Canceled, false, "cancelled"},
		{"malformed JSON", mv, merr, false, "not valid"},
		{"needs revision", &Verdict{Verdict: NeedsRevision, Summary: "thin", Issues: []Issue{{Severity: Major, Category: Missing, Location: "report.md", Description: "no Q4"}}}, nil, false, "no Q4"},
		{"pass hiding a fabrication", &Verdict{Verdict: Pass, Summary: "ok", Issues: []Issue{{Severity: Minor, Category: Fabrication, Location: "report.md:3", Description: "invented figure"}}}, nil, false, "[critical, fabrication]"},
		{"unsafe", &Verdict{Verdict: Unsafe, Summary: "leaks data"}, nil, false, "unsafe"},
		{"pass", good, nil, true, "all checks hold"},
	}
	for _, c := range cases {
		o := ReviewOutcome(c.v, c.err)
		if o.Accepted != c.accept || !strings.Contains(o.Reason, c.want) {
			t.Errorf("%s: %+v, want accepted=%v and %q", c.name, o, c.accept, c.want)
		}
	}
}

// DC5: the result's own rules.
func TestResultValidate(t *testing.T) {
	cases := []struct {
		r    Result
		want string // "" = valid
	}{
		{Result{Status: StatusCompleted, Summary: "made the brief", Artifacts: []string{"output/brief.md"}}, ""},
		{Result{Status: StatusPartial, Summary: "half", ResumeHint: "start at section 3"}, ""},
		{Result{Status: StatusNeedsAuth, Summary: "needs the CRM login"}, ""},
		{Result{Status: StatusFailed, Summary: "the input is unreadable"}, ""},
		{Result{Status: "done", Summary: "x"}, `status "done"`},
		{Result{Status: StatusCompleted, Summary: " ", Artifacts: []string{"a.md"}}, "summary is empty"},
		{Result{Status: StatusCompleted, Summary: "x"}, "lists no artifacts"},
		{Result{Status: StatusCompleted, Summary: "x", Artifacts: []string{"/etc/passwd"}}, "not a path inside the run"},
		{Result{Status: StatusCompleted, Summary: "x", Artifacts: []string{"a/../../b"}}, "not a path inside the run"},
		{Result{Status: StatusCompleted, Summary: "x", Artifacts: []string{"a.md", "./a.md"}}, "listed twice"},
		{Result{Status: StatusCompleted, Summary: "x", Artifacts: []string{""}}, "artifact 1 is empty"},
		{Result{Status: StatusBlocked, Summary: "x"}, "resume_hint"},
		{Result{Status: StatusTimeout, Summary: "x"}, "resume_hint"},
	}
	for _, c := range cases {
		err := c.r.Validate()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.r, err, c.want)
		}
	}
}

// DC5: the delivery gate: every SOP step accounted for, no account of a
// step that does not exist, and a well-formed result.
func TestDeliveryGate(t *testing.T) {
	sop := []string{"inventory the inputs", "draft the brief", "check every figure against its source"}
	done := Result{Status: StatusCompleted, Summary: "brief written", Artifacts: []string{"output/brief.md"}}
	all := map[int]string{1: "progress.md § Inventory", 2: "output/brief.md", 3: "output/brief.md § Sources"}
	if ps := DeliveryGate(sop, all, done); ps != nil {
		t.Fatalf("complete delivery refused: %v", ps)
	}
	ps := DeliveryGate(sop, map[int]string{1: "x", 3: "  ", 0: "y", 7: "z"}, Result{Status: StatusPartial})
	want := []Code{ESOPMissing, ESOPMissing, ESOPUnknown, ESOPUnknown, EResultInvalid, EResultInvalid}
	if !slices.Equal(codes(ps), want) {
		t.Fatalf("codes %v, want %v: %v", codes(ps), want, ps)
	}
	if ps[0].Item != "step 2" || !strings.Contains(ps[0].Message, "draft the brief") || ps[2].Item != "step 0" {
		t.Errorf("problems unclear: %v", ps)
	}
	if ps := DeliveryGate(nil, nil, done); ps != nil {
		t.Errorf("no SOP: %v", ps)
	}
}

// Every problem code is documented in docs/gates.md.
func TestCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/gates.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Code{ESelfMissing, ESelfFailed, ESelfNoQuote, ESelfQuoteAbsent, ESelfWrongLine, ESelfNoSource, ESelfDuplicate, ESelfUnknown,
		ESuspectEmpty, ESuspectCopy, ESuspectPlaceholder, ESOPMissing, ESOPUnknown, EResultInvalid} {
		if !strings.Contains(string(doc), "`"+string(c)+"`") {
			t.Errorf("%s is not in docs/gates.md", c)
		}
	}
}
