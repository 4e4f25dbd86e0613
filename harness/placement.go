package harness

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// tableRow is one row of the constraint table methodology.md opens with.
type tableRow struct {
	id    string
	files []string // harness paths named in the row, in order, without repeats
	line  int      // 1-based line in methodology.md
}

var delimCell = regexp.MustCompile(`^:?-+:?$`)

// parseTable reads the constraint → landing-point table that opens
// methodology.md, and returns its rows and the text after it (the body).
// Only blank lines and Markdown headings may come before the table, so
// the first thing a reader meets is where each constraint lands.
//
// The table is a GitHub-style Markdown table: a header row, a delimiter
// row, then one row per constraint whose first column is the constraint id
// ("C1", "[C1]" and "`C1`" all read as C1). Every whitelisted harness path
// in the other columns is a landing point; other words are ignored, so a
// kind or a comment column may sit beside them.
func parseTable(text string) ([]tableRow, string, []Problem) {
	fail := func(format string, a ...any) []Problem {
		return []Problem{problem(CodeTable, "", Methodology, format, a...)}
	}
	lines := strings.Split(text, "\n")
	i := 0
	for i < len(lines) {
		t := strings.TrimSpace(lines[i])
		if t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		i++
	}
	if i == len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i]), "|") {
		return nil, text, fail("methodology.md must open with the constraint table (after an optional title), such as:\n" +
			"| Constraint | Kind | Lands in |\n|---|---|---|\n| C1 | audience | methodology.md, sop/draft.md, worker_prompt_taskpart.md |")
	}
	start := i
	for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|") {
		i++
	}
	table, body := lines[start:i], strings.Join(lines[i:], "\n")
	if len(table) < 2 || !isDelimiter(splitRow(table[1])) {
		return nil, body, fail("line %d: the table needs a header row and a delimiter row such as |---|---|---|", start+1)
	}
	var rows []tableRow
	var ps []Problem
	seen := map[string]int{}
	for k, l := range table[2:] {
		n := start + 3 + k
		cells := splitRow(l)
		id := strings.Trim(cells[0], " `*_[]")
		if !idRe.MatchString(id) {
			ps = append(ps, problem(CodeTable, "", Methodology, "line %d: the first column must be a constraint id such as C1, not %q", n, cells[0]))
			continue
		}
		if prev, dup := seen[id]; dup {
			ps = append(ps, problem(CodeTable, id, Methodology, "line %d: the constraint has a second row (the first is on line %d)", n, prev))
			continue
		}
		seen[id] = n
		row := tableRow{id: id, line: n}
		for _, c := range cells[1:] {
			for _, tok := range strings.FieldsFunc(c, notPathRune) {
				tok = strings.TrimRight(tok, ".")
				if Allowed(tok) == nil && !slices.Contains(row.files, tok) {
					row.files = append(row.files, tok)
				}
			}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 && len(ps) == 0 {
		ps = fail("line %d: the table has no rows; give one row per constraint", start+1)
	}
	return rows, body, ps
}

func notPathRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' || r == '/')
}

// splitRow splits a Markdown table row into trimmed cells; "\|" is a pipe
// inside a cell.
func splitRow(line string) []string {
	const esc = "\x00"
	line = strings.TrimSpace(strings.ReplaceAll(line, `\|`, esc))
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	cells := strings.Split(line, "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(strings.ReplaceAll(c, esc, "|"))
	}
	return cells
}

func isDelimiter(cells []string) bool {
	for _, c := range cells {
		if !delimCell.MatchString(strings.ReplaceAll(c, " ", "")) {
			return false
		}
	}
	return len(cells) > 0
}

// placedIn reports whether marker places a constraint in the harness file
// rel with content text. body is methodology.md without its opening table.
//
// In methodology.md only the body counts: the table row alone would
// otherwise place every constraint there. In done_criteria.yaml only a
// check's note counts, so the marker is tied to a check that enforces the
// constraint, not to a comment; when the file does not parse (a problem
// reported on its own) its text is searched, so one fault is not reported
// twice. Everywhere else, the marker anywhere in the text counts.
func placedIn(marker, rel, text, body string, notes []string, notesOK bool) bool {
	switch {
	case rel == Methodology:
		return strings.Contains(body, marker)
	case rel == DoneCriteria && notesOK:
		for _, n := range notes {
			if strings.Contains(n, marker) {
				return true
			}
		}
		return false
	}
	return strings.Contains(text, marker)
}

