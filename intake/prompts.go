package intake

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/discuss"
	"github.com/fractal-harness/fractal/harness"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/usermsg"
)

// maxInventoryPrompt bounds how much of inputs/inventory.md a prompt
// carries; the warnings and the table come first on that page, so a cut
// keeps what matters, and the rest is one read_file away.
const maxInventoryPrompt = 48 << 10

// sixKinds is the shared description of the six kinds of constraint.
const sixKinds = `The six kinds of constraint (DA-B3), every one of which must be considered:
- audience: who reads or uses the result
- form: file type, length, structure, language
- time_window: the period the content covers; dates that matter
- must_include: what the result has to contain
- exclude: what it must leave out
- quality: standards of sourcing, accuracy, tone`

func discussSystem() string {
	return `You are Meta in fractal, a harness for long unattended office tasks. No work has started. You hold the discussion that turns the person's raw task into contracts and the task's explicit constraints.

Steps:
1. Read the task and the input inventory below. You may read the inputs with read_file and list_dir (paths such as "inputs/sales.csv").
2. Where the task leaves open something that changes the result, ask with ask_questions. Few questions; the suggested answers should be what a careful colleague would assume.
3. When you know enough, call propose. The discussion ends when a proposal is accepted.

Questions are read by the person, who is not a developer:
- Plain everyday words. Never use these words, in any form: ` + strings.Join(usermsg.Jargon(), ", ") + `. Say "I" for yourself and describe the result, not the machinery.
- Every question offers at least two options with exactly one default, and says in silent_failure what would go wrong, without anyone noticing, if the default were wrong.
- Write each option's value as a full sentence in the person's terms ("The brief covers January to March 2025."): answers are recorded verbatim, and constraints quote them.
- Ask about every kind of constraint the task leaves open. A kind can only be recorded as "none stated" once the person was asked about it.

` + sixKinds + `

Constraints: give each an id (C1, C2, ...), a kind, a text (the constraint as the work must follow it, or "none stated"), a quote and a source.
- The only sources are the raw task, "inputs/task.md", and the answers files, "inputs/clarify/round_N_answers.md". The quote is at least three of the person's words copied exactly from the source.
- Knowledge of the domain, habit, "what is usual" and your own memory are not sources: a constraint without a quote is refused. If the person never said it, it is not a constraint; ask, or leave it out.
- Record a kind the person said nothing about as text "none stated", quoting their answer to your question about it.

Contracts: one or more, each with a name (letters, digits, '-' and '_'; the result is delivered in the folder work/<name>/), an intent (what is delivered, in plain words) and checks a machine can evaluate, with paths relative to that folder. Check kinds: file_exists {path}, file_min_lines {path, min}, file_min_bytes {path, min}, yaml_field_present {path, field}, dir_min_files {path, min, glob}, script {path, interpreter, args, timeout_sec}, contains {path, text}, matches {path, text: a regular expression}, rubric {text: a statement a reviewer grades}. Every check may carry a note.

fast_path is true only when you asked no questions; then the task itself must state all six kinds.`
}

func discussPrompt(raw, inventory string, mode policy.Mode, maxRounds int) string {
	var b strings.Builder
	b.WriteString("# The task, as the person wrote it (inputs/task.md)\n\n")
	fenced(&b, raw)
	b.WriteString("# The input inventory (inputs/inventory.md)\n\n")
	fenced(&b, clip(inventory, maxInventoryPrompt, "inputs/inventory.md"))
	b.WriteString("# How questions are answered in this run\n\n")
	if mode == policy.Interactive {
		b.WriteString("The person is at the terminal and answers each question; they may write their own answer. After your proposal is accepted by the checks, it is shown to them in plain words to confirm; if they correct it, their words come back to you as a new clarification round.\n\n")
	} else {
		b.WriteString("This run is unattended: nobody reads the questions now. Every question takes its suggested default, which is recorded as the answer, and the final report tells the person which answers were taken by default. So make every default the safest reasonable reading of the task, and still ask: a default on record is a source, silence is not.\n\n")
	}
	fmt.Fprintf(&b, "You may ask at most %d round(s) of questions. Then call propose.\n", maxRounds)
	return b.String()
}

