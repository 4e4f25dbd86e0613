package harness

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Review records that Author reviewed the harness files Paths at At.
type Review struct {
	Author string    `json:"author"`
	At     time.Time `json:"at"`
	Paths  []string  `json:"paths"`
}

// Unreviewed returns the changes no one but their author has reviewed
// since they were made (DA-A2), in the order given. A change counts as
// reviewed by a review that names its path, is not by the change's author
// ("a harness change reviewed by its own author counts as unreviewed"),
// and is not earlier than the change. A later change to the same file
// needs a review of its own.
func Unreviewed(changes []AuditRecord, reviews []Review) []AuditRecord {
	var out []AuditRecord
	for _, c := range changes {
		covered := slices.ContainsFunc(reviews, func(r Review) bool {
			return r.Author != c.Author && !r.At.Before(c.At) && slices.Contains(r.Paths, c.Path)
		})
		if !covered {
			out = append(out, c)
		}
	}
	return out
}

// NeedsRevisionReview reports whether a change must be followed by a
// harness revision review (DA-A5): a large change (see AuditRecord.Large).
// Small edits are still audited and still count as unreviewed until some
// review covers them; they just do not stop the run for one.
func NeedsRevisionReview(rec AuditRecord) bool { return rec.Large }

// Precheck runs the host's static checks before the bootstrap review
// (DA-A2, DA-B3): the constraints are sourced (CheckSources) and placed
// (CheckPlacements), the required files exist and only whitelisted ones do,
// and done_criteria.yaml parses and holds no check that can never pass or
// never fail (CheckCriteria). The Reviewer is called only when it finds
// nothing; a model's time is not spent on what a machine can decide.
func Precheck(cs []Constraint, sources, files map[string]string) []Problem {
	ps := CheckSources(cs, sources)
	for _, rel := range sortedPaths(files) {
		if err := Allowed(rel); err != nil {
			ps = append(ps, problem(CodePath, "", rel, "the harness holds a file outside the whitelist"))
		}
	}
	if _, ok := files[WorkerPrompt]; !ok {
		ps = append(ps, problem(CodeMissing, "", WorkerPrompt, "the task part of the worker's instructions is missing"))
	}
	if !slices.ContainsFunc(sortedPaths(files), isSOP) {
		ps = append(ps, problem(CodeMissing, "", SOPDir, "no SOP: write at least one sop/<name>.md with the steps of the work"))
	}
	if text, ok := files[DoneCriteria]; ok {
		ps = append(ps, criteriaProblems([]byte(text))...)
	} else {
		ps = append(ps, problem(CodeCriteriaAbsent, "", DoneCriteria, "the done criteria are missing: list the structural checks of the deliverable"))
	}
	return append(ps, CheckPlacements(cs, files)...)
}

func sortedPaths(files map[string]string) []string {
	var ps []string
	for p := range files {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, comparePaths)
	return ps
}

// ReviewPacket is the text handed to the Reviewer for the bootstrap review:
// the raw task, the clarification texts (name → text, shown in round
// order), the constraints with their quotes, and every harness file in
// full. It holds nothing of Meta's view of its own work (DA-A2: "Meta
// gives the Reviewer no framing of its own verdict"): the function takes
// no summary, rationale or self-assessment, so none can be passed.
//
// Files are shown in fenced blocks longer than any backtick run inside
// them, so a file cannot end its block early and speak as the packet.
func ReviewPacket(rawTask string, clarifications map[string]string, cs []Constraint, files map[string]string) string {
	var b strings.Builder
	b.WriteString("# Bootstrap review packet\n\n")
	b.WriteString("This packet holds the user's own words and every file of the task harness, as written. It contains no assessment.\n\n")
	fmt.Fprintf(&b, "## The task, as the user wrote it (%s)\n\n", TaskSource)
	fence(&b, "", rawTask)

	b.WriteString("## Clarification\n\n")
	names := make([]string, 0, len(clarifications))
	for n := range clarifications {
		names = append(names, n)
	}
	slices.SortFunc(names, compareClarify)
	if len(names) == 0 {
		b.WriteString("There was no clarification round.\n\n")
	}
	for _, n := range names {
		fmt.Fprintf(&b, "### %s\n\n", n)
		fence(&b, "", clarifications[n])
	}

	b.WriteString("## Constraints\n\n")
	if len(cs) == 0 {
		b.WriteString("No constraints were given.\n\n")
	}
	for _, c := range cs {
		fmt.Fprintf(&b, "- %s %s: %s\n  quoted from %s: %q\n", c.Marker(), c.Kind, oneLine(c.Text), c.Source, oneLine(c.Quote))
	}
	if len(cs) > 0 {
		b.WriteString("\n")
	}

	b.WriteString("## Harness files\n\n")
	for _, rel := range sortedPaths(files) {
		fmt.Fprintf(&b, "### %s/%s\n\n", Dir, rel)
		fence(&b, fenceLang(rel), files[rel])
	}
	return b.String()
}

// compareClarify orders clarification files by round number, questions
// before answers; other names after, alphabetically.
func compareClarify(a, b string) int {
	ra, ka := clarifyKey(a)
	rb, kb := clarifyKey(b)
	if ra != rb {
		return ra - rb
	}
	if ka != kb {
		return ka - kb
	}
	return strings.Compare(a, b)
}

func clarifyKey(name string) (round, kind int) {
	if n, ok := AnswersRound(name); ok {
		return n, 1
	}
	var n int
	if _, err := fmt.Sscanf(name, "inputs/clarify/round_%d_questions.md", &n); err == nil && QuestionsFile(n) == name {
		return n, 0
	}
	return 1 << 30, 2
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func fenceLang(rel string) string {
	switch {
	case strings.HasSuffix(rel, ".md"):
		return "markdown"
	case strings.HasSuffix(rel, ".yaml"):
		return "yaml"
	case strings.HasSuffix(rel, ".py"):
		return "python"
	case strings.HasSuffix(rel, ".sh"):
		return "sh"
	}
	return ""
}

// fence writes text in a fenced block whose fence is longer than any run
// of backticks in the text.
func fence(b *strings.Builder, lang, text string) {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	b.WriteString(f + lang + "\n")
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(f + "\n\n")
}
