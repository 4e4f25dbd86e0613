package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fractal-harness/fractal/discuss"
	"github.com/fractal-harness/fractal/harness"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/tool"
	"github.com/fractal-harness/fractal/usermsg"
)

// The tools of the discussion.
const (
	ToolAskQuestions = "ask_questions"
	ToolPropose      = "propose"
)

// maxCorrections bounds, separately, the proposals refused by validation
// and the proposals the person corrected: past it the discussion is not
// converging, and the host should hear about it rather than loop.
const maxCorrections = 5

// The refusal codes of the discussion tools.
const (
	CodeQuestions = "E-QUESTIONS" // a round of questions is malformed or not in plain words
	CodeRounds    = "E-ROUNDS"    // no clarification round is left
	CodeProposal  = "E-PROPOSAL"  // the proposal does not validate
	CodePlain     = "E-PLAIN"     // what the person would be shown holds framework words
	CodeCorrected = "E-CORRECTED" // the person did not confirm the proposal
)

var askQuestionsSpec = model.ToolSpec{
	Name: ToolAskQuestions,
	Description: "Ask the person a round of clarifying questions, in plain everyday words. Every question offers at least two options, " +
		"exactly one of them the suggested default (what happens if nobody answers), and says in silent_failure what would go wrong, unnoticed, " +
		"if the default were the wrong answer. The person may always write their own answer instead. Write each option's value as a full sentence " +
		"in the person's terms: it is recorded verbatim and is what constraints may quote. The answers come back as this tool's result.",
	Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "questions": {
      "type": "array", "minItems": 1,
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "description": "1-64 letters, digits, '-' or '_'; unique in the round"},
          "text": {"type": "string", "description": "the question, in plain words"},
          "options": {
            "type": "array", "minItems": 2,
            "items": {
              "type": "object",
              "properties": {
                "label": {"type": "string", "description": "what the person reads, short"},
                "value": {"type": "string", "description": "the answer recorded when chosen, a full sentence"},
                "default": {"type": "boolean", "description": "true on exactly one option: the suggestion"}
              },
              "required": ["label", "value"],
              "additionalProperties": false
            }
          },
          "silent_failure": {"type": "string", "description": "what goes wrong, unnoticed, if the default is the wrong answer"}
        },
        "required": ["id", "text", "options", "silent_failure"],
        "additionalProperties": false
      }
    }
  },
  "required": ["questions"],
  "additionalProperties": false
}`),
}

var proposeSpec = model.ToolSpec{
	Name: ToolPropose,
	Description: "Propose the outcome of the discussion: one or more contracts (each a name, which is the folder work/<name>/ the result is delivered in, " +
		"an intent, and checks a machine can evaluate, with paths relative to that folder) and the task's constraints, one per kind or more, " +
		"each quoting the person's own words (at least three words, copied exactly) from inputs/task.md or a clarification answers file. " +
		"Set fast_path to true only when you asked no questions. An invalid proposal is refused with every fault listed; fix them and propose again.",
	Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "fast_path": {"type": "boolean", "description": "true only when no questions were asked: the task itself states all six kinds"},
    "contracts": {
      "type": "array", "minItems": 1,
      "items": {
        "type": "object",
        "properties": {
          "name": {"type": "string", "description": "1-64 letters, digits, '-' and '_': the folder work/<name>/"},
          "intent": {"type": "string", "description": "what is delivered, in plain words"},
          "checks": {
            "type": "array", "minItems": 1,
            "items": {
              "type": "object",
              "properties": {
                "kind": {"type": "string", "enum": ["file_exists", "file_min_lines", "file_min_bytes", "yaml_field_present", "dir_min_files", "script", "contains", "matches", "rubric"]},
                "path": {"type": "string", "description": "relative to the contract's folder"},
                "min": {"type": "integer"},
                "field": {"type": "string"},
                "glob": {"type": "string"},
                "text": {"type": "string"},
                "interpreter": {"type": "string"},
                "args": {"type": "array", "items": {"type": "string"}},
                "timeout_sec": {"type": "integer"},
                "note": {"type": "string"}
              },
              "required": ["kind"],
              "additionalProperties": false
            }
          }
        },
        "required": ["name", "intent", "checks"],
        "additionalProperties": false
      }
    },
    "constraints": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "description": "C1, C2, ..."},
          "kind": {"type": "string", "enum": ["audience", "form", "time_window", "must_include", "exclude", "quality"]},
          "text": {"type": "string", "description": "the constraint as the work must follow it, or \"none stated\""},
          "quote": {"type": "string", "description": "the person's words it comes from, copied exactly from source"},
          "source": {"type": "string", "description": "inputs/task.md or inputs/clarify/round_N_answers.md"}
        },
        "required": ["id", "kind", "text", "quote", "source"],
        "additionalProperties": false
      }
    }
  },
  "required": ["contracts", "constraints"],
  "additionalProperties": false
}`),
}

