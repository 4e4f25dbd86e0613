package intake_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fractal-harness/fractal/harness"
	"github.com/fractal-harness/fractal/intake"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/script"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/usermsg"
)

// F-D3.5, DA-A3, DA-B4: a raw task with open points gets questions with
// options; in autonomous mode the defaults are taken, written to
// round_1_answers.md with a note saying so, and handed back to Meta,
// whose proposal quoting them is accepted.
func TestDiscussAutonomousTakesDefaults(t *testing.T) {
	dir := newRun(t)
	rec := &recorder{m: newScript(t, script.Session{Role: model.Meta, Match: "discussion", Turns: []script.Turn{
		turn(call(intake.ToolAskQuestions, map[string]any{"questions": questions()})),
		turn(call(intake.ToolPropose, proposal(false, constraints()))),
	}})}
	cfg, j := config(t, dir, rec)
	o, err := intake.Discuss(context.Background(), cfg, rawTask)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Rounds) != 1 || len(o.Contracts) != 1 || o.Contracts[0].Name != "brief" || len(o.Constraints) != 6 {
		t.Fatalf("outcome %+v", o)
	}
	for _, a := range o.Rounds[0].Answers {
		if !a.Defaulted || !strings.Contains(a.Note, "took the default") {
			t.Errorf("answer %+v not defaulted", a)
		}
	}
	if got := read(t, dir, "inputs/task.md"); got != rawTask {
		t.Errorf("task.md = %q", got)
	}
	qs := read(t, dir, harness.QuestionsFile(1))
	if !strings.Contains(qs, "January to March 2025 (suggested)") || !strings.Contains(qs, "Something else: write your own answer") {
		t.Errorf("questions file:\n%s", qs)
	}
	ans := read(t, dir, harness.AnswersSource(1))
	for _, want := range []string{
		"Answer: The brief covers January to March 2025.",
		"No answer came, so we went ahead with the suggested answer.",
		"no answer after 10ms; took the default: January to March 2025",
	} {
		if !strings.Contains(ans, want) {
			t.Errorf("answers file lacks %q:\n%s", want, ans)
		}
	}
	if want := []string{intake.StepTask, intake.StepInventory, intake.StepQuestionRound, intake.StepAnswers, intake.StepContractsProposed}; !slices.Equal(j.kinds(), want) {
		t.Errorf("steps %v, want %v", j.kinds(), want)
	}
	if s := j.of(intake.StepAnswers)[0]; s.Author != "default" || !strings.Contains(s.Detail, "3 taken by default") {
		t.Errorf("answers step %+v", s)
	}
	j.verify()

	// Meta's first request carries the task and the inventory; the second
	// the answers, with the note that nobody was there to answer.
	first := rec.first(model.Meta, intake.IntentDiscuss, 1)
	if first.Instance != intake.Instance || !strings.Contains(first.Messages[0].Text, "sales director") || !strings.Contains(first.Messages[0].Text, "inputs/sales.csv") {
		t.Errorf("first prompt:\n%s", first.Messages[0].Text)
	}
	res := toolResults(rec.last(model.Meta, intake.IntentDiscuss))
	if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Content, "nobody answered") || !strings.Contains(res[0].Content, harness.AnswersSource(1)) {
		t.Errorf("answers given back: %+v", res)
	}
}

// DA-B3: a constraint invented without a source (domain habit) is
// refused, recorded as constraint_refused, and the corrected proposal is
// accepted.
func TestDiscussRefusesUnsourcedConstraint(t *testing.T) {
	dir := newRun(t)
	invented := append(constraints(), harness.Constraint{ID: "C7", Kind: harness.Quality,
		Text: "Use the usual sales-brief layout.", Quote: "standard practice for sales briefs"})
	rec := &recorder{m: newScript(t, script.Session{Role: model.Meta, Match: "discussion", Turns: []script.Turn{
		turn(call(intake.ToolAskQuestions, map[string]any{"questions": questions()})),
		turn(call(intake.ToolPropose, proposal(false, invented))),
		turn(call(intake.ToolPropose, proposal(false, constraints()))),
	}})}
	cfg, j := config(t, dir, rec)
	o, err := intake.Discuss(context.Background(), cfg, rawTask)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Constraints) != 6 {
		t.Errorf("the invented constraint survived: %+v", o.Constraints)
	}
	refused := j.of(intake.StepConstraintRefused)
	if len(refused) != 1 || !hasProblem(refused[0].Problems, harness.CodeUnsourced) || !hasProblem(refused[0].Problems, "C7") {
		t.Fatalf("constraint_refused steps %+v", refused)
	}
	if len(j.of(intake.StepContractsProposed)) != 1 {
		t.Errorf("steps %v", j.kinds())
	}
	res := toolResults(rec.last(model.Meta, intake.IntentDiscuss))
	if r := res[1]; !r.IsError || !strings.Contains(r.Content, intake.CodeProposal) || !strings.Contains(r.Content, "not sources") {
		t.Errorf("refusal given to Meta: %+v", r)
	}
}

