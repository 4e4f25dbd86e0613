package harness

import (
	"fmt"
	"strings"
	"testing"
)

const task = `Please write a market brief for the board of directors about our three product lines.
It should be a report of at most 10 pages, in English.
Cover the period “January to June 2025”.
It must include a revenue table per product line.
Leave out any personnel or salary data.
Every figure must cite the input file it comes from.`

const answers1 = `# Answers (round 1)

## 1. Should the brief compare us with competitors?

Answer: No, do not compare with competitors.
`

func sources() map[string]string {
	return map[string]string{TaskSource: task, AnswersSource(1): answers1}
}

func constraints() []Constraint {
	return []Constraint{
		{ID: "C1", Kind: Audience, Text: "Written for the board of directors.", Quote: "for the board of directors", Source: TaskSource},
		{ID: "C2", Kind: Form, Text: "A report of at most 10 pages, in English.", Quote: "a report of at most 10 pages", Source: TaskSource},
		{ID: "C3", Kind: TimeWindow, Text: "Covers January to June 2025.", Quote: `"January to June 2025"`, Source: TaskSource},
		{ID: "C4", Kind: MustInclude, Text: "A revenue table per product line.", Quote: "include a revenue table per product line", Source: TaskSource},
		{ID: "C5", Kind: Exclude, Text: "No personnel or salary data; no comparison with competitors.", Quote: "Leave out any personnel or salary data", Source: TaskSource},
		{ID: "C6", Kind: Quality, Text: "Every figure cites its input file.", Quote: "Every figure must cite the input file", Source: TaskSource},
	}
}

// harnessFiles builds a harness in which every constraint lands in
// methodology.md, the worker prompt and sop/draft.md, C2 also in a script
// and C4 also in done_criteria.yaml, with a table that says so.
func harnessFiles() map[string]string {
	var table, body strings.Builder
	table.WriteString("# Method for the market brief\n\n| Constraint | Kind | Lands in |\n|---|---|---|\n")
	for _, c := range constraints() {
		lands := "methodology.md, worker_prompt_taskpart.md, sop/draft.md"
		switch c.ID {
		case "C2":
			lands += ", tools/scripts/count-pages.py"
		case "C4":
			lands += ", `done_criteria.yaml`"
		}
		fmt.Fprintf(&table, "| %s | %s | %s |\n", c.ID, c.Kind, lands)
		fmt.Fprintf(&body, "- %s %s\n", c.Marker(), c.Text)
	}
	meth := table.String() + "\nBefore using any input, read inputs/inventory.md.\n\n" + body.String()
	return map[string]string{
		Methodology:    meth,
		WorkerPrompt:   "You write the brief.\n" + body.String(),
		"sop/draft.md": "1. Read the inventory.\n2. Draft.\n" + body.String(),
		DoneCriteria: `- kind: file_exists
  path: brief.md
- kind: contains
  path: brief.md
  text: "## Revenue by product line"
  note: "[C4] the revenue table"
`,
		"tools/scripts/count-pages.py": "# [C2] counts pages\nprint(1)\n",
	}
}

func hasCode(ps []Problem, code, id string) *Problem {
	for i, p := range ps {
		if p.Code == code && (id == "" || p.Constraint == id) {
			return &ps[i]
		}
	}
	return nil
}

func wantProblem(t *testing.T, ps []Problem, code, id string) *Problem {
	t.Helper()
	p := hasCode(ps, code, id)
	if p == nil {
		t.Fatalf("want %s for %q, got %v", code, id, ps)
	}
	return p
}

// DA-B3: a complete, sourced, well-placed harness passes the host's
// static checks.
func TestPrecheckCleanHarness(t *testing.T) {
	if ps := Precheck(constraints(), sources(), harnessFiles()); len(ps) != 0 {
		t.Fatalf("clean harness: %v", ps)
	}
}