// Discuss turns the raw task into contracts and constraints (F-D3.5). It
// writes inputs/task.md, makes the inventory if inputs/inventory.md is
// absent, and runs a Meta session offering ask_questions, propose and the
// read-only read_file and list_dir over inputs/. Questions are put to the
// person (interactive) or take their defaults (autonomous); a proposal is
// validated against the person's words (Outcome.Validate with
// discuss.Sources), and in interactive mode shown to the person in plain
// words for confirmation. The returned Outcome is valid.
//
// The error is for what the host must handle: a failed Record, an IO or
// model error, a cancelled ctx, or a Meta session that does not converge
// (out of turns; more than five refused or corrected proposals).
func Discuss(ctx context.Context, cfg Config, rawTask string) (discuss.Outcome, error) {
	cfg, err := cfg.normalize(true)
	if err != nil {
		return discuss.Outcome{}, err
	}
	if strings.TrimSpace(rawTask) == "" {
		return discuss.Outcome{}, errors.New("intake: the task is empty")
	}
	// The file holds the task byte for byte: it is the text quotes are
	// checked against, now and at every later check.
	if err := cfg.recordAndWrite(Step{Kind: StepTask, Author: "person", Detail: "the task as the person gave it"}, TaskFile, []byte(rawTask)); err != nil {
		return discuss.Outcome{}, err
	}
	inv, err := ensureInventory(ctx, &cfg)
	if err != nil {
		return discuss.Outcome{}, err
	}
	d := &discussion{cfg: &cfg, raw: rawTask}
	host := map[string]hostTool{ToolAskQuestions: d.ask, ToolPropose: d.propose}
	s := newSession(&cfg, model.Meta, IntentDiscuss, 1, discussSystem(), discussPrompt(rawTask, inv, cfg.Mode, cfg.MaxRounds),
		readTools(), host, []model.ToolSpec{askQuestionsSpec, proposeSpec})
	if err := s.run(ctx); err != nil {
		return discuss.Outcome{}, err
	}
	return d.outcome, nil
}

// discussion is the state of one Discuss call.
type discussion struct {
	cfg     *Config
	raw     string
	rounds  []discuss.Round
	asked   int // rounds Meta asked; correction rounds do not count
	refused int // proposals refused by validation
	revised int // proposals the person corrected
	outcome discuss.Outcome
}

// ask handles ask_questions: validate, write the questions, get the
// answers, write them, hand them back.
func (d *discussion) ask(ctx context.Context, call model.ToolCall) (reply, error) {
	var a struct {
		Questions []discuss.Question `json:"questions"`
	}
	if err := decodeArgs(call.Args, &a, "questions"); err != nil {
		return refuse(err), nil
	}
	if d.asked >= d.cfg.MaxRounds {
		return refuse(tool.Errorf(CodeRounds, "you have asked %d round(s) of questions, the most allowed: propose now with what you have. "+
			"Where something is still open, keep to what the person's words and answers say; a constraint can only quote them", d.asked)), nil
	}
	for i := range a.Questions {
		a.Questions[i].Editable = true // the person may always write their own answer (DA-A3)
	}
	if problems := questionProblems(a.Questions); len(problems) > 0 {
		if err := d.cfg.record(Step{Kind: StepQuestionsRefused, Author: "meta", Problems: problems,
			Detail: fmt.Sprintf("%d question(s) refused before anyone saw them", len(a.Questions))}); err != nil {
			return reply{}, err
		}
		return refuse(tool.Errorf(CodeQuestions, "the questions were not asked; fix every point and ask again:\n%s", bullets(problems))), nil
	}
	r := discuss.Round{N: len(d.rounds) + 1, Questions: a.Questions}
	if err := d.cfg.recordAndWrite(Step{Kind: StepQuestionRound, Author: "meta",
		Detail: fmt.Sprintf("round %d: %d question(s)", r.N, len(r.Questions))},
		harness.QuestionsFile(r.N), []byte(discuss.QuestionsMarkdown(r))); err != nil {
		return reply{}, err
	}
	answers, author, err := d.answers(ctx, r)
	if err != nil {
		return reply{}, err
	}
	r.Answers = answers
	if err := d.writeAnswers(r, author); err != nil {
		return reply{}, err
	}
	d.rounds = append(d.rounds, r)
	d.asked++

	var b strings.Builder
	fmt.Fprintf(&b, "The answers of round %d are in %s. A constraint may quote them with that file as its source.\n\n", r.N, harness.AnswersSource(r.N))
	b.WriteString(discuss.AnswersMarkdown(r))
	if d.cfg.Mode == policy.Autonomous {
		b.WriteString("\nThis run is unattended: nobody answered, so every answer is the suggested default, and the final report will say so.\n")
	}
	if left := d.cfg.MaxRounds - d.asked; left > 0 {
		fmt.Fprintf(&b, "\nYou may ask %d more round(s) if something that changes the result is still open; otherwise propose.\n", left)
	} else {
		b.WriteString("\nNo more rounds of questions are allowed: propose now.\n")
	}
	return reply{text: b.String()}, nil
}