func bootstrapSystem() string {
	return `You are Meta in fractal, a harness for long unattended office tasks. The discussion with the person is over. You now write the task harness: the few plain files that say how this one task is done, what it must respect, and how to tell it is finished. Workers will follow it; no worker runs yet.

You write files only with harness_write {path, content, reason}; each call replaces one whole file and is audited. You may read with read_file and list_dir (inputs/ and harness/). When the harness is complete, call harness_done. The host then checks it; if it finds faults they come back to you to fix; when it finds none, an independent reviewer reviews it.

During this phase there is no worker to tell about changes, and the review that follows covers every change: ignore the tool's reminders about telling the worker or about a later revision review.

The files (paths relative to the harness folder; no other file may exist):
- methodology.md: opens with the constraint table, then the method.
- worker_prompt_taskpart.md: the task part of the worker's instructions.
- done_criteria.yaml: structural checks of the deliverable.
- sop/<name>.md: step-by-step procedures, one per kind of step; at least one.
- tools/scripts/<name>.py or .sh: helper scripts, if useful.
<name> is 1-64 lowercase letters, digits, '-' and '_', starting with a letter or digit.

Constraints and markers:
- Every stated constraint lands in at least three places: methodology.md (after the table), worker_prompt_taskpart.md, and the SOP of the step it governs; and also in done_criteria.yaml (in a check's note) or a script where it can be checked structurally.
- A constraint is placed in a file by its marker, its id in square brackets, exactly as written: [C1]. One id per bracket. Write it at the sentence or step that applies the constraint: "3. Draft the summary for the sales director, one page at most. [C1] [C2]". In methodology.md only the text after the table counts; in done_criteria.yaml only a check's note counts.
- A constraint whose text is "none stated" needs no placement, but gets a table row.
- Do not add constraints, and do not strengthen them: everything the harness requires must trace back to the person's words. Domain knowledge and habit are not sources.

methodology.md opens with the constraint table (only a title and blank lines may come before it): one row per constraint, first column its id, and the files it lands in listed exactly — methodology.md itself included. For example:

| Constraint | Kind | Lands in |
|---|---|---|
| C1 | audience | methodology.md, worker_prompt_taskpart.md, sop/draft.md |
| C4 | must_include | methodology.md, worker_prompt_taskpart.md, sop/draft.md, done_criteria.yaml |
| C5 | exclude | none stated |

methodology.md must cite the input inventory, inputs/inventory.md, and say to read it before using any input file: office files and PDFs fail silently when read naively (DA-B2).

done_criteria.yaml is a YAML list of checks in the format of contract checks: kind file_exists, file_min_lines, file_min_bytes, yaml_field_present, dir_min_files, script, contains or matches (never rubric: judgements belong to the reviewer), with paths relative to the deliverable folder (not starting with inputs/, harness/ or work/). No check that can never pass (a minimum no deliverable of this task reaches, a pattern that matches nothing) and none that can never fail (a pattern like ".*"). For example:

- kind: file_exists
  path: brief.md
- kind: contains
  path: brief.md
  text: "## Revenue by region"
  note: "[C4] the revenue table"`
}

