package intake

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/fractal-harness/fractal/discuss"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/policy"
)

// Config is what the host gives both phases.
type Config struct {
	// Model answers for role meta and role reviewer. Every request has
	// Request.Instance = "intake", Request.Role set to the role, and an
	// Intent naming the phase (IntentDiscuss, IntentBootstrap,
	// IntentReview), so a router or a script can tell the sessions apart;
	// Request.Attempt is the bootstrap round (1 in the discussion).
	Model model.Model
	// Dir is the absolute run folder. Inputs are in Dir/inputs/; intake
	// writes inputs/task.md, inputs/inventory.md,
	// inputs/clarify/round_N_{questions,answers}.md and, through the
	// audited writer only, harness/**.
	Dir string
	// Mode is interactive (questions and the proposal are put to the
	// person at the terminal) or autonomous (no terminal is read: every
	// question takes its default, and the answers file says so).
	Mode policy.Mode
	// Wait is, in autonomous mode, how long the run waits for answers
	// before taking the defaults; intake does not wait itself (the host
	// does, or the policy says not to), it only writes the wait into the
	// notes of the defaulted answers. Zero means discuss.DefaultWait.
	Wait time.Duration
	// In and Out are the terminal in interactive mode (discuss.Ask reads
	// In byte by byte, so it may be os.Stdin shared with others).
	In  io.Reader
	Out io.Writer
	// Record is called for every step, before the step's effect where
	// there is one (a harness write is recorded, then written); when it
	// returns an error the flow stops with that error and the effect does
	// not happen. Nil records nothing.
	Record func(Step) error
	// MaxRounds bounds the clarification rounds Meta may ask (default 3).
	MaxRounds int
	// MaxReviewRounds bounds the bootstrap rounds: each is a Meta session
	// writing the harness and one review (default 3).
	MaxReviewRounds int
	// MaxTurns bounds the model turns of one session (default 40): a
	// safety net against a model that never finishes, not a work cap.
	MaxTurns int
	// Clock stamps the harness audit records (default time.Now).
	Clock func() time.Time
}

// The defaults of Config's bounds.
const (
	DefaultMaxRounds       = 3
	DefaultMaxReviewRounds = 3
	DefaultMaxTurns        = 40
)

// Instance is Request.Instance of every model call intake makes: no
// instance exists yet, so the phase has a name of its own.
const Instance = "intake"

// The Request.Intent of each kind of session. A script selects a session
// with "match" on a substring of these ("discussion", "harness",
// "review").
const (
	IntentDiscuss   = "intake: discussion of the raw task"
	IntentBootstrap = "intake: writing the task harness"
	IntentReview    = "intake: bootstrap review of the task harness"
)

// Step is one thing intake did or decided, handed to Config.Record. Kind
// says which; the other fields are set as the kind needs.
type Step struct {
	Kind string `json:"kind"`
	// Detail says what happened in a sentence, for the journal.
	Detail string `json:"detail,omitempty"`
	// Path is the run-relative file the step writes or is about.
	Path string `json:"path,omitempty"`
	// SHA256 and Size describe the content about to be written to Path.
	SHA256 string `json:"sha256,omitempty"`
	Size   int    `json:"size,omitempty"`
	// Author is who asked for the step: "meta", "reviewer", "person"
	// (answers typed at the terminal), "default" (answers taken by
	// default), "host".
	Author string `json:"author,omitempty"`
	// Reason is the author's reason (a harness write) or the refusal's
	// message (a harness refusal).
	Reason string `json:"reason,omitempty"`
	// Passed is the outcome of a check step (bootstrap_precheck,
	// bootstrap_review, confirmation).
	Passed bool `json:"passed,omitempty"`
	// Problems lists what a check or a refusal found, one line each.
	Problems []string `json:"problems,omitempty"`
}

// The kinds of Step.
const (
	StepTask              = "task"               // inputs/task.md is about to be written
	StepInventory         = "inventory"          // inputs/inventory.md is about to be written
	StepQuestionsRefused  = "questions_refused"  // Meta's questions were refused (jargon, no default, …)
	StepQuestionRound     = "question_round"     // round_N_questions.md is about to be written
	StepAnswers           = "answers"            // round_N_answers.md is about to be written
	StepConstraintRefused = "constraint_refused" // a proposal was refused for its constraints
	StepProposalRefused   = "proposal_refused"   // a proposal was refused for its contracts only
	StepContractsProposed = "contracts_proposed" // a valid proposal (before any confirmation)
	StepConfirmation      = "confirmation"       // the person confirmed (Passed) or corrected the proposal
	StepHarnessWrite      = "harness_write"      // a harness file is about to be written (the audit record)
	StepHarnessRefused    = "harness_refused"    // a harness_write was refused; nothing was written
	StepBootstrapPrecheck = "bootstrap_precheck" // the host's static checks of the harness
	StepBootstrapReview   = "bootstrap_review"   // the Reviewer's verdict, as the host reads it
)

