package discuss

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/harness"
)

func audienceQ() Question {
	return Question{
		ID:   "audience",
		Text: "Who will read the brief?",
		Options: []Option{
			{Label: "The board", Value: "The brief is for the board of directors.", Default: true},
			{Label: "The sales team", Value: "The brief is for the sales team."},
		},
		SilentFailure: "The brief would be pitched at the wrong level of detail, and nobody would notice until it is read.",
		Editable:      true,
	}
}

func periodQ() Question {
	return Question{
		ID:   "period",
		Text: "Which period should the figures cover?",
		Options: []Option{
			{Label: "First half of 2025", Value: "Cover January to June 2025.", Default: true},
			{Label: "All of 2024", Value: "Cover January to December 2024."},
			{Label: "The last twelve months", Value: "Cover the last twelve months."},
		},
		SilentFailure: "Figures from the wrong months would look plausible and go unchecked.",
		Editable:      true,
	}
}

// DA-A3 / DA-B4: questions offer editable options with exactly one
// default and say how a wrong default fails silently.
func TestValidateQuestions(t *testing.T) {
	if err := ValidateQuestions([]Question{audienceQ(), periodQ()}); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Question){
		"no default":     func(q *Question) { q.Options[0].Default = false },
		"two defaults":   func(q *Question) { q.Options[1].Default = true },
		"no silent fail": func(q *Question) { q.SilentFailure = "  " },
		"one option":     func(q *Question) { q.Options = q.Options[:1] },
		"not editable":   func(q *Question) { q.Editable = false },
		"no text":        func(q *Question) { q.Text = "" },
		"bad id":         func(q *Question) { q.ID = "who reads" },
		"empty value":    func(q *Question) { q.Options[1].Value = "" },
		"empty label":    func(q *Question) { q.Options[1].Label = "" },
		"repeated label": func(q *Question) { q.Options[1].Label = "the Board" },
		"duplicate id":   func(q *Question) { q.ID = "period" },
		"missing id":     func(q *Question) { q.ID = "" },
		"no options":     func(q *Question) { q.Options = nil },
	} {
		t.Run(name, func(t *testing.T) {
			q := audienceQ()
			mutate(&q)
			if err := ValidateQuestions([]Question{q, periodQ()}); err == nil {
				t.Fatal("accepted")
			} else {
				t.Log(err)
			}
		})
	}
	if err := ValidateQuestions(nil); err == nil {
		t.Error("an empty round was accepted")
	}
}

// DA-A3: in autonomous mode every unanswered question takes its default,
// with a note for the delivery report; given answers are kept.
func TestDefaults(t *testing.T) {
	r := Round{N: 1, Questions: []Question{audienceQ(), periodQ()}}
	got := Defaults(r, DefaultWait)
	want := []Answer{
		{QuestionID: "audience", Value: "The brief is for the board of directors.", Defaulted: true, Note: "no answer after 10m0s; took the default: The board"},
		{QuestionID: "period", Value: "Cover January to June 2025.", Defaulted: true, Note: "no answer after 10m0s; took the default: First half of 2025"},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Defaults = %+v", got)
	}
	r.Answers = []Answer{{QuestionID: "period", Value: "Cover the last twelve months."}}
	got = Defaults(r, 5*time.Minute)
	if got[0].Note != "no answer after 5m0s; took the default: The board" || got[1] != r.Answers[0] {
		t.Fatalf("Defaults with an answer = %+v", got)
	}
}

// DA-B4: the files people read are plain: options numbered, the
// suggestion marked, the silent failure said, the own-answer way offered.
func TestMarkdown(t *testing.T) {
	r := Round{N: 2, Questions: []Question{audienceQ(), periodQ()}}
	q := QuestionsMarkdown(r)
	for _, want := range []string{
		"# Questions before we start (round 2)",
		"## 1. Who will read the brief?",
		"1. The board (suggested) — The brief is for the board of directors.",
		"2. The sales team — The brief is for the sales team.",
		"3. Something else: write your own answer",
		"If the suggested answer is wrong: The brief would be pitched",
		"## 2. Which period should the figures cover?",
		"4. Something else",
	} {
		if !strings.Contains(q, want) {
			t.Errorf("questions lack %q:\n%s", want, q)
		}
	}
	r.Answers = []Answer{
		{QuestionID: "audience", Value: "The brief is for the sales team."},
		{QuestionID: "period", Value: "Cover July 2024 to June 2025, by quarter.", Note: "own answer"},
	}
	a := AnswersMarkdown(r)
	for _, want := range []string{
		"# Answers (round 2)",
		"Answer: The brief is for the sales team.\n\nChosen: option 2, The sales team.",
		"Answer: Cover July 2024 to June 2025, by quarter.\n\nWritten in the person's own words.",
	} {
		if !strings.Contains(a, want) {
			t.Errorf("answers lack %q:\n%s", want, a)
		}
	}
	r.Answers = Defaults(Round{N: 2, Questions: r.Questions}, DefaultWait)
	if a := AnswersMarkdown(r); !strings.Contains(a, "No answer came, so we went ahead with the suggested answer. (no answer after 10m0s; took the default: The board)") {
		t.Errorf("defaulted answers:\n%s", a)
	}
	r.Answers = r.Answers[:1]
	if a := AnswersMarkdown(r); !strings.Contains(a, "No answer yet.") {
		t.Errorf("missing answer:\n%s", a)
	}
}