// DA-B3: a constraint invented from "domain common sense", with no source
// or a source that is not the user's words, is refused.
func TestInventedConstraintRefused(t *testing.T) {
	for name, c := range map[string]Constraint{
		"no source":       {ID: "C7", Kind: Quality, Text: "Use IFRS terms.", Quote: "standard board practice is IFRS"},
		"domain source":   {ID: "C7", Kind: Quality, Text: "Use IFRS terms.", Quote: "standard board practice is IFRS", Source: "domain knowledge"},
		"questions file":  {ID: "C7", Kind: Quality, Text: "Use IFRS terms.", Quote: "standard board practice is IFRS", Source: QuestionsFile(1)},
		"no quote":        {ID: "C7", Kind: Quality, Text: "Use IFRS terms.", Source: TaskSource},
		"invented quote":  {ID: "C7", Kind: Quality, Text: "Use IFRS terms.", Quote: "figures follow IFRS reporting standards", Source: TaskSource},
		"short quote":     {ID: "C7", Kind: Quality, Text: "Board.", Quote: "the board", Source: TaskSource},
		"missing answers": {ID: "C7", Kind: Quality, Text: "x", Quote: "do not compare with competitors", Source: AnswersSource(2)},
	} {
		t.Run(name, func(t *testing.T) {
			ps := CheckSources(append(constraints(), c), sources())
			p := wantProblem(t, ps, CodeUnsourced, "C7")
			if len(ps) != 1 {
				t.Errorf("want only the one problem, got %v", ps)
			}
			t.Log(p)
		})
	}
}

// DA-B3: a quote that is in a different source than the one named is
// refused, and the message says where it is.
func TestQuoteFromOtherSourceRefused(t *testing.T) {
	c := Constraint{ID: "C7", Kind: Exclude, Text: "No competitor comparison.", Quote: "do not compare with competitors", Source: TaskSource}
	p := wantProblem(t, CheckSources(append(constraints(), c), sources()), CodeUnsourced, "C7")
	if !strings.Contains(p.Msg, AnswersSource(1)) {
		t.Errorf("message does not name the source holding the quote: %s", p.Msg)
	}
	c.Source = AnswersSource(1)
	if ps := CheckSources(append(constraints(), c), sources()); len(ps) != 0 {
		t.Errorf("quote from the right source: %v", ps)
	}
}

// DA-B3: quotes survive what a faithful copy may change (case,
// whitespace, typographic quotes, full-width forms, line breaks in
// Chinese) and nothing else.
func TestQuoteNormalisation(t *testing.T) {
	src := map[string]string{
		TaskSource: "The brief is for the “Board of Directors”,\n  not   for staff.\n请在报告中\n包含各产品线的收入表。",
	}
	for _, tc := range []struct {
		quote string
		ok    bool
	}{
		{`for the "board of directors", not for staff`, true},
		{"FOR THE “BOARD OF DIRECTORS”,\tNOT FOR STAFF", true},
		{"for the ＂board of directors＂", true},
		{"请在报告中包含各产品线的收入表", true},
		{"包含各产品线的收入表.", true},
		{"for the board of directors, not for staff", true}, // quotation marks say nothing of the source
		{"for the 'board of directors'", false},             // apostrophes are letters of words
		{"the board, not staff", false},
		{"收入表", false}, // too short: three characters
	} {
		c := Constraint{ID: "C1", Kind: Audience, Text: "x", Quote: tc.quote, Source: TaskSource}
		got := hasCode(CheckSources([]Constraint{c}, src), CodeUnsourced, "C1") == nil
		if got != tc.ok {
			t.Errorf("quote %q: accepted = %v, want %v", tc.quote, got, tc.ok)
		}
	}
}