// questionProblems checks a round by discuss's rules (options, one
// default, a silent failure) and usermsg's (no framework words anywhere
// the person reads), one line per fault.
func questionProblems(qs []discuss.Question) []string {
	var problems []string
	for _, l := range errorLines(discuss.ValidateQuestions(qs)) {
		problems = append(problems, strings.TrimPrefix(l, "discuss: "))
	}
	for i, q := range qs {
		m := usermsg.Message{Kind: usermsg.Question, Text: q.Text, SilentFailure: q.SilentFailure}
		for _, o := range q.Options {
			m.Options = append(m.Options, usermsg.Option{Label: o.Label, Value: o.Value, Default: o.Default})
		}
		var ue *usermsg.Error
		if err := usermsg.Validate(m); errors.As(err, &ue) {
			name := fmt.Sprintf("question %d", i+1)
			if q.ID != "" {
				name += " (" + q.ID + ")"
			}
			if len(ue.Words) > 0 {
				problems = append(problems, name+": "+strings.TrimPrefix((&usermsg.Error{Words: ue.Words}).Error(), "usermsg: "))
			}
			// Every structural fault usermsg finds, discuss finds too, but
			// one: two options with the same value (discuss compares
			// labels). Only that one is added, so no fault is listed twice.
			for _, p := range ue.Problems {
				if strings.Contains(p, "same value") {
					problems = append(problems, name+": "+p)
				}
			}
		}
	}
	return problems
}

