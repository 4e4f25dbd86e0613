// Package discuss turns a person's raw task into contracts and the task's
// constraints through a short discussion, before any agent works (F-D3.5,
// DA-A3, DA-B4).
//
// Meta reads the raw task and asks questions in rounds. Every question
// offers options with one suggested default and says what goes wrong,
// silently, if the default is wrong — so the person picks instead of
// facing a blank box, and knows what a wrong pick would cost. They can
// always type their own answer. In autonomous mode nobody answers: after
// a wait every question takes its default (Defaults), and the notes say so
// in the delivery report.
//
// Each round is kept as two plain files people read,
// inputs/clarify/round_N_questions.md and round_N_answers.md
// (QuestionsMarkdown, AnswersMarkdown). The answers are, with the raw task,
// the only text a constraint of the task harness may quote (see package
// harness).
//
// The result is an Outcome: the proposed contracts, the constraints, and
// the rounds that led to them. Everything here is pure except Ask, which
// talks to a terminal.
package discuss

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Option is one answer a question offers.
type Option struct {
	// Label is what the person reads, in plain words ("The board").
	Label string `json:"label" yaml:"label"`
	// Value is the answer recorded when the option is chosen, written as
	// a full statement a constraint can quote ("The brief is for the
	// board of directors.").
	Value string `json:"value" yaml:"value"`
	// Default marks the suggested option; exactly one per question.
	Default bool `json:"default,omitempty" yaml:"default,omitempty"`
}

// Question is one clarifying question.
type Question struct {
	ID      string   `json:"id" yaml:"id"` // letters, digits, '-', '_'; unique in a round
	Text    string   `json:"text" yaml:"text"`
	Options []Option `json:"options" yaml:"options"`
	// SilentFailure says what goes wrong, unnoticed, if the default is the
	// wrong answer (DA-B4: trade-offs state their silent-failure forms).
	SilentFailure string `json:"silent_failure" yaml:"silent_failure"`
	// Editable is always true: the person may type their own answer
	// instead of an option (DA-A3: editable options, not a blank box and
	// not a closed list). ValidateQuestions refuses false.
	Editable bool `json:"editable" yaml:"editable"`
}

// Answer is the answer to one question.
type Answer struct {
	QuestionID string `json:"question_id" yaml:"question_id"`
	Value      string `json:"value" yaml:"value"`
	// Defaulted is set when no one answered and the default was taken.
	Defaulted bool `json:"defaulted,omitempty" yaml:"defaulted,omitempty"`
	// Note explains how the answer came about, for the delivery report.
	Note string `json:"note,omitempty" yaml:"note,omitempty"`
}

// Round is one round of questions and their answers, numbered from 1.
type Round struct {
	N         int        `json:"n" yaml:"n"`
	Questions []Question `json:"questions" yaml:"questions"`
	Answers   []Answer   `json:"answers,omitempty" yaml:"answers,omitempty"`
}

// DefaultWait is how long autonomous mode waits for answers before taking
// the defaults.
const DefaultWait = 10 * time.Minute

var questionIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ValidateQuestions reports every problem with a round's questions: there
// is at least one; IDs are well-formed and unique; each question has text,
// at least two options with labels and values, exactly one default, a
// silent-failure text, and is editable. Two options are the least that is
// a choice; one default is what autonomous mode takes.
func ValidateQuestions(qs []Question) error {
	if len(qs) == 0 {
		return errors.New("discuss: a round asks at least one question")
	}
	var errs []error
	seen := map[string]bool{}
	for i, q := range qs {
		name := fmt.Sprintf("question %d", i+1)
		if q.ID != "" {
			name += " (" + q.ID + ")"
		}
		fail := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("discuss: %s: %s", name, fmt.Sprintf(format, a...)))
		}
		switch {
		case !questionIDRe.MatchString(q.ID):
			fail("id %q must be 1 to 64 letters, digits, '-' or '_'", q.ID)
		case seen[q.ID]:
			fail("the id is used twice")
		}
		seen[q.ID] = true
		if strings.TrimSpace(q.Text) == "" {
			fail("the question has no text")
		}
		if len(q.Options) < 2 {
			fail("offer at least two options, not %d", len(q.Options))
		}
		defaults := 0
		labels := map[string]bool{}
		for j, o := range q.Options {
			if o.Default {
				defaults++
			}
			l := strings.ToLower(strings.TrimSpace(o.Label))
			switch {
			case l == "":
				fail("option %d has no label", j+1)
			case labels[l]:
				fail("option %d repeats the label %q", j+1, o.Label)
			}
			labels[l] = true
			if strings.TrimSpace(o.Value) == "" {
				fail("option %d has no value", j+1)
			}
		}
		if defaults != 1 {
			fail("mark exactly one option as the default, not %d: it is what happens if nobody answers", defaults)
		}
		if strings.TrimSpace(q.SilentFailure) == "" {
			fail("say what goes wrong, unnoticed, if the default is wrong (silent_failure)")
		}
		if !q.Editable {
			fail("questions are always editable: the person may type their own answer")
		}
	}
	return errors.Join(errs...)
}