// DA-B3: every kind must be considered; "none stated" needs a quote from
// a clarification answer, since silence in the task is not an answer.
func TestKindsAndNoneStated(t *testing.T) {
	cs := constraints()[:5] // no quality constraint
	wantProblem(t, CheckSources(cs, sources()), CodeKindMissing, "")

	none := Constraint{ID: "C6", Kind: Quality, Text: "None stated.", Quote: "Every figure must cite the input file", Source: TaskSource}
	if ps := CheckSources(append(cs, none), sources()); len(ps) != 1 || ps[0].Code != CodeNoneUnasked {
		t.Errorf("none stated from the task: %v", ps)
	}

	none.Quote, none.Source = "No, do not compare with competitors", AnswersSource(1)
	if ps := CheckSources(append(cs, none), sources()); len(ps) != 0 {
		t.Errorf("none stated after asking: %v", ps)
	}
	// "none stated" beside a stated constraint of the same kind contradicts it.
	none.Kind = Audience
	wantProblem(t, CheckSources(append(constraints(), none), sources()), CodeConstraint, "C6")
}

// DA-B3: constraint ids, kinds and texts are well-formed.
func TestConstraintShape(t *testing.T) {
	cs := constraints()
	cs[1].ID = "C1"
	cs[2].ID = "c3"
	cs[3].Kind = "tone"
	cs[4].Text = " "
	ps := CheckSources(cs, sources())
	for _, id := range []string{"C1", "c3", "C4", "C5"} {
		wantProblem(t, ps, CodeConstraint, id)
	}
}

// DA-B3: a constraint that lands in fewer than the required places is
// caught, naming where it is missing.
func TestUnderplacedCaught(t *testing.T) {
	files := harnessFiles()
	files[WorkerPrompt] = strings.ReplaceAll(files[WorkerPrompt], "[C3]", "")
	files["sop/draft.md"] = strings.ReplaceAll(files["sop/draft.md"], "[C3]", "")
	ps := CheckPlacements(constraints(), files)
	p := wantProblem(t, ps, CodeUnderplaced, "C3")
	if !strings.Contains(p.Msg, WorkerPrompt) || !strings.Contains(p.Msg, "sop/") {
		t.Errorf("message does not name the missing places: %s", p.Msg)
	}
	// The table still lists the two files: it disagrees now.
	wantProblem(t, ps, CodeTable, "C3")

	// Three places, but not the worker prompt: the worker would never
	// read the constraint in its own instructions.
	files = harnessFiles()
	files[WorkerPrompt] = strings.ReplaceAll(files[WorkerPrompt], "[C2]", "")
	wantProblem(t, CheckPlacements(constraints(), files), CodeUnderplaced, "C2")
}

// DA-B3: the methodology table must agree with the placements.
func TestMethodologyTableDisagreementCaught(t *testing.T) {
	t.Run("lists a file the marker is not in", func(t *testing.T) {
		files := harnessFiles()
		files[Methodology] = strings.Replace(files[Methodology],
			"| C1 | audience | methodology.md, worker_prompt_taskpart.md, sop/draft.md |",
			"| C1 | audience | methodology.md, worker_prompt_taskpart.md, sop/draft.md, done_criteria.yaml |", 1)
		p := wantProblem(t, CheckPlacements(constraints(), files), CodeTable, "C1")
		if !strings.Contains(p.Msg, "done_criteria.yaml") {
			t.Errorf("message: %s", p.Msg)
		}
	})
	t.Run("does not list a file the marker is in", func(t *testing.T) {
		files := harnessFiles()
		files["sop/check.md"] = "Check the figures. [C6]\n"
		p := wantProblem(t, CheckPlacements(constraints(), files), CodeTable, "C6")
		if !strings.Contains(p.Msg, "sop/check.md") {
			t.Errorf("message: %s", p.Msg)
		}
	})
	t.Run("a marker in a comment of done_criteria.yaml does not count", func(t *testing.T) {
		files := harnessFiles()
		files[DoneCriteria] = "# [C1]\n" + files[DoneCriteria]
		if ps := CheckPlacements(constraints(), files); len(ps) != 0 {
			t.Errorf("%v", ps)
		}
	})
	t.Run("missing row and unknown row", func(t *testing.T) {
		files := harnessFiles()
		files[Methodology] = strings.Replace(files[Methodology], "| C5 |", "| C9 |", 1)
		ps := CheckPlacements(constraints(), files)
		wantProblem(t, ps, CodeTable, "C5")
		wantProblem(t, ps, CodeTable, "C9")
	})
	t.Run("the table row alone does not place a constraint in methodology.md", func(t *testing.T) {
		files := harnessFiles()
		files[Methodology] = strings.Replace(files[Methodology], "- [C2]", "-", 1)
		wantProblem(t, CheckPlacements(constraints(), files), CodeUnderplaced, "C2")
	})
	t.Run("table not first", func(t *testing.T) {
		files := harnessFiles()
		files[Methodology] = "This is our method.\n\n" + files[Methodology]
		wantProblem(t, CheckPlacements(constraints(), files), CodeTable, "")
	})
	t.Run("duplicate row", func(t *testing.T) {
		files := harnessFiles()
		files[Methodology] = strings.Replace(files[Methodology], "| C2 |", "| C1 |", 1)
		ps := CheckPlacements(constraints(), files)
		wantProblem(t, ps, CodeTable, "C1")
		wantProblem(t, ps, CodeTable, "C2")
	})
}