// DA-B4: question text with framework jargon ("the worker will…") is
// refused with a structured error before anyone sees it; nothing is
// written, and the rephrased round goes through.
func TestDiscussRefusesJargonInQuestions(t *testing.T) {
	dir := newRun(t)
	bad := questions()
	bad[0]["text"] = "Which months should the worker cover in the brief?"
	rec := &recorder{m: newScript(t, script.Session{Role: model.Meta, Match: "discussion", Turns: []script.Turn{
		turn(call(intake.ToolAskQuestions, map[string]any{"questions": bad})),
		turn(call(intake.ToolAskQuestions, map[string]any{"questions": questions()})),
		turn(call(intake.ToolPropose, proposal(false, constraints()))),
	}})}
	cfg, j := config(t, dir, rec)
	cfg.Record = func(s intake.Step) error {
		if s.Kind == intake.StepQuestionsRefused && exists(dir, harness.QuestionsFile(1)) {
			t.Error("questions written before they were refused")
		}
		return j.record(s)
	}
	if _, err := intake.Discuss(context.Background(), cfg, rawTask); err != nil {
		t.Fatal(err)
	}
	ref := j.of(intake.StepQuestionsRefused)
	if len(ref) != 1 || !hasProblem(ref[0].Problems, `"worker" in the text`) || !hasProblem(ref[0].Problems, "question 1 (period)") {
		t.Fatalf("questions_refused %+v", ref)
	}
	res := toolResults(rec.last(model.Meta, intake.IntentDiscuss))
	if r := res[0]; !r.IsError || !strings.HasPrefix(r.Content, intake.CodeQuestions) || !strings.Contains(r.Content, "try: I / the assistant") {
		t.Errorf("refusal given to Meta: %+v", r)
	}
	if strings.Contains(read(t, dir, harness.QuestionsFile(1)), "worker") {
		t.Error("the refused wording reached the questions file")
	}
	if exists(dir, harness.QuestionsFile(2)) {
		t.Error("a refused round was counted as a round")
	}
}