// CheckPlacements checks where each constraint lands in the harness files
// (DA-B3). files maps a harness-relative path to its content; paths that
// are not whitelisted are ignored here (Precheck reports them).
//
// A constraint is placed in a file when its marker "[C1]" appears there
// (see placedIn for the rules of methodology.md and done_criteria.yaml).
// Every stated constraint must be placed in methodology.md, in
// worker_prompt_taskpart.md and in at least one sop/<name>.md — so in at
// least three places — and in done_criteria.yaml or a script as well where
// it can be checked structurally (E-CONSTRAINT-UNDERPLACED names the
// places it is missing from). A NoneStated constraint has nothing to
// enforce and need not be placed.
//
// methodology.md must open with the constraint table, with one row for
// every constraint (none-stated ones included) that lists exactly the
// files the constraint is placed in, methodology.md itself included
// (E-METHODOLOGY-TABLE), and it must cite the input inventory,
// inputs/inventory.md (E-METHODOLOGY-INVENTORY, DA-B2).
func CheckPlacements(cs []Constraint, files map[string]string) []Problem {
	meth, ok := files[Methodology]
	if !ok {
		return []Problem{problem(CodeMissing, "", Methodology, "methodology.md is missing; it opens with the constraint table and carries the method")}
	}
	rows, body, ps := parseTable(meth)
	var notes []string
	notesOK := false
	if text, ok := files[DoneCriteria]; ok {
		if checks, err := ParseCriteria([]byte(text)); err == nil {
			notesOK = true
			for _, ch := range checks {
				notes = append(notes, ch.Note)
			}
		}
	}
	var paths []string
	for rel := range files {
		if Allowed(rel) == nil {
			paths = append(paths, rel)
		}
	}
	slices.SortFunc(paths, comparePaths)

	byID := map[string]tableRow{}
	for _, r := range rows {
		byID[r.id] = r
	}
	known := map[string]bool{}
	for _, c := range cs {
		if c.ID == "" || known[c.ID] {
			continue // CheckSources reports these
		}
		known[c.ID] = true
		var placed []string
		for _, rel := range paths {
			if placedIn(c.Marker(), rel, files[rel], body, notes, notesOK) {
				placed = append(placed, rel)
			}
		}
		if !c.IsNone() {
			var missing []string
			if !slices.Contains(placed, Methodology) {
				missing = append(missing, Methodology+" (after the table)")
			}
			if !slices.Contains(placed, WorkerPrompt) {
				missing = append(missing, WorkerPrompt)
			}
			if !slices.ContainsFunc(placed, isSOP) {
				missing = append(missing, "the SOP of the step it governs (sop/<name>.md)")
			}
			if len(missing) > 0 {
				ps = append(ps, problem(CodeUnderplaced, c.ID, "", "%s lands in %s; write it, tagged %s, also in %s",
					c.ID, listOrNothing(placed), c.Marker(), strings.Join(missing, ", ")))
			}
		}
		r, ok := byID[c.ID]
		switch {
		case !ok && len(rows) > 0:
			ps = append(ps, problem(CodeTable, c.ID, Methodology, "the constraint table has no row for %s; add one listing %s", c.ID, listOrNothing(placed)))
		case ok:
			if msg := disagreement(c.Marker(), r.files, placed); msg != "" {
				ps = append(ps, problem(CodeTable, c.ID, Methodology, "line %d: %s", r.line, msg))
			}
		}
	}
	for _, r := range rows {
		if !known[r.id] {
			ps = append(ps, problem(CodeTable, r.id, Methodology, "line %d: the table has a row for %s, which is not a constraint of this task", r.line, r.id))
		}
	}
	if !strings.Contains(meth, Inventory) {
		ps = append(ps, problem(CodeInventory, "", Methodology,
			"methodology.md must cite the input inventory, %s, and say to read it before using any input file", Inventory))
	}
	return ps
}

// disagreement says how a table row differs from the actual placements.
func disagreement(marker string, listed, placed []string) string {
	var extra, unlisted []string
	for _, f := range listed {
		if !slices.Contains(placed, f) {
			extra = append(extra, f)
		}
	}
	for _, f := range placed {
		if !slices.Contains(listed, f) {
			unlisted = append(unlisted, f)
		}
	}
	var parts []string
	if len(extra) > 0 {
		parts = append(parts, fmt.Sprintf("the row lists %s, but %s is not there", strings.Join(extra, ", "), marker))
	}
	if len(unlisted) > 0 {
		parts = append(parts, fmt.Sprintf("%s is in %s, which the row does not list", marker, strings.Join(unlisted, ", ")))
	}
	return strings.Join(parts, "; ")
}

func listOrNothing(fs []string) string {
	if len(fs) == 0 {
		return "no file"
	}
	return strings.Join(fs, ", ")
}

// comparePaths orders harness paths as people read a harness: the
// methodology, the worker prompt, the done criteria, then SOPs and
// scripts by name.
func comparePaths(a, b string) int {
	ra, rb := pathRank(a), pathRank(b)
	if ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}

func pathRank(p string) int {
	switch {
	case p == Methodology:
		return 0
	case p == WorkerPrompt:
		return 1
	case p == DoneCriteria:
		return 2
	case isSOP(p):
		return 3
	case strings.HasPrefix(p, ScriptsDir+"/"):
		return 4
	}
	return 5
}