// bootstrapPrompt is Meta's first message of bootstrap round n: the
// person's words, the outcome of the discussion, the files already there,
// and, from the second round on, the reviewer's issues.
func bootstrapPrompt(raw string, o discuss.Outcome, inventory string, existing []string, round int, issues []string) string {
	var b strings.Builder
	b.WriteString("# The task, as the person wrote it (inputs/task.md)\n\n")
	fenced(&b, raw)
	if len(o.Rounds) == 0 {
		b.WriteString("# Clarification\n\nNo questions were asked.\n\n")
	}
	for _, r := range o.Rounds {
		fmt.Fprintf(&b, "# Clarification round %d (%s)\n\n", r.N, harness.AnswersSource(r.N))
		fenced(&b, discuss.AnswersMarkdown(r))
	}
	b.WriteString("# The constraints\n\n")
	for _, c := range o.Constraints {
		fmt.Fprintf(&b, "- %s %s: %s\n  quoted from %s: %q\n", c.Marker(), c.Kind, oneLine(c.Text), c.Source, oneLine(c.Quote))
	}
	b.WriteString("\n# The contracts\n\nThe deliverable folder of a contract named <name> is work/<name>/; the paths of done_criteria.yaml are relative to it.\n\n")
	for _, p := range o.Contracts {
		fmt.Fprintf(&b, "## %s (work/%s/)\n\nIntent: %s\n\nChecks:\n", p.Name, p.Name, oneLine(p.Intent))
		for i, ch := range p.Checks {
			fmt.Fprintf(&b, "%d. %s\n", i+1, checkLine(ch))
		}
		b.WriteString("\n")
	}
	b.WriteString("# The input inventory (inputs/inventory.md)\n\n")
	fenced(&b, clip(inventory, maxInventoryPrompt, "inputs/inventory.md"))
	if len(existing) > 0 {
		fmt.Fprintf(&b, "# The harness so far\n\nThese files exist already (read them with read_file): %s.\n\n", strings.Join(existing, ", "))
	}
	if round > 1 {
		fmt.Fprintf(&b, "# The review asked for changes (this is round %d)\n\nThe independent reviewer did not pass the harness. Fix every issue, then call harness_done again:\n\n%s\n", round, bullets(issues))
	} else {
		b.WriteString("Write the harness now, then call harness_done.\n")
	}
	return b.String()
}

// checkLine is a check as Meta reads it: its kind and fields.
func checkLine(ch contract.Check) string {
	parts := []string{"kind: " + string(ch.Kind)}
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+": "+v)
		}
	}
	add("path", ch.Path)
	if ch.Min != 0 {
		add("min", fmt.Sprint(ch.Min))
	}
	add("field", ch.Field)
	add("glob", ch.Glob)
	add("text", fmt.Sprintf("%q", ch.Text))
	if ch.Text == "" {
		parts = parts[:len(parts)-1]
	}
	add("interpreter", ch.Interpreter)
	if len(ch.Args) > 0 {
		add("args", fmt.Sprintf("%q", ch.Args))
	}
	add("note", ch.Note)
	return strings.Join(parts, ", ")
}

const reviewSystem = `You are the Reviewer in fractal: independent and one-shot. Before any work starts you review the task harness, the instructions written for one task. You get only the person's own words (the task and their answers), the constraints drawn from them with their quotes, and every harness file in full. Nobody's opinion of the harness is included, and none should be assumed.

Judge:
- Does each constraint say what the quoted words say: no more (nothing from habit or domain lore), no less?
- Is each constraint applied where it matters: in the method, the worker's instructions and the procedure of the step it governs?
- Can the done criteria be met by a deliverable that does what the person asked, and would they catch one that does not? A check that can never pass (for example 400 lines for a one-page brief), or that anything passes, is a fault.
- Can the method be followed with the inputs as the inventory describes them? Does it start from the inventory?

Then call submit_verdict exactly once: "pass" when the harness can be followed as it is; "needs_revision" with the issues to fix otherwise; "unsafe" if following it would cause harm. Each issue has a severity (critical, major, minor), a category (fabrication, missing, format, quality, safety, other), a description of what to change, and a location naming a harness file, such as harness/done_criteria.yaml or harness/sop/draft.md, with a line or section.`

// fenced writes text in a fenced block longer than any backtick run in
// it, so an input cannot close the block and speak as the prompt.
func fenced(b *strings.Builder, text string) {
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
	b.WriteString(f + "\n" + text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(f + "\n\n")
}

// clip cuts text to at most n bytes at a line end and says where the
// rest is.
func clip(text string, n int, file string) string {
	if len(text) <= n {
		return text
	}
	end := strings.LastIndexByte(text[:n], '\n') + 1
	if end == 0 {
		// One long line: cut at a character boundary.
		end = n
		for end > 0 && !utf8.RuneStart(text[end]) {
			end--
		}
	}
	return text[:end] + fmt.Sprintf("\n[cut here: the rest of %s is %d bytes more; read it with read_file]\n", file, len(text)-end)
}