// DA-A3, DA-B4: in interactive mode the answers come from the terminal —
// a number picks an option, Enter takes the suggestion, free text is the
// person's own answer — and the proposal is shown in plain words; a
// correction becomes a clarification round the revised proposal quotes,
// and Enter confirms.
func TestDiscussInteractive(t *testing.T) {
	dir := newRun(t)
	a1, a2 := harness.AnswersSource(1), harness.AnswersSource(2)
	cs := constraints()
	cs[2].Quote = "The brief covers January to December 2024" // option 2, picked by number
	cs[2].Text = "Covers January to December 2024."
	cs[5].Quote, cs[5].Text = "Cite the sheet and row for every figure", "Every figure cites its row in sales.csv." // free text
	revised := append(append(cs[:0:0], cs...), harness.Constraint{ID: "C7", Kind: harness.MustInclude,
		Text: "A chart of the monthly revenue.", Quote: "add a chart of monthly revenue", Source: a2})
	for _, c := range cs {
		if c.Source != harness.TaskSource && c.Source != a1 {
			t.Fatalf("fixture: %s", c.Source)
		}
	}
	rec := &recorder{m: newScript(t, script.Session{Role: model.Meta, Match: "discussion", Turns: []script.Turn{
		turn(call(intake.ToolAskQuestions, map[string]any{"questions": questions()})),
		turn(call(intake.ToolPropose, proposal(false, cs))),
		turn(call(intake.ToolPropose, proposal(false, revised))),
	}})}
	cfg, j := config(t, dir, rec)
	var out strings.Builder
	cfg.Mode = policy.Interactive
	cfg.In = strings.NewReader("2\n\nCite the sheet and row for every figure\n" + // the three answers
		"no\nAlso add a chart of monthly revenue\n" + // the first proposal is corrected
		"\n") // the second is confirmed
	cfg.Out = &out
	o, err := intake.Discuss(context.Background(), cfg, rawTask)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Rounds) != 2 || len(o.Constraints) != 7 {
		t.Fatalf("outcome rounds %d constraints %d", len(o.Rounds), len(o.Constraints))
	}
	got := o.Rounds[0].Answers
	if got[0].Value != "The brief covers January to December 2024." || got[0].Defaulted ||
		got[1].Value != "Nothing needs to be left out." || got[1].Defaulted ||
		got[2].Value != "Cite the sheet and row for every figure" {
		t.Errorf("answers %+v", got)
	}
	ans1 := read(t, dir, a1)
	for _, want := range []string{"Chosen: option 2, All of 2024.", "Chosen: option 1, Nothing.", "Written in the person's own words."} {
		if !strings.Contains(ans1, want) {
			t.Errorf("round 1 answers lack %q:\n%s", want, ans1)
		}
	}
	if ans2 := read(t, dir, a2); !strings.Contains(ans2, "Answer: Also add a chart of monthly revenue") {
		t.Errorf("the correction is not a source:\n%s", ans2)
	}
	text := out.String()
	for _, want := range []string{"Which months should the brief cover?", "What will be delivered:", "It will be checked that:",
		"the file brief.md exists", "Who it is for: Written for the sales director.", "Leave out: nothing particular",
		"Is this right?", "What should change?"} {
		if !strings.Contains(text, want) {
			t.Errorf("terminal lacks %q:\n%s", want, text)
		}
	}
	// Everything the person saw is free of framework words (DA-B4).
	if err := usermsg.Validate(usermsg.Message{Kind: usermsg.Notification, Text: text}); err != nil {
		t.Errorf("terminal: %v", err)
	}
	conf := j.of(intake.StepConfirmation)
	if len(conf) != 2 || conf[0].Passed || conf[0].Detail != "Also add a chart of monthly revenue" || !conf[1].Passed {
		t.Errorf("confirmation steps %+v", conf)
	}
	if s := j.of(intake.StepAnswers); len(s) != 2 || s[0].Author != "person" {
		t.Errorf("answers steps %+v", s)
	}
	res := toolResults(rec.last(model.Meta, intake.IntentDiscuss))
	if r := res[1]; !r.IsError || !strings.Contains(r.Content, intake.CodeCorrected) || !strings.Contains(r.Content, a2) {
		t.Errorf("correction given to Meta: %+v", r)
	}
	j.verify()
}

// DA-B4: in interactive mode the summary the person confirms must be in
// plain words; an intent with framework jargon is refused
// (proposal_refused) before the person sees it, and the rephrased one is
// shown and confirmed.
func TestDiscussPlainSummary(t *testing.T) {
	dir := newRun(t)
	jargon := proposal(false, constraints())
	jargon["contracts"].([]any)[0].(map[string]any)["intent"] = "A brief the worker writes for the sales director."
	rec := &recorder{m: newScript(t, script.Session{Role: model.Meta, Match: "discussion", Turns: []script.Turn{
		turn(call(intake.ToolAskQuestions, map[string]any{"questions": questions()})),
		turn(call(intake.ToolPropose, jargon)),
		turn(call(intake.ToolPropose, proposal(false, constraints()))),
	}})}
	cfg, j := config(t, dir, rec)
	var out strings.Builder
	cfg.Mode, cfg.In, cfg.Out = policy.Interactive, strings.NewReader("\n\n\ny\n"), &out
	if _, err := intake.Discuss(context.Background(), cfg, rawTask); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "worker") {
		t.Errorf("jargon reached the person:\n%s", out.String())
	}
	ref := j.of(intake.StepProposalRefused)
	if len(ref) != 1 || !hasProblem(ref[0].Problems, intake.CodePlain) || len(j.of(intake.StepConstraintRefused)) != 0 {
		t.Errorf("steps %v", j.kinds())
	}
	if c := j.of(intake.StepConfirmation); len(c) != 1 || !c[0].Passed {
		t.Errorf("confirmation %+v", c)
	}
}

