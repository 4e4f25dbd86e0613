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
)

func metaRound(n int, turns ...script.Turn) script.Session {
	return script.Session{Role: model.Meta, Match: "harness", Attempt: n, Turns: turns}
}

func reviewer(n int, turns ...script.Turn) script.Session {
	return script.Session{Role: model.Reviewer, Offers: intake.ToolSubmitVerdict, Attempt: n, Turns: turns}
}

func done() script.Turn { return turn(call(intake.ToolHarnessDone, map[string]any{})) }

// The full happy path for a small office task (a one-page brief from a
// CSV): questions → defaults → proposal → harness → precheck → review
// pass (F-D3.5, DA-B2, DA-B3, DA-A2, DA-A5). Every step is recorded
// before its effect, and the Reviewer sees only the packet.
func TestHappyPath(t *testing.T) {
	dir := newRun(t)
	rec := &recorder{m: newScript(t,
		script.Session{Role: model.Meta, Match: "discussion", Turns: []script.Turn{
			turn(call(intake.ToolAskQuestions, map[string]any{"questions": questions()})),
			turn(call(intake.ToolPropose, proposal(false, constraints()))),
		}},
		metaRound(1,
			turn(call("read_file", map[string]any{"path": "inputs/inventory.md"})),
			writeAll(),
			done()),
		reviewer(1, pass()),
	)}
	cfg, j := config(t, dir, rec)
	ctx := context.Background()
	o, err := intake.Discuss(ctx, cfg, rawTask)
	if err != nil {
		t.Fatal(err)
	}
	res, err := intake.Bootstrap(ctx, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed || res.Rounds != 1 || !strings.HasPrefix(res.Review, "accepted") {
		t.Fatalf("result %+v", res)
	}
	want := []string{intake.StepTask, intake.StepInventory, intake.StepQuestionRound, intake.StepAnswers, intake.StepContractsProposed,
		intake.StepHarnessWrite, intake.StepHarnessWrite, intake.StepHarnessWrite, intake.StepHarnessWrite,
		intake.StepBootstrapPrecheck, intake.StepBootstrapReview}
	if !slices.Equal(j.kinds(), want) {
		t.Errorf("steps\n%v\nwant\n%v", j.kinds(), want)
	}
	for _, s := range j.of(intake.StepHarnessWrite) {
		if s.Author != "meta" || s.Reason == "" || !strings.HasPrefix(s.Path, "harness/") || len(s.SHA256) != 64 {
			t.Errorf("harness_write step %+v", s)
		}
	}
	if p := j.of(intake.StepBootstrapPrecheck)[0]; !p.Passed || len(p.Problems) != 0 {
		t.Errorf("precheck %+v", p)
	}
	if r := j.of(intake.StepBootstrapReview)[0]; !r.Passed || r.Author != "reviewer" {
		t.Errorf("review %+v", r)
	}
	j.verify()
	if read(t, dir, "harness/sop/draft.md") != sopDraft {
		t.Error("sop not written")
	}

	// Meta's bootstrap prompt names the constraints with their quotes,
	// the table format, the marker convention and the inventory.
	mp := rec.first(model.Meta, intake.IntentBootstrap, 1)
	sys := mp.System + mp.Messages[0].Text
	for _, w := range []string{"[C3] time_window", `"The brief covers January to March 2025"`, "| Constraint | Kind | Lands in |",
		"[C1]", "inputs/inventory.md", "tools/scripts/<name>.py", "work/brief/"} {
		if !strings.Contains(sys, w) {
			t.Errorf("Meta's bootstrap prompt lacks %q", w)
		}
	}
	var names []string
	for _, sp := range mp.Tools {
		names = append(names, sp.Name)
	}
	slices.Sort(names)
	if want := []string{intake.ToolHarnessDone, harness.ToolName, "list_dir", "read_file"}; !slices.Equal(names, want) {
		t.Errorf("Meta's bootstrap tools %v", names)
	}
	// The Reviewer gets the packet and one tool, and nothing of Meta's.
	rp := rec.first(model.Reviewer, intake.IntentReview, 1)
	if rp == nil || len(rp.Tools) != 1 || rp.Tools[0].Name != intake.ToolSubmitVerdict || len(rp.Messages) != 1 {
		t.Fatalf("reviewer request %+v", rp)
	}
	packet := harness.ReviewPacket(rawTask, map[string]string{
		harness.QuestionsFile(1): read(t, dir, harness.QuestionsFile(1)),
		harness.AnswersSource(1): read(t, dir, harness.AnswersSource(1)),
	}, o.Constraints, map[string]string{
		harness.Methodology: methodology, harness.WorkerPrompt: workerPrompt, "sop/draft.md": sopDraft, harness.DoneCriteria: criteria,
	})
	if !strings.HasPrefix(rp.Messages[0].Text, packet) {
		t.Errorf("the reviewer's message is not the packet:\n%s", rp.Messages[0].Text)
	}
	for _, reason := range []string{"the method and the constraint table", "the steps of the brief"} {
		if strings.Contains(rp.Messages[0].Text+rp.System, reason) {
			t.Errorf("Meta's reason %q reached the reviewer", reason)
		}
	}
}

// DA-B3: a constraint placed in fewer than three places is sent back by
// the precheck; the fixed harness passes.
func TestBootstrapPrecheckUnderplaced(t *testing.T) {
	dir, o := bootstrapRun(t)
	rec := &recorder{m: newScript(t,
		metaRound(1,
			turn(hw(harness.Methodology, methodology, "method"), hw(harness.WorkerPrompt, workerPrompt, "prompt"),
				hw("sop/draft.md", sopDraftNoC2, "steps"), hw(harness.DoneCriteria, criteria, "checks")),
			done(),
			turn(hw("sop/draft.md", sopDraft, "place the one-page limit in the drafting step")),
			done()),
		reviewer(1, pass()),
	)}
	cfg, j := config(t, dir, rec)
	res, err := intake.Bootstrap(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed {
		t.Fatalf("result %+v", res)
	}
	pre := j.of(intake.StepBootstrapPrecheck)
	if len(pre) != 2 || pre[0].Passed || !pre[1].Passed {
		t.Fatalf("prechecks %+v", pre)
	}
	if !hasProblem(pre[0].Problems, harness.CodeUnderplaced+": C2") {
		t.Errorf("problems %v", pre[0].Problems)
	}
	res1 := toolResults(rec.last(model.Meta, intake.IntentBootstrap))
	var sent bool
	for _, r := range res1 {
		if r.IsError && strings.HasPrefix(r.Content, intake.CodePrecheck) && strings.Contains(r.Content, "C2") {
			sent = true
		}
	}
	if !sent {
		t.Errorf("the precheck's problems did not reach Meta: %+v", res1)
	}
	j.verify()
}

// DA-B1, DA-B3: done criteria with a check that can never pass are sent
// back — refused at write time by the Writer (a pattern that matches
// nothing), by the precheck (a file left from an interrupted bootstrap),
// and by the Reviewer when only the task shows it (400 lines for a
// one-page brief), whose issues start a second round.
func TestBootstrapImpossibleCriteria(t *testing.T) {
	t.Run("writer", func(t *testing.T) {
		dir, o := bootstrapRun(t)
		impossible := criteria + "- kind: matches\n  path: brief.md\n  text: '$x'\n"
		cfg, j := config(t, dir, newScript(t,
			metaRound(1,
				turn(hw(harness.DoneCriteria, impossible, "checks")),
				writeAll(),
				done()),
			reviewer(1, pass())))
		res, err := intake.Bootstrap(context.Background(), cfg, o)
		if err != nil || !res.Passed {
			t.Fatalf("%+v %v", res, err)
		}
		ref := j.of(intake.StepHarnessRefused)
		if len(ref) != 1 || ref[0].Path != "harness/done_criteria.yaml" || !hasProblem(ref[0].Problems, harness.CodeImpossible) {
			t.Errorf("harness_refused %+v", ref)
		}
	})
	t.Run("precheck", func(t *testing.T) {
		dir, o := bootstrapRun(t)
		write(t, dir, "harness/done_criteria.yaml", criteria+"- kind: file_min_lines\n  path: brief.md\n  min: 2000000\n")
		rec := &recorder{m: newScript(t,
			metaRound(1,
				turn(hw(harness.Methodology, methodology, "method"), hw(harness.WorkerPrompt, workerPrompt, "prompt"), hw("sop/draft.md", sopDraft, "steps")),
				done(),
				turn(hw(harness.DoneCriteria, criteria, "drop the impossible minimum")),
				done()),
			reviewer(1, pass()))}
		cfg, j := config(t, dir, rec)
		res, err := intake.Bootstrap(context.Background(), cfg, o)
		if err != nil || !res.Passed {
			t.Fatalf("%+v %v", res, err)
		}
		pre := j.of(intake.StepBootstrapPrecheck)
		if len(pre) != 2 || pre[0].Passed || !hasProblem(pre[0].Problems, harness.CodeImpossible) {
			t.Errorf("prechecks %+v", pre)
		}
		if p := rec.first(model.Meta, intake.IntentBootstrap, 1); !strings.Contains(p.Messages[0].Text, "These files exist already") {
			t.Error("Meta was not told of the file already there")
		}
	})
	t.Run("reviewer", func(t *testing.T) {
		dir, o := bootstrapRun(t)
		issue := map[string]any{"severity": "major", "category": "quality", "location": "harness/done_criteria.yaml, check 3",
			"description": "400 lines can never be met by the one-page brief the person asked for; drop the check."}
		rec := &recorder{m: newScript(t,
			metaRound(1,
				turn(hw(harness.Methodology, methodology, "method"), hw(harness.WorkerPrompt, workerPrompt, "prompt"),
					hw("sop/draft.md", sopDraft, "steps"), hw(harness.DoneCriteria, criteria400, "checks")),
				done()),
			metaRound(2,
				turn(hw(harness.DoneCriteria, criteria, "drop the 400-line minimum the reviewer found impossible")),
				done()),
			reviewer(1, turn(call(intake.ToolSubmitVerdict, map[string]any{"verdict": "needs_revision", "issues": []any{issue}, "summary": "One check cannot pass."}))),
			reviewer(2, pass()))}
		cfg, j := config(t, dir, rec)
		res, err := intake.Bootstrap(context.Background(), cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Passed || res.Rounds != 2 {
			t.Fatalf("result %+v", res)
		}
		rv := j.of(intake.StepBootstrapReview)
		if len(rv) != 2 || rv[0].Passed || !hasProblem(rv[0].Problems, "400 lines") || !rv[1].Passed {
			t.Errorf("reviews %+v", rv)
		}
		p2 := rec.first(model.Meta, intake.IntentBootstrap, 2)
		if p2 == nil || len(p2.Messages) != 1 || !strings.Contains(p2.Messages[0].Text, "400 lines can never be met") {
			t.Errorf("round 2 did not start fresh with the issues: %+v", p2)
		}
		if read(t, dir, "harness/done_criteria.yaml") != criteria {
			t.Error("criteria not rewritten")
		}
	})
}

// DA-A2: the review fails closed — a Reviewer that errs, never submits,
// or only sends malformed verdicts does not pass, and nothing goes back
// to Meta (it cannot fix a review that did not happen).
func TestBootstrapReviewFailsClosed(t *testing.T) {
	for name, rv := range map[string][]script.Session{
		"reviewer errors": nil, // no session: the model call fails
		"never submits": {reviewer(1, script.Turn{Text: "Looks fine."}, script.Turn{Text: "Really fine."},
			script.Turn{Text: "Fine."}, script.Turn{Text: "Pass."})},
		"malformed": {reviewer(1, slices.Repeat([]script.Turn{turn(call(intake.ToolSubmitVerdict, map[string]any{"verdict": "pass"}))}, 4)...)},
		"nothing to act on": {reviewer(1, slices.Repeat([]script.Turn{turn(call(intake.ToolSubmitVerdict,
			map[string]any{"verdict": "pass", "issues": []any{map[string]any{"severity": "minor", "category": "quality", "location": "somewhere else", "description": "x"}}, "summary": "ok"}))}, 4)...)},
	} {
		t.Run(name, func(t *testing.T) {
			dir, o := bootstrapRun(t)
			sessions := append([]script.Session{metaRound(1, writeAll(), done())}, rv...)
			cfg, j := config(t, dir, newScript(t, sessions...))
			res, err := intake.Bootstrap(context.Background(), cfg, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Passed || res.Rounds != 1 || !strings.Contains(res.Review, "could not be reviewed") || len(res.Problems) != 1 {
				t.Errorf("result %+v", res)
			}
			if r := j.of(intake.StepBootstrapReview); len(r) != 1 || r[0].Passed || !strings.Contains(r[0].Detail, "not accepted") {
				t.Errorf("review step %+v", r)
			}
		})
	}
}

// DA-A2: after MaxReviewRounds reviews that do not pass, the result is
// not passed, with the last issues and a plain explanation.
func TestBootstrapReviewRoundsExhausted(t *testing.T) {
	dir, o := bootstrapRun(t)
	needs := turn(call(intake.ToolSubmitVerdict, map[string]any{"verdict": "needs_revision", "summary": "Still vague.",
		"issues": []any{map[string]any{"severity": "major", "category": "quality", "location": "harness/sop/draft.md step 4", "description": "Say how to lay out one page."}}}))
	cfg, j := config(t, dir, newScript(t,
		metaRound(1, writeAll(), done()),
		metaRound(2, done()),
		script.Session{Role: model.Reviewer, Turns: []script.Turn{needs}}))
	cfg.MaxReviewRounds = 2
	res, err := intake.Bootstrap(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || res.Rounds != 2 || !hasProblem(res.Problems, "harness/sop/draft.md step 4") || !strings.Contains(res.Review, "not approved after 2 round(s)") {
		t.Errorf("result %+v", res)
	}
	if n := len(j.of(intake.StepBootstrapReview)); n != 2 {
		t.Errorf("%d reviews", n)
	}
}

// DA-A5: every harness_write is recorded before its file exists, and
// when the record fails nothing is written and the flow stops.
func TestBootstrapWriteRecordedFirst(t *testing.T) {
	dir, o := bootstrapRun(t)
	cfg, j := config(t, dir, newScript(t, metaRound(1, writeAll(), done()), reviewer(1, pass())))
	seen := 0
	boom := errors.New("journal unavailable")
	j.fail = func(s intake.Step) error {
		if s.Kind != intake.StepHarnessWrite {
			return nil
		}
		seen++
		if exists(dir, s.Path) {
			t.Errorf("%s exists before its harness_write step", s.Path)
		}
		if s.Path == "harness/sop/draft.md" {
			return boom
		}
		return nil
	}
	_, err := intake.Bootstrap(context.Background(), cfg, o)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if seen != 3 || exists(dir, "harness/sop/draft.md") || !exists(dir, "harness/methodology.md") {
		t.Errorf("seen %d; the write whose record failed happened anyway, or an earlier one did not", seen)
	}
}

// DA-A5: a harness folder holding a file no harness_write can have made
// (outside the whitelist) is the host's problem, not Meta's.
func TestBootstrapForeignFile(t *testing.T) {
	dir, o := bootstrapRun(t)
	write(t, dir, "harness/notes.txt", "hand-made")
	cfg, _ := config(t, dir, newScript(t, metaRound(1, done())))
	if _, err := intake.Bootstrap(context.Background(), cfg, o); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("err = %v", err)
	}
}

// F-D3.5: Bootstrap needs the discussion first.
func TestBootstrapNeedsDiscussion(t *testing.T) {
	dir := newRun(t)
	cfg, _ := config(t, dir, newScript(t, metaRound(1, done())))
	if _, err := intake.Bootstrap(context.Background(), cfg, outcome(t)); err == nil || !strings.Contains(err.Error(), "inputs/task.md") {
		t.Errorf("err = %v", err)
	}
}