// defaultOption returns q's default option and its 1-based number.
func defaultOption(q Question) (Option, int) {
	for i, o := range q.Options {
		if o.Default {
			return o, i + 1
		}
	}
	return Option{}, 0
}

// Defaults answers every question of r that has no answer yet with its
// default (autonomous mode, DA-A3), keeping the answers already given, in
// question order. A defaulted answer's note reads "no answer after 10m0s;
// took the default: <label>", for the delivery report.
func Defaults(r Round, waited time.Duration) []Answer {
	given := map[string]Answer{}
	for _, a := range r.Answers {
		if _, dup := given[a.QuestionID]; !dup {
			given[a.QuestionID] = a
		}
	}
	out := make([]Answer, 0, len(r.Questions))
	for _, q := range r.Questions {
		if a, ok := given[q.ID]; ok {
			out = append(out, a)
			continue
		}
		d, _ := defaultOption(q)
		out = append(out, Answer{
			QuestionID: q.ID,
			Value:      d.Value,
			Defaulted:  true,
			Note:       fmt.Sprintf("no answer after %v; took the default: %s", waited, d.Label),
		})
	}
	return out
}

// QuestionsMarkdown renders round r's questions for
// inputs/clarify/round_N_questions.md, in plain words for the person.
func QuestionsMarkdown(r Round) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Questions before we start (round %d)\n\n", r.N)
	b.WriteString("Each question has a suggested answer. Pick an option by its number, or write your own answer. " +
		"If no answer comes, we go ahead with the suggested answers and say so in the final report.\n")
	for i, q := range r.Questions {
		fmt.Fprintf(&b, "\n## %d. %s\n\n", i+1, oneLine(q.Text))
		for j, o := range q.Options {
			mark := ""
			if o.Default {
				mark = " (suggested)"
			}
			fmt.Fprintf(&b, "%d. %s%s", j+1, oneLine(o.Label), mark)
			if v := oneLine(o.Value); v != oneLine(o.Label) {
				fmt.Fprintf(&b, " — %s", v)
			}
			b.WriteString("\n")
		}
		if q.Editable {
			fmt.Fprintf(&b, "%d. Something else: write your own answer\n", len(q.Options)+1)
		}
		fmt.Fprintf(&b, "\nIf the suggested answer is wrong: %s\n", oneLine(q.SilentFailure))
	}
	return b.String()
}

// AnswersMarkdown renders round r's answers for
// inputs/clarify/round_N_answers.md: each question, the answer in full and
// how it came about. This file is what constraints quote, so every answer
// is written out verbatim, on its own line after "Answer: ".
func AnswersMarkdown(r Round) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Answers (round %d)\n", r.N)
	byID := map[string]Answer{}
	for _, a := range r.Answers {
		if _, dup := byID[a.QuestionID]; !dup {
			byID[a.QuestionID] = a
		}
	}
	asked := map[string]bool{}
	for i, q := range r.Questions {
		asked[q.ID] = true
		fmt.Fprintf(&b, "\n## %d. %s\n\n", i+1, oneLine(q.Text))
		a, ok := byID[q.ID]
		if !ok {
			b.WriteString("No answer yet.\n")
			continue
		}
		fmt.Fprintf(&b, "Answer: %s\n\n%s\n", a.Value, how(q, a))
	}
	for _, a := range r.Answers {
		if !asked[a.QuestionID] {
			fmt.Fprintf(&b, "\n## Answer to a question not in this round (%s)\n\nAnswer: %s\n", a.QuestionID, a.Value)
			asked[a.QuestionID] = true
		}
	}
	return b.String()
}

// how says, in a sentence, how answer a to q came about.
func how(q Question, a Answer) string {
	if a.Defaulted {
		s := "No answer came, so we went ahead with the suggested answer."
		if a.Note != "" {
			s += " (" + a.Note + ")"
		}
		return s
	}
	for i, o := range q.Options {
		if o.Value == a.Value {
			return fmt.Sprintf("Chosen: option %d, %s.", i+1, strings.TrimRight(oneLine(o.Label), "."))
		}
	}
	return "Written in the person's own words."
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
