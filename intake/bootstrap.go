package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fractal-harness/fractal/discuss"
	"github.com/fractal-harness/fractal/gate"
	"github.com/fractal-harness/fractal/harness"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/tool"
)

// The tools of the bootstrap, besides harness.ToolName (harness_write).
const (
	ToolHarnessDone   = "harness_done"
	ToolSubmitVerdict = "submit_verdict"
)

// CodePrecheck is the refusal of harness_done when the host's static
// checks find faults.
const CodePrecheck = "E-PRECHECK"

// reviewTurns bounds the Reviewer's one-shot session: one verdict, and a
// few chances to fix a malformed one.
const reviewTurns = 4

// maxMalformed bounds the malformed verdicts the Reviewer may send before
// the review fails (closed).
const maxMalformed = 3

var harnessDoneSpec = model.ToolSpec{
	Name: ToolHarnessDone,
	Description: "Say the harness is complete. The host then checks it (every constraint sourced and placed in at least three files, the constraint table, " +
		"the inventory cited, the required files present, done criteria that can pass and can fail). Faults come back as this tool's result: fix them and call it again. " +
		"When the checks pass, the harness goes to an independent reviewer and your session ends.",
	Schema: json.RawMessage(`{"type": "object", "properties": {}, "additionalProperties": false}`),
}