// DA-B2: the methodology cites the input inventory.
func TestMethodologyCitesInventory(t *testing.T) {
	files := harnessFiles()
	files[Methodology] = strings.ReplaceAll(files[Methodology], Inventory, "the inputs")
	wantProblem(t, CheckPlacements(constraints(), files), CodeInventory, "")
}

// DA-B3: "none stated" constraints need no placement but do need a row.
func TestNoneStatedPlacement(t *testing.T) {
	cs := append(constraints()[:5], Constraint{ID: "C6", Kind: Quality, Text: NoneStated,
		Quote: "No, do not compare with competitors", Source: AnswersSource(1)})
	files := harnessFiles()
	for rel, text := range files {
		files[rel] = strings.ReplaceAll(text, "[C6]", "")
	}
	files[Methodology] = strings.Replace(files[Methodology],
		"| C6 | quality | methodology.md, worker_prompt_taskpart.md, sop/draft.md |", "| C6 | quality | none stated |", 1)
	if ps := Precheck(cs, sources(), files); len(ps) != 0 {
		t.Fatalf("%v", ps)
	}
}

// DA-B3: Precheck also reports files outside the whitelist, missing files
// and done criteria that cannot pass.
func TestPrecheckFiles(t *testing.T) {
	files := harnessFiles()
	files["notes.txt"] = "x"
	delete(files, WorkerPrompt)
	files[DoneCriteria] = "- kind: matches\n  path: brief.md\n  text: '.*'\n  note: '[C4]'\n"
	ps := Precheck(constraints(), sources(), files)
	for _, code := range []string{CodePath, CodeMissing, CodeVacuous, CodeUnderplaced} {
		wantProblem(t, ps, code, "")
	}

	files = harnessFiles()
	delete(files, DoneCriteria)
	delete(files, "sop/draft.md")
	delete(files, Methodology)
	ps = Precheck(constraints(), sources(), files)
	wantProblem(t, ps, CodeCriteriaAbsent, "")
	missing := map[string]bool{}
	for _, p := range ps {
		if p.Code == CodeMissing {
			missing[p.File] = true
		}
	}
	if !missing[SOPDir] || !missing[Methodology] {
		t.Errorf("missing files reported: %v", missing)
	}
}

func TestProblemError(t *testing.T) {
	p := Problem{Code: CodeTable, Constraint: "C1", File: Methodology, Msg: "x"}
	if got := p.Error(); got != "E-METHODOLOGY-TABLE: methodology.md: C1: x" {
		t.Errorf("got %q", got)
	}
}