// DA-A3: Ask at a terminal — a number, an empty line, free text, EOF.
func TestAsk(t *testing.T) {
	ctx := context.Background()
	q := periodQ()
	for _, tc := range []struct {
		name, input string
		want        Answer
		prompts     int
	}{
		{"number", "2\n", Answer{QuestionID: "period", Value: "Cover January to December 2024."}, 1},
		{"number with spaces", "  3 \r\n", Answer{QuestionID: "period", Value: "Cover the last twelve months."}, 1},
		{"empty line", "\n", Answer{QuestionID: "period", Value: "Cover January to June 2025.", Note: "accepted the suggested answer: First half of 2025"}, 1},
		{"free text", "Q3 2025 only\n", Answer{QuestionID: "period", Value: "Q3 2025 only", Note: "own answer"}, 1},
		{"label typed", "all of 2024\n", Answer{QuestionID: "period", Value: "Cover January to December 2024."}, 1},
		{"free text at EOF", "Q3 2025 only", Answer{QuestionID: "period", Value: "Q3 2025 only", Note: "own answer"}, 1},
		{"EOF", "", Answer{QuestionID: "period", Value: "Cover January to June 2025.", Defaulted: true, Note: "no answer (the input ended); took the default: First half of 2025"}, 1},
		{"no such option, then one", "7\n1\n", Answer{QuestionID: "period", Value: "Cover January to June 2025."}, 2},
		{"no such option, then EOF", "0\n9", Answer{QuestionID: "period", Value: "Cover January to June 2025.", Defaulted: true,
			Note: `no usable answer (the input ended after "9", which is no option); took the default: First half of 2025`}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			got, err := Ask(ctx, iotest.OneByteReader(strings.NewReader(tc.input)), &out, q)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("answer = %+v, want %+v", got, tc.want)
			}
			o := out.String()
			if n := strings.Count(o, "or write your own answer: "); n != tc.prompts {
				t.Errorf("%d prompts, want %d:\n%s", n, tc.prompts, o)
			}
			for _, want := range []string{"Which period should the figures cover?", "  1) First half of 2025   (suggested)", "  3) The last twelve months", "If the suggested answer is wrong: Figures", "Type 1-3, press Enter for 1"} {
				if !strings.Contains(o, want) {
					t.Errorf("output lacks %q:\n%s", want, o)
				}
			}
		})
	}
}

// DA-A3: several Asks share one reader without losing lines to a buffer.
func TestAskSharesReader(t *testing.T) {
	in := strings.NewReader("2\nfor investors\n")
	a1, err := Ask(context.Background(), in, io.Discard, periodQ())
	if err != nil {
		t.Fatal(err)
	}
	a2, err := Ask(context.Background(), in, io.Discard, audienceQ())
	if err != nil {
		t.Fatal(err)
	}
	if a1.Value != "Cover January to December 2024." || a2.Value != "for investors" {
		t.Fatalf("answers %+v %+v", a1, a2)
	}
}

// DA-A3: Ask honours a done context and reports a broken terminal.
func TestAskErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Ask(ctx, strings.NewReader("1\n"), io.Discard, periodQ()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	boom := errors.New("terminal gone")
	if _, err := Ask(context.Background(), iotest.ErrReader(boom), io.Discard, periodQ()); !errors.Is(err, boom) {
		t.Errorf("read error: %v", err)
	}
	q := periodQ()
	q.Options[0].Default = false
	if _, err := Ask(context.Background(), strings.NewReader("1\n"), io.Discard, q); err == nil {
		t.Error("a question without a default was asked")
	}
}