var submitVerdictSpec = model.ToolSpec{
	Name: ToolSubmitVerdict,
	Description: "Submit your one verdict on the task harness: verdict pass, needs_revision or unsafe; every issue with its severity (critical, major, minor), " +
		"a location that names a harness file (and a line or section), a description of what to change, and a category " +
		"(fabrication, missing, format, quality, safety, other); and a summary. A constraint or requirement with no source in the person's words is fabrication.",
	Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "verdict": {"type": "string", "enum": ["pass", "needs_revision", "unsafe"]},
    "issues": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "severity": {"type": "string", "enum": ["critical", "major", "minor"]},
          "location": {"type": "string", "description": "a harness file, such as harness/done_criteria.yaml, with a line or section"},
          "description": {"type": "string"},
          "category": {"type": "string", "enum": ["fabrication", "missing", "format", "quality", "safety", "other"]}
        },
        "required": ["severity", "location", "description", "category"],
        "additionalProperties": false
      }
    },
    "summary": {"type": "string"}
  },
  "required": ["verdict", "issues", "summary"],
  "additionalProperties": false
}`),
}

// BootstrapResult is how the bootstrap ended.
type BootstrapResult struct {
	// Passed is set only when the Reviewer passed the harness.
	Passed bool `json:"passed"`
	// Rounds is how many bootstrap rounds ran (a Meta session and a
	// review each).
	Rounds int `json:"rounds"`
	// Problems are the last review's issues, or why the review could
	// not be held, one line each.
	Problems []string `json:"problems,omitempty"`
	// Review says in a sentence or two how it ended, for the journal and,
	// when it did not pass, for the host to put to the person or to fail
	// the run with.
	Review string `json:"review"`
}

// Bootstrap has Meta write the task harness (DA-B3) and gates it (DA-A2).
// Each round is a fresh Meta session (Request.Attempt = the round) that
// writes only through the audited harness_write tool (author "meta"; each
// write recorded as a harness_write step before the file changes; each
// refusal as harness_refused), may read inputs/ and harness/, and ends
// with harness_done. harness_done runs harness.Precheck and sends the
// faults back to Meta until there are none (bootstrap_precheck steps).
// Then a fresh one-shot Reviewer session gets harness.ReviewPacket — the
// raw task, the clarification rounds, the constraints and the files,
// nothing of Meta's — and must call submit_verdict; gate.ReviewOutcome
// judges it, failing closed (bootstrap_review step). A verdict that does
// not pass starts the next round with its issues; after MaxReviewRounds
// the result is not passed. A Reviewer that errs, times out or never
// submits a usable verdict ends the bootstrap at once, not passed: Meta
// cannot fix a review that did not happen.
//
// out must be the Outcome Discuss returned for the task in
// inputs/task.md. The error is for what the host must handle: a failed
// Record, an IO or Meta model error, a cancelled ctx, a Meta session that
// does not finish, or a harness folder holding files no tool of Meta's
// can have written (only a person can remove them).
//
// Bootstrap does not decide what happens when the harness is not passed:
// the host asks the person (interactive) or fails the run (autonomous).
func Bootstrap(ctx context.Context, cfg Config, out discuss.Outcome) (BootstrapResult, error) {
	cfg, err := cfg.normalize(true)
	if err != nil {
		return BootstrapResult{}, err
	}
	raw, ok, err := readFile(cfg.Dir, TaskFile)
	switch {
	case err != nil:
		return BootstrapResult{}, err
	case !ok:
		return BootstrapResult{}, fmt.Errorf("intake: %s is missing: the discussion comes first", TaskFile)
	}
	sources := discuss.Sources(raw, out.Rounds)
	if err := out.Validate(sources); err != nil {
		return BootstrapResult{}, fmt.Errorf("intake: the outcome of the discussion is not valid for %s: %w", TaskFile, err)
	}
	inv, err := ensureInventory(ctx, &cfg)
	if err != nil {
		return BootstrapResult{}, err
	}
	hdir := filepath.Join(cfg.Dir, harness.Dir)
	w := harness.NewWriter(hdir, func(rec harness.AuditRecord) error {
		detail := "a new file"
		if rec.Prev != "" {
			detail = "replaces sha256 " + rec.Prev
		}
		if rec.Large {
			detail += "; large change: " + rec.LargeWhy
		}
		return cfg.record(Step{Kind: StepHarnessWrite, Path: harness.Dir + "/" + rec.Path, SHA256: rec.SHA256, Size: rec.Size,
			Author: rec.Author, Reason: rec.Reason, Detail: detail})
	}).WithClock(cfg.Clock)
	b := &bootstrap{cfg: &cfg, out: out, sources: sources, dir: hdir, write: w.Tool("meta")}

	var issues []string
	for round := 1; round <= cfg.MaxReviewRounds; round++ {
		b.round, b.files = round, nil
		existing, err := b.read()
		if err != nil {
			return BootstrapResult{Rounds: round - 1}, err
		}
		s := newSession(&cfg, model.Meta, IntentBootstrap, round, bootstrapSystem(),
			bootstrapPrompt(raw, out, inv, sortedKeys(existing), round, issues), readTools(),
			map[string]hostTool{harness.ToolName: b.harnessWrite, ToolHarnessDone: b.done},
			[]model.ToolSpec{b.write.Spec(), harnessDoneSpec})
		if err := s.run(ctx); err != nil {
			return BootstrapResult{Rounds: round}, err
		}

		packet := harness.ReviewPacket(raw, clarifications(out.Rounds), out.Constraints, b.files)
		v, rerr := review(ctx, &cfg, round, packet, harnessFiles(b.files))
		if err := ctx.Err(); err != nil {
			return BootstrapResult{Rounds: round}, err
		}
		verdict := gate.ReviewOutcome(v, rerr)
		var lines []string
		if v != nil {
			for _, is := range v.Issues {
				lines = append(lines, fmt.Sprintf("[%s, %s] %s: %s", is.EffectiveSeverity(), is.Category, is.Location, oneLine(is.Description)))
			}
		}
		reason, _, _ := strings.Cut(verdict.Reason, "\n")
		if err := cfg.record(Step{Kind: StepBootstrapReview, Author: "reviewer", Passed: verdict.Accepted, Problems: lines,
			Detail: fmt.Sprintf("round %d: %s", round, reason)}); err != nil {
			return BootstrapResult{Rounds: round}, err
		}
		switch {
		case verdict.Accepted:
			return BootstrapResult{Passed: true, Rounds: round, Problems: lines, Review: verdict.Reason}, nil
		case v == nil:
			return BootstrapResult{Rounds: round, Problems: []string{reason},
				Review: "The method for this task could not be reviewed, so the work cannot start on it: " + reason}, nil
		}
		issues = lines
	}
	return BootstrapResult{Rounds: cfg.MaxReviewRounds, Problems: issues,
		Review: fmt.Sprintf("The method for this task was not approved after %d round(s) of independent review; the last review's issues are listed.", cfg.MaxReviewRounds)}, nil
}

// bootstrap is the state of one Bootstrap call.
type bootstrap struct {
	cfg     *Config
	out     discuss.Outcome
	sources map[string]string
	dir     string    // absolute harness folder
	write   tool.Tool // harness_write of the audited Writer, author "meta"
	round   int
	files   map[string]string // the harness as the passed precheck saw it
}

// harnessWrite runs harness_write and records its refusals: a refused
// write changes nothing, but the attempt belongs in the journal (DA-A5).
func (b *bootstrap) harnessWrite(ctx context.Context, call model.ToolCall) (reply, error) {
	res, err := b.write.Call(ctx, tool.Env{}, call.Args)
	if te, ok := tool.AsError(err); ok {
		var a struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
		}
		_ = json.Unmarshal(call.Args, &a) // best effort: the refusal may be of the arguments themselves
		step := Step{Kind: StepHarnessRefused, Author: "meta", Reason: a.Reason, Problems: []string{te.Error()},
			Detail: fmt.Sprintf("harness_write of %q refused (%s); nothing was written", a.Path, te.Code)}
		if harness.Allowed(a.Path) == nil {
			step.Path = harness.Dir + "/" + a.Path
		}
		if rerr := b.cfg.record(step); rerr != nil {
			return reply{}, rerr
		}
		return refuse(te), nil
	}
	if err != nil {
		return reply{}, fmt.Errorf("intake: %s: %w", harness.ToolName, err)
	}
	return reply{text: res.Content}, nil
}

// done handles harness_done: the host's static checks, recorded; faults
// go back to Meta, a clean harness ends the session for the review.
func (b *bootstrap) done(ctx context.Context, call model.ToolCall) (reply, error) {
	files, err := b.read()
	if err != nil {
		return reply{}, err
	}
	var lines []string
	for _, p := range harness.Precheck(b.out.Constraints, b.sources, files) {
		lines = append(lines, p.Error())
	}
	if err := b.cfg.record(Step{Kind: StepBootstrapPrecheck, Author: "host", Passed: len(lines) == 0, Problems: lines,
		Detail: fmt.Sprintf("round %d: %d harness file(s), %d problem(s)", b.round, len(files), len(lines))}); err != nil {
		return reply{}, err
	}
	if len(lines) > 0 {
		return refuse(tool.Errorf(CodePrecheck, "the harness is not ready; fix every point with harness_write, then call harness_done again:\n%s", bullets(lines))), nil
	}
	b.files = files
	return reply{text: "accepted: the harness goes to the independent review", done: true}, nil
}

// read returns the harness files, harness-relative path → content. A file
// Meta cannot have written — outside the whitelist, not a regular file,
// not text — is an error: the Writer is the only way in, so it was put
// there by other means, and only a person can take it out.
func (b *bootstrap) read() (map[string]string, error) {
	files := map[string]string{}
	root, err := os.OpenRoot(b.dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return files, nil
	}
	if err != nil {
		return nil, fmt.Errorf("intake: %w", err)
	}
	defer root.Close()
	var foreign []string
	err = iofs.WalkDir(root.FS(), ".", func(p string, d iofs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() || isTemp(p):
			return nil
		case !d.Type().IsRegular():
			foreign = append(foreign, p+" (not a regular file)")
			return nil
		case harness.Allowed(p) != nil:
			foreign = append(foreign, p)
			return nil
		}
		data, err := root.ReadFile(p)
		if err != nil {
			return err
		}
		if !utf8.Valid(data) {
			foreign = append(foreign, p+" (not text)")
			return nil
		}
		files[p] = string(data)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("intake: reading the harness: %w", err)
	}
	if len(foreign) > 0 {
		return nil, fmt.Errorf("intake: the harness folder holds what no harness_write can have written: %s; only a person can remove it",
			strings.Join(foreign, ", "))
	}
	return files, nil
}

// review runs the Reviewer's one-shot session on packet. files are the
// run-relative paths an issue may name. The verdict is nil when none
// usable was submitted; the error says why.
func review(ctx context.Context, cfg *Config, round int, packet string, files []string) (*gate.Verdict, error) {
	var v *gate.Verdict
	malformed := 0
	submit := func(_ context.Context, call model.ToolCall) (reply, error) {
		pv, err := gate.ParseVerdict(call.Args, files)
		if err != nil {
			malformed++
			if malformed > maxMalformed {
				return reply{}, fmt.Errorf("the verdict was malformed %d times, the last time: %w", malformed, err)
			}
			return refuse(tool.Errorf(codeArgs, "%v", err)), nil
		}
		v = &pv
		return reply{text: "accepted", done: true}, nil
	}
	s := newSession(cfg, model.Reviewer, IntentReview, round, reviewSystem,
		packet+"Review the harness above, then call submit_verdict once.\n", nil,
		map[string]hostTool{ToolSubmitVerdict: submit}, []model.ToolSpec{submitVerdictSpec})
	s.maxTurns = min(cfg.MaxTurns, reviewTurns)
	if err := s.run(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// clarifications are the clarification files, name → text, exactly as
// Discuss wrote them (they are rendered from the same rounds).
func clarifications(rounds []discuss.Round) map[string]string {
	m := map[string]string{}
	for _, r := range rounds {
		m[harness.QuestionsFile(r.N)] = discuss.QuestionsMarkdown(r)
		m[harness.AnswersSource(r.N)] = discuss.AnswersMarkdown(r)
	}
	return m
}

// harnessFiles are the run-relative paths of the harness files.
func harnessFiles(files map[string]string) []string {
	var out []string
	for _, p := range sortedKeys(files) {
		out = append(out, harness.Dir+"/"+p)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