// answers gets round r's answers: from the terminal in interactive mode,
// else the defaults (autonomous mode reads no terminal).
func (d *discussion) answers(ctx context.Context, r discuss.Round) ([]discuss.Answer, string, error) {
	if d.cfg.Mode != policy.Interactive {
		// Autonomous: the person has until the wait is over to answer
		// (through the questions file); then the defaults stand, and the
		// answers file says so. The wait is real, so the note is true.
		select {
		case <-time.After(d.cfg.Wait):
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
		return discuss.Defaults(r, d.cfg.Wait), "default", nil
	}
	intro := fmt.Sprintf("\nA few questions before the work starts (round %d). Pick an option by its number, press Enter for the suggested answer, or write your own answer.\n", r.N)
	if _, err := io.WriteString(d.cfg.Out, intro); err != nil {
		return nil, "", fmt.Errorf("intake: %w", err)
	}
	var out []discuss.Answer
	for _, q := range r.Questions {
		a, err := discuss.Ask(ctx, d.cfg.In, d.cfg.Out, q)
		if err != nil {
			return nil, "", err
		}
		out = append(out, a)
	}
	return out, "person", nil
}

func (d *discussion) writeAnswers(r discuss.Round, author string) error {
	var notes []string
	defaulted := 0
	for _, a := range r.Answers {
		if a.Defaulted {
			defaulted++
		}
		if a.Note != "" {
			notes = append(notes, a.QuestionID+": "+a.Note)
		}
	}
	detail := fmt.Sprintf("round %d: %d answer(s), %d taken by default", r.N, len(r.Answers), defaulted)
	if len(notes) > 0 {
		detail += " (" + strings.Join(notes, "; ") + ")"
	}
	return d.cfg.recordAndWrite(Step{Kind: StepAnswers, Author: author, Detail: detail},
		harness.AnswersSource(r.N), []byte(discuss.AnswersMarkdown(r)))
}

// propose handles propose: validate, show, confirm.
func (d *discussion) propose(ctx context.Context, call model.ToolCall) (reply, error) {
	var a struct {
		FastPath    bool                 `json:"fast_path"`
		Contracts   []discuss.Proposed   `json:"contracts"`
		Constraints []harness.Constraint `json:"constraints"`
	}
	if err := decodeArgs(call.Args, &a, "fast_path, contracts and constraints"); err != nil {
		return refuse(err), nil
	}
	o := discuss.Outcome{Contracts: a.Contracts, Constraints: a.Constraints, FastPath: a.FastPath, Rounds: slices.Clone(d.rounds)}
	err := o.Validate(discuss.Sources(d.raw, d.rounds))
	var summary string
	if err == nil && d.cfg.Mode == policy.Interactive {
		// What the person will read must be in their words (DA-B4); the
		// intents and constraint texts are Meta's.
		summary = proposalSummary(o)
		if perr := usermsg.Validate(usermsg.Message{Kind: usermsg.Notification, Text: summary}); perr != nil {
			err = tool.Errorf(CodePlain, "the summary the person confirms would contain framework words; rephrase the contracts' intents and the constraints' texts in everyday words: %s",
				strings.TrimPrefix(perr.Error(), "usermsg: "))
		}
	}
	if err != nil {
		return d.refuseProposal(err)
	}
	if err := d.cfg.record(Step{Kind: StepContractsProposed, Author: "meta", Detail: proposalDetail(o)}); err != nil {
		return reply{}, err
	}
	if d.cfg.Mode != policy.Interactive {
		d.outcome = o
		return reply{text: "accepted: the discussion is over", done: true}, nil
	}

	ok, note, err := confirm(ctx, d.cfg.In, d.cfg.Out, summary)
	if err != nil {
		return reply{}, err
	}
	if ok {
		if err := d.cfg.record(Step{Kind: StepConfirmation, Author: "person", Passed: true, Detail: note}); err != nil {
			return reply{}, err
		}
		d.outcome = o
		return reply{text: "accepted: the person confirmed the proposal", done: true}, nil
	}
	return d.correct(note)
}

// refuseProposal records a refused proposal and tells Meta every fault.
func (d *discussion) refuseProposal(err error) (reply, error) {
	lines := errorLines(err)
	kind := StepProposalRefused
	if slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "E-CONSTRAINT") || strings.HasPrefix(l, "discuss: constraint ")
	}) {
		kind = StepConstraintRefused
	}
	if rerr := d.cfg.record(Step{Kind: kind, Author: "meta", Problems: lines, Detail: fmt.Sprintf("the proposal was refused: %d problem(s)", len(lines))}); rerr != nil {
		return reply{}, rerr
	}
	d.refused++
	if d.refused > maxCorrections {
		return reply{}, fmt.Errorf("intake: the proposal was refused %d times; the last time for:\n%s", d.refused, bullets(lines))
	}
	var b strings.Builder
	b.WriteString("The proposal was refused; nothing was accepted. Fix every point and call propose again:\n")
	b.WriteString(bullets(lines))
	if kind == StepConstraintRefused {
		b.WriteString("\nA constraint must quote the person's own words, at least three words copied exactly, from inputs/task.md or a clarification answers file; " +
			"knowledge of the domain, habit and what is usual are not sources. ")
		if left := d.cfg.MaxRounds - d.asked; left > 0 {
			fmt.Fprintf(&b, "If the person never said it, drop the constraint, or ask them (%d round(s) of questions left).\n", left)
		} else {
			b.WriteString("If the person never said it, drop the constraint.\n")
		}
	}
	return refuse(tool.Errorf(CodeProposal, "%s", b.String())), nil
}

// confirmQuestion is the question a correction is recorded under. Its
// options are what the terminal prompt offers (Enter or y: yes).
var confirmQuestion = discuss.Question{
	ID:   "confirm",
	Text: "Is this what you want delivered?",
	Options: []discuss.Option{
		{Label: "Yes, go ahead", Value: "Yes, go ahead as proposed.", Default: true},
		{Label: "No, something must change", Value: "No, something must change."},
	},
	SilentFailure: "Work would start on a misunderstanding, and the result would answer a different request.",
	Editable:      true,
}