// DA-A3: at most MaxRounds rounds; a further round is refused with
// "propose now with what you have".
func TestDiscussRoundLimit(t *testing.T) {
	dir := newRun(t)
	rec := &recorder{m: newScript(t, script.Session{Role: model.Meta, Match: "discussion", Turns: []script.Turn{
		turn(call(intake.ToolAskQuestions, map[string]any{"questions": questions()})),
		turn(call(intake.ToolAskQuestions, map[string]any{"questions": questions()})),
		turn(call(intake.ToolPropose, proposal(false, constraints()))),
	}})}
	cfg, _ := config(t, dir, rec)
	cfg.MaxRounds = 1
	o, err := intake.Discuss(context.Background(), cfg, rawTask)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Rounds) != 1 || exists(dir, harness.QuestionsFile(2)) {
		t.Errorf("a second round took place")
	}
	res := toolResults(rec.last(model.Meta, intake.IntentDiscuss))
	if r := res[1]; !r.IsError || !strings.Contains(r.Content, "propose now with what you have") {
		t.Errorf("second round: %+v", r)
	}
}

// F-D3.5: a discussion that does not converge is an error for the host,
// not a silent outcome; so is a failed Record, which stops the flow
// before its effect.
func TestDiscussErrors(t *testing.T) {
	t.Run("meta never proposes", func(t *testing.T) {
		dir := newRun(t)
		cfg, _ := config(t, dir, newScript(t, script.Session{Role: model.Meta, Match: "discussion", Turns: []script.Turn{
			{Text: "Thinking."}, {Text: "Still thinking."}, {Text: "Nearly."}, {Text: "Done?"},
		}}))
		if _, err := intake.Discuss(context.Background(), cfg, rawTask); err == nil || !strings.Contains(err.Error(), "without calling a tool") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("record fails", func(t *testing.T) {
		dir := newRun(t)
		cfg, j := config(t, dir, newScript(t, script.Session{Role: model.Meta, Turns: []script.Turn{{Text: "x"}}}))
		boom := errors.New("journal full")
		j.fail = func(s intake.Step) error {
			if s.Kind == intake.StepTask {
				return boom
			}
			return nil
		}
		if _, err := intake.Discuss(context.Background(), cfg, rawTask); !errors.Is(err, boom) {
			t.Errorf("err = %v", err)
		}
		if exists(dir, "inputs/task.md") {
			t.Error("task.md written although its step was not recorded")
		}
	})
	t.Run("bad config", func(t *testing.T) {
		cfg := intake.Config{Dir: "relative", Mode: policy.Interactive}
		if _, err := intake.Discuss(context.Background(), cfg, rawTask); err == nil ||
			!strings.Contains(err.Error(), "no model") || !strings.Contains(err.Error(), "absolute") || !strings.Contains(err.Error(), "terminal") {
			t.Errorf("err = %v", err)
		}
	})
}

// DA-A3, DA-B4: a round's structural faults and its words are listed
// together, each fault once, so Meta can fix everything in one go.
func TestQuestionFaultsListedOnce(t *testing.T) {
	dir := newRun(t)
	bad := questions()
	bad[1]["options"] = []map[string]any{{"label": "Nothing", "value": "Nothing needs to be left out."}, {"label": "Names", "value": "Nothing needs to be left out."}}
	bad[2]["silent_failure"] = "The journal would be wrong."
	rec := &recorder{m: newScript(t, script.Session{Role: model.Meta, Match: "discussion", Turns: []script.Turn{
		turn(call(intake.ToolAskQuestions, map[string]any{"questions": bad})),
		turn(call(intake.ToolPropose, proposal(true, constraints()))),
	}})}
	cfg, j := config(t, dir, rec)
	if _, err := intake.Discuss(context.Background(), cfg, rawTask); err == nil {
		t.Fatal("a fast path quoting a round that never took place was accepted")
	}
	ps := j.of(intake.StepQuestionsRefused)[0].Problems
	want := []string{"question 2 (leave_out): mark exactly one option as the default",
		"question 2 (leave_out): options 1 and 2 have the same value",
		"question 3 (sourcing): the user would not know these words"}
	if len(ps) != 3 || !strings.HasPrefix(ps[0], want[0]) || !strings.HasPrefix(ps[1], want[1]) || !strings.HasPrefix(ps[2], want[2]) {
		t.Errorf("problems %q", ps)
	}
}