const rawTask = `Write a brief about our three product lines for the board of directors.
It must include a revenue table per product line, as a report of at most 10 pages.
Leave out any personnel or salary data. Every figure must cite the input file.
Use figures as of the end of June 2025.`

func outcome() Outcome {
	r := Round{N: 1, Questions: []Question{periodQ()}}
	r.Answers = Defaults(r, DefaultWait)
	return Outcome{
		Contracts: []Proposed{{
			Name:   "brief",
			Intent: "A board brief on the three product lines.",
			Checks: []contract.Check{{Kind: contract.FileExists, Path: "brief.md"}},
		}},
		Constraints: []harness.Constraint{
			{ID: "C1", Kind: harness.Audience, Text: "For the board.", Quote: "for the board of directors", Source: harness.TaskSource},
			{ID: "C2", Kind: harness.Form, Text: "At most 10 pages.", Quote: "a report of at most 10 pages", Source: harness.TaskSource},
			{ID: "C3", Kind: harness.TimeWindow, Text: "January to June 2025.", Quote: "Cover January to June 2025", Source: harness.AnswersSource(1)},
			{ID: "C4", Kind: harness.MustInclude, Text: "A revenue table per line.", Quote: "include a revenue table per product line", Source: harness.TaskSource},
			{ID: "C5", Kind: harness.Exclude, Text: "No personnel data.", Quote: "Leave out any personnel or salary data", Source: harness.TaskSource},
			{ID: "C6", Kind: harness.Quality, Text: "Figures cite inputs.", Quote: "Every figure must cite the input file", Source: harness.TaskSource},
		},
		Rounds: []Round{r},
	}
}

// F-D3.5 / DA-B3: a discussion's outcome is valid contracts plus sourced
// constraints; a constraint quoting the default answer counts, since the
// answers file records it.
func TestOutcomeValidate(t *testing.T) {
	o := outcome()
	if err := o.Validate(Sources(rawTask, o.Rounds)); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Outcome){
		"no contract":        func(o *Outcome) { o.Contracts = nil },
		"bad name":           func(o *Outcome) { o.Contracts[0].Name = "the brief" },
		"duplicate name":     func(o *Outcome) { o.Contracts = append(o.Contracts, o.Contracts[0]) },
		"invalid contract":   func(o *Outcome) { o.Contracts[0].Checks = nil },
		"invalid check":      func(o *Outcome) { o.Contracts[0].Checks[0].Path = "../x" },
		"unsourced":          func(o *Outcome) { o.Constraints[5].Quote = "figures follow IFRS reporting standards" },
		"kind missing":       func(o *Outcome) { o.Constraints = o.Constraints[:5] },
		"fast path + rounds": func(o *Outcome) { o.FastPath = true },
		"no rounds":          func(o *Outcome) { o.Rounds = nil; o.Constraints[2].Source = harness.TaskSource },
		"unanswered":         func(o *Outcome) { o.Rounds[0].Answers = nil },
		"answered twice":     func(o *Outcome) { o.Rounds[0].Answers = append(o.Rounds[0].Answers, o.Rounds[0].Answers[0]) },
		"unknown answer":     func(o *Outcome) { o.Rounds[0].Answers[0].QuestionID = "x" },
		"misnumbered round":  func(o *Outcome) { o.Rounds[0].N = 2 },
		"round not held":     func(o *Outcome) { o.Constraints[2].Source = harness.AnswersSource(2) },
	} {
		t.Run(name, func(t *testing.T) {
			o := outcome()
			mutate(&o)
			err := o.Validate(Sources(rawTask, o.Rounds))
			if err == nil {
				t.Fatal("accepted")
			}
			t.Log(err)
		})
	}
	t.Run("fast path", func(t *testing.T) {
		o := outcome()
		o.FastPath, o.Rounds = true, nil
		// Without the round, the time window has no source: a fast path
		// needs a task that states all six kinds.
		err := o.Validate(Sources(rawTask, nil))
		if err == nil || !strings.Contains(err.Error(), harness.CodeUnsourced) {
			t.Fatalf("err = %v", err)
		}
		o.Constraints[2] = harness.Constraint{ID: "C3", Kind: harness.TimeWindow, Text: "Figures as of 30 June 2025.", Quote: "figures as of the end of June 2025", Source: harness.TaskSource}
		if err := o.Validate(Sources(rawTask, nil)); err != nil {
			t.Fatal(err)
		}
	})
}