// correct records the person's correction as a clarification round, so
// their words become a source constraints may quote, and sends Meta back
// to propose again.
func (d *discussion) correct(note string) (reply, error) {
	d.revised++
	if err := d.cfg.record(Step{Kind: StepConfirmation, Author: "person", Detail: note}); err != nil {
		return reply{}, err
	}
	if d.revised > maxCorrections {
		return reply{}, fmt.Errorf("intake: the person corrected the proposal %d times without confirming it", d.revised)
	}
	r := discuss.Round{N: len(d.rounds) + 1, Questions: []discuss.Question{confirmQuestion}}
	r.Answers = []discuss.Answer{{QuestionID: confirmQuestion.ID, Value: note, Note: "the person's correction of the proposal"}}
	if err := d.cfg.recordAndWrite(Step{Kind: StepQuestionRound, Author: "host",
		Detail: fmt.Sprintf("round %d: the proposal was put to the person", r.N)},
		harness.QuestionsFile(r.N), []byte(discuss.QuestionsMarkdown(r))); err != nil {
		return reply{}, err
	}
	if err := d.writeAnswers(r, "person"); err != nil {
		return reply{}, err
	}
	d.rounds = append(d.rounds, r)
	var b strings.Builder
	fmt.Fprintf(&b, "The person did not confirm the proposal. Their words are recorded as clarification round %d, in %s; "+
		"a constraint may quote them with that file as its source.\n\n", r.N, harness.AnswersSource(r.N))
	b.WriteString(discuss.AnswersMarkdown(r))
	b.WriteString("\nRevise the proposal to match what they said and call propose again. Questions were now asked, so fast_path is false.\n")
	return refuse(tool.Errorf(CodeCorrected, "%s", b.String())), nil
}

// confirm shows the proposal and reads one answer: Enter or y/yes
// confirms; n/no asks what should change; anything else is the person's
// correction. An input that ends with no answer confirms, as an ended
// input takes the suggested answer in discuss.Ask (yes is the suggestion),
// and the note says so.
func confirm(ctx context.Context, in io.Reader, out io.Writer, summary string) (ok bool, note string, err error) {
	if err := ctx.Err(); err != nil {
		return false, "", err
	}
	if _, err := io.WriteString(out, "\n"+summary+"\nIs this right? Press Enter or type y to go ahead, or write what should change: "); err != nil {
		return false, "", fmt.Errorf("intake: %w", err)
	}
	line, eof, err := readLine(in)
	if err != nil {
		return false, "", fmt.Errorf("intake: reading the confirmation: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return false, "", err
	}
	text := strings.TrimSpace(line)
	switch strings.ToLower(text) {
	case "":
		if eof {
			return true, "the input ended without an answer; the proposal was taken as confirmed", nil
		}
		return true, "confirmed at the terminal", nil
	case "y", "yes":
		return true, "confirmed at the terminal", nil
	case "n", "no":
		if eof {
			return false, confirmQuestion.Options[1].Value, nil
		}
		if _, err := io.WriteString(out, "What should change? "); err != nil {
			return false, "", fmt.Errorf("intake: %w", err)
		}
		more, _, err := readLine(in)
		if err != nil {
			return false, "", fmt.Errorf("intake: reading the correction: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return false, "", err
		}
		if more = strings.TrimSpace(more); more != "" {
			return false, more, nil
		}
		return false, confirmQuestion.Options[1].Value, nil
	}
	return false, text, nil
}

// maxLine bounds one typed line, as in discuss.Ask.
const maxLine = 64 << 10

// readLine reads up to and including the next newline, never further,
// so the terminal reader can be shared with discuss.Ask (which reads the
// same way). eof is set when the input ended before a newline.
func readLine(r io.Reader) (line string, eof bool, err error) {
	var b []byte
	var buf [1]byte
	for {
		n, err := r.Read(buf[:])
		if n == 1 {
			if buf[0] == '\n' {
				return string(b), false, nil
			}
			if len(b) < maxLine {
				b = append(b, buf[0])
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return string(b), true, nil
		case err != nil:
			return string(b), false, err
		}
	}
}