// Run-relative files intake writes besides the harness and the clarify
// rounds (harness.QuestionsFile, harness.AnswersSource).
const (
	TaskFile      = "inputs/task.md"      // = harness.TaskSource
	InventoryFile = "inputs/inventory.md" // = harness.Inventory
	inputsDir     = "inputs"
)

// maxTokens is the answer limit of every request, as in the engine.
const maxTokens = 8192

// normalize checks cfg and fills in its defaults. The model and the mode
// are checked only for the phases that talk (withModel): the inventory
// needs neither, and a host may run it before it has set them up.
func (cfg Config) normalize(withModel bool) (Config, error) {
	var errs []string
	if !filepath.IsAbs(cfg.Dir) {
		errs = append(errs, fmt.Sprintf("run folder %q is not an absolute path", cfg.Dir))
	}
	if withModel {
		if cfg.Model == nil {
			errs = append(errs, "no model")
		}
		switch cfg.Mode {
		case policy.Autonomous:
		case policy.Interactive:
			if cfg.In == nil || cfg.Out == nil {
				errs = append(errs, "interactive mode needs a terminal (In and Out)")
			}
		default:
			errs = append(errs, fmt.Sprintf("mode %q is neither %s nor %s", cfg.Mode, policy.Interactive, policy.Autonomous))
		}
	}
	if cfg.Wait < 0 || cfg.MaxRounds < 0 || cfg.MaxReviewRounds < 0 || cfg.MaxTurns < 0 {
		errs = append(errs, "negative wait or bound")
	}
	if len(errs) > 0 {
		return cfg, errors.New("intake: config: " + strings.Join(errs, "; "))
	}
	if cfg.Wait == 0 {
		cfg.Wait = discuss.DefaultWait
	}
	if cfg.MaxRounds == 0 {
		cfg.MaxRounds = DefaultMaxRounds
	}
	if cfg.MaxReviewRounds == 0 {
		cfg.MaxReviewRounds = DefaultMaxReviewRounds
	}
	if cfg.MaxTurns == 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	cfg.Dir = filepath.Clean(cfg.Dir)
	return cfg, nil
}

// record hands s to the host. Its error stops the flow, so it is wrapped
// to say which step could not be recorded.
func (cfg *Config) record(s Step) error {
	if cfg.Record == nil {
		return nil
	}
	if err := cfg.Record(s); err != nil {
		return fmt.Errorf("intake: recording the %s step failed: %w", s.Kind, err)
	}
	return nil
}

// recordAndWrite records s, completed with rel's digest and size, then
// writes content to rel: the journal holds every file before it exists.
func (cfg *Config) recordAndWrite(s Step, rel string, content []byte) error {
	s.Path, s.SHA256, s.Size = rel, digest(content), len(content)
	if err := cfg.record(s); err != nil {
		return err
	}
	return writeFile(cfg.Dir, rel, content)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// writeFile replaces the run-relative file rel with content atomically
// (temporary file, fsync, rename), through an os.Root at the run folder so
// no symlink under it can carry the write elsewhere.
func writeFile(dir, rel string, content []byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("intake: %w", err)
	}
	defer root.Close()
	if d := path.Dir(rel); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("intake: %s: %w", rel, err)
		}
	}
	tmp := path.Join(path.Dir(rel), "."+path.Base(rel)+".tmp-"+rand.Text()[:10])
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("intake: %s: %w", rel, err)
	}
	_, err = f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, rel)
	}
	if err != nil {
		root.Remove(tmp)
		return fmt.Errorf("intake: write %s: %w", rel, err)
	}
	return nil
}

// readFile reads the run-relative file rel; ok is false when it does not
// exist.
func readFile(dir, rel string) (text string, ok bool, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", false, fmt.Errorf("intake: %w", err)
	}
	defer root.Close()
	b, err := root.ReadFile(rel)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("intake: read %s: %w", rel, err)
	}
	return string(b), true, nil
}

// isTemp reports a temporary file of writeFile or of harness.Writer
// (".<name>.tmp-<random>"), left only by a crash between create and
// rename. It is nobody's content, so it is neither inventoried nor shown
// to the precheck, where Meta could not remove it and would be stuck.
func isTemp(name string) bool {
	base := path.Base(name)
	return strings.HasPrefix(base, ".") && strings.Contains(base, ".tmp-")
}
