package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fractal-harness/fractal/config"
	"github.com/fractal-harness/fractal/demo"
	"github.com/fractal-harness/fractal/engine"
	"github.com/fractal-harness/fractal/journal"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/script"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/task"
)

// scriptInRun is where a run keeps its own copy of a scripted model, so it
// can be resumed after the original file moved.
const scriptInRun = "model/script.yaml"

// runConfigFile is where a run keeps a copy of the fractal.yaml it started
// with (keys are never in it: it names variables).
const runConfigFile = "model/fractal.yaml"

func demoCmd() *cobra.Command {
	var (
		dir           string
		latency, wait time.Duration
	)
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run the bundled demo: a one-page brief from three small inputs",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			data, err := fs.ReadFile(demo.Files, "task.yaml")
			if err != nil {
				return err
			}
			spec, err := task.Parse(data, "demo/task.yaml", demo.Files, "")
			if err != nil {
				return err
			}
			// The demo starts from the person's words, through the
			// discussion and the task harness (F-D3.5, DA-B3); task.yaml
			// lends it its inputs and policy.
			raw, err := fs.ReadFile(demo.Files, "task.md")
			if err != nil {
				return err
			}
			spec.Task.Raw, spec.Task.Contracts = string(raw), nil
			if c.Flags().Changed("answer-wait") {
				spec.Task.Policy.AnswerWait = wait
			}
			sdata, err := fs.ReadFile(demo.Files, "script.yaml")
			if err != nil {
				return err
			}
			if dir == "" {
				dir = filepath.Join("fractal-runs", "demo-"+time.Now().Format("20060102-150405"))
			}
			out := c.OutOrStdout()
			fmt.Fprintf(out, "fractal demo: %s\n  run folder: %s\n\n", spec.Task.Title, dir)
			return startRun(c.Context(), out, dir, spec.Task, source{script: sdata}, latency, latencySet(c))
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "run folder (default fractal-runs/demo-<time>)")
	c.Flags().DurationVar(&latency, "latency", 0, "delay every scripted model turn (e.g. 300ms) to watch or interrupt the run")
	c.Flags().DurationVar(&wait, "answer-wait", time.Second, "how long the demo's question waits for an answer before the suggested one is taken")
	return c
}

func latencySet(c *cobra.Command) bool { return c.Flags().Changed("latency") }

func runCmd() *cobra.Command {
	var (
		dir, modelRef, cfgPath string
		latency, wait          time.Duration
		inputs                 []string
		interactive            bool
	)
	c := &cobra.Command{
		Use:   "run TASK",
		Short: "Start a run: from your own words (a text file, or - for standard input), or from a task file of agreed contracts (.yaml)",
		Args:  exactArgs(1, "one task: a text file, - for standard input, or a .yaml task file"),
		RunE: func(c *cobra.Command, args []string) error {
			spec, err := loadTask(args[0], c.InOrStdin(), inputs)
			if err != nil {
				return usageErr("%v", err)
			}
			if interactive {
				spec.Task.Policy.Mode = policy.Interactive
			}
			if c.Flags().Changed("answer-wait") {
				spec.Task.Policy.AnswerWait = wait
			}
			if dir != "" {
				if err := refuseExistingRun(dir); err != nil {
					return err
				}
			}
			if modelRef == "" && cfgPath == "" {
				modelRef = spec.Model
			}
			src := source{}
			if modelRef != "" {
				sdata, err := loadScriptRef(modelRef)
				if err != nil {
					return err
				}
				src.script = sdata
			} else {
				cfg, err := loadConfig(cfgPath)
				if err != nil {
					return err
				}
				src.cfg = cfg
			}
			if dir == "" {
				dir = filepath.Join("fractal-runs", slug(spec.Task.Title)+"-"+time.Now().Format("20060102-150405"))
			}
			out := c.OutOrStdout()
			fmt.Fprintf(out, "fractal run: %s\n  run folder: %s\n  models: %s\n\n", spec.Task.Title, dir, src.describe())
			term := terminal{}
			if interactive {
				term = terminal{in: c.InOrStdin(), out: out}
			}
			return startRunWith(c.Context(), out, dir, spec.Task, src, latency, latencySet(c), term)
		},
	}
	c.Flags().StringArrayVar(&inputs, "input", nil, "a file or folder the run works from (repeatable; text tasks only: a task file lists its own inputs)")
	c.Flags().BoolVar(&interactive, "interactive", false, "ask the questions on this terminal and confirm the proposed work (default: unattended, suggested answers are taken)")
	c.Flags().DurationVar(&wait, "answer-wait", 10*time.Minute, "unattended: how long questions wait for an answer before the suggested one is taken")
	c.Flags().StringVar(&dir, "dir", "", "run folder (must not exist or be empty; default fractal-runs/<title>-<time>)")
	c.Flags().StringVar(&modelRef, "model", "", "a scripted model, script:FILE (default: the task file's model:, else the providers of --config)")
	c.Flags().StringVar(&cfgPath, "config", "", "fractal.yaml naming each role's provider models (default ./fractal.yaml, $FRACTAL_HOME/fractal.yaml, then ANTHROPIC_API_KEY / OPENAI_API_KEY)")
	c.Flags().DurationVar(&latency, "latency", 0, "delay every scripted model turn")
	return c
}

// loadScriptRef reads and validates a "script:FILE" reference.
func loadScriptRef(ref string) ([]byte, error) {
	if ref == "" {
		return nil, usageErr("no model given: pass --model script:FILE or set model: in the task file")
	}
	p, ok := strings.CutPrefix(ref, "script:")
	if !ok || p == "" {
		return nil, usageErr("model %q is not available in this build; use script:FILE", ref)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, usageErr("cannot read model script: %v", err)
	}
	if _, err := script.Parse(data, p); err != nil {
		return nil, usageErr("%v", err)
	}
	return data, nil
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "run"
	}
	return out
}

// source is where a run's answers come from: a scripted model or the
// providers of a configuration.
type source struct {
	script []byte
	cfg    *config.Config
}

func (s source) describe() string {
	if s.cfg == nil {
		return "scripted"
	}
	return "providers from " + s.cfg.Source
}

// models builds the role → model function.
func (s source) models(latency time.Duration, latencyGiven bool) (func(model.Role) model.Model, error) {
	if s.cfg != nil {
		rt, err := router(s.cfg)
		if err != nil {
			return nil, err
		}
		return func(model.Role) model.Model { return rt }, nil
	}
	sc, err := script.Parse(s.script, "script")
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if latencyGiven {
		sc = sc.WithLatency(latency)
	}
	return func(model.Role) model.Model { return sc }, nil
}

// terminal is the person's terminal in interactive mode.
type terminal struct {
	in  io.Reader
	out io.Writer
}

// startRun creates the run folder, keeps the model configuration in it and
// drives the run to its end.
func startRun(ctx context.Context, out io.Writer, dir string, t engine.Task, src source, latency time.Duration, latencyGiven bool) error {
	return startRunWith(ctx, out, dir, t, src, latency, latencyGiven, terminal{})
}

func startRunWith(ctx context.Context, out io.Writer, dir string, t engine.Task, src source, latency time.Duration, latencyGiven bool, term terminal) error {
	if err := refuseExistingRun(dir); err != nil {
		return err
	}
	models, err := src.models(latency, latencyGiven)
	if err != nil {
		return err
	}
	t.Model = "script:" + scriptInRun
	if src.cfg != nil {
		t.Model = "config:" + runConfigFile
	}
	e, err := engine.Create(dir, t, engine.Config{Models: models, Progress: out, In: term.in, Out: term.out})
	if err != nil {
		return classify(err)
	}
	if src.cfg != nil {
		err = saveConfig(e.Dir(), src.cfg)
	} else if err = os.MkdirAll(filepath.Join(e.Dir(), "model"), 0o755); err == nil {
		err = os.WriteFile(filepath.Join(e.Dir(), scriptInRun), src.script, 0o644)
	}
	if err != nil {
		_ = e.Close()
		return err
	}
	return drive(ctx, out, e, dir)
}

// refuseExistingRun keeps run and demo from ever writing into a folder
// that holds something already.
func refuseExistingRun(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return usageErr("cannot use %s as a run folder: %v", dir, err)
	}
	if len(ents) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, journal.ManifestFile)); err == nil {
		return usageErr("%s already holds a run; continue it with 'fractal resume %s' or choose another --dir", dir, dir)
	}
	return usageErr("%s is not empty; a new run needs a new or empty folder", dir)
}

func resumeCmd() *cobra.Command {
	var latency time.Duration
	c := &cobra.Command{
		Use:   "resume RUN",
		Short: "Continue a run that stopped, crashed or was interrupted",
		Args:  exactArgs(1, "one run folder"),
		RunE: func(c *cobra.Command, args []string) error {
			dir := args[0]
			m, err := journal.ReadManifest(dir)
			if err != nil {
				return usageErr("%s is not a fractal run folder: %v", dir, err)
			}
			// A paused run that a process still drives is resumed by that
			// process.
			if m.Stage == string(state.StagePaused) {
				if err := engine.Request(dir, engine.RequestResume); err == nil {
					fmt.Fprintf(c.OutOrStdout(), "asked the process running %s to resume\n", dir)
					return nil
				}
			}
			kind, ref, _ := strings.Cut(m.Model, ":")
			if !filepath.IsAbs(ref) {
				ref = filepath.Join(dir, ref)
			}
			var src source
			switch kind {
			case "script":
				data, err := os.ReadFile(ref)
				if err != nil {
					return usageErr("run %s: cannot read its scripted model: %v", dir, err)
				}
				src.script = data
			case "config":
				cfg, err := config.Load(ref)
				if err != nil {
					return usageErr("run %s: %v", dir, err)
				}
				src.cfg = cfg
			default:
				return usageErr("run %s uses model %q, which this build cannot start", dir, m.Model)
			}
			models, err := src.models(latency, latencySet(c))
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			e, err := engine.Open(dir, engine.Config{Models: models, Progress: out})
			if err != nil {
				return classify(err)
			}
			fmt.Fprintf(out, "fractal resume: %s (stage %s)\n\n", dir, m.Stage)
			return drive(c.Context(), out, e, dir)
		},
	}
	c.Flags().DurationVar(&latency, "latency", 0, "delay every scripted model turn")
	return c
}

// classify maps engine errors to exit codes.
func classify(err error) error {
	switch {
	case errors.Is(err, journal.ErrRunInUse):
		return usageErr("%v", err)
	case errors.Is(err, engine.ErrRunExists):
		return usageErr("%v", err)
	}
	var ce *journal.CorruptError
	if errors.As(err, &ce) {
		return failErr("%v", err)
	}
	var re *engine.ReplayError
	if errors.As(err, &re) {
		return failErr("the journal does not replay: %v", err)
	}
	return err
}

// drive runs e until it ends or the user interrupts (Ctrl-C stops cleanly;
// resume continues).
func drive(ctx context.Context, out io.Writer, e *engine.Engine, dir string) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := e.Run(ctx)
	cerr := e.Close()
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(out, "\nStopped. Continue with: fractal resume %s\n", dir)
			return failErr("interrupted")
		}
		return classify(err)
	}
	if cerr != nil {
		return cerr
	}
	fmt.Fprintln(out)
	switch res.Stage {
	case state.StageDone:
		fmt.Fprintf(out, "Done: every contract was accepted.\n")
		for _, f := range res.Deliverable {
			fmt.Fprintf(out, "  deliverable: %s\n", filepath.Join(dir, f))
		}
		fmt.Fprintf(out, "  every step:  %s  (fractal status %s; fractal verify %s)\n", filepath.Join(dir, engine.EventsFile), dir, dir)
		return nil
	case state.StageAwaitingUser:
		fmt.Fprintf(out, "The run needs your decision:\n")
		for _, q := range res.Questions {
			fmt.Fprintf(out, "  - %s\n", q)
		}
		return failErr("the run is waiting for a decision (fractal status %s)", dir)
	default:
		return failErr("the run ended %s: %s", res.Stage, res.Reason)
	}
}

// controlCmd builds pause and cancel: a request to the process driving the
// run, or, when none is, applied to the run folder directly.
func controlCmd(action, short string) *cobra.Command {
	return &cobra.Command{
		Use:   action + " RUN",
		Short: short,
		Args:  exactArgs(1, "one run folder"),
		RunE: func(c *cobra.Command, args []string) error {
			dir := args[0]
			if _, err := journal.ReadManifest(dir); err != nil {
				return usageErr("%s is not a fractal run folder: %v", dir, err)
			}
			out := c.OutOrStdout()
			err := engine.Request(dir, action)
			if err == nil {
				fmt.Fprintf(out, "asked the process running %s to %s\n", dir, action)
				return nil
			}
			if !errors.Is(err, engine.ErrNotLive) {
				return err
			}
			e, err := engine.Open(dir, engine.Config{Models: func(model.Role) model.Model { return nil }})
			if err != nil {
				return classify(err)
			}
			defer e.Close()
			switch action {
			case engine.RequestPause:
				err = e.Pause(c.Context())
			case engine.RequestCancel:
				err = e.Cancel(c.Context())
			}
			if err != nil {
				return failErr("cannot %s %s: %v", action, dir, err)
			}
			fmt.Fprintf(out, "%s: %s\n", dir, map[string]string{engine.RequestPause: "paused", engine.RequestCancel: "cancelled"}[action])
			return nil
		},
	}
}

// loadTask reads TASK: a .yaml/.yml task file of agreed contracts, or the
// person's own words (a text file, or - for standard input) with the
// --input files and folders.
func loadTask(arg string, stdin io.Reader, inputs []string) (task.Spec, error) {
	ext := strings.ToLower(filepath.Ext(arg))
	if arg != "-" && (ext == ".yaml" || ext == ".yml") {
		if len(inputs) > 0 {
			return task.Spec{}, errors.New("--input is for a task in your own words; a task file lists its inputs itself")
		}
		return task.Load(arg)
	}
	var raw []byte
	var err error
	if arg == "-" {
		raw, err = io.ReadAll(io.LimitReader(stdin, 1<<20))
	} else {
		raw, err = os.ReadFile(arg)
	}
	if err != nil {
		return task.Spec{}, fmt.Errorf("cannot read the task: %w", err)
	}
	text := strings.TrimSpace(string(raw))
	if text == "" {
		return task.Spec{}, errors.New("the task is empty: say what you want done")
	}
	t := engine.Task{Raw: text + "\n", Policy: policy.Default(), Title: firstLine(text)}
	for _, in := range inputs {
		fi, err := os.Stat(in)
		if err != nil {
			return task.Spec{}, fmt.Errorf("input %s: %w", in, err)
		}
		if !fi.IsDir() {
			b, err := os.ReadFile(in)
			if err != nil {
				return task.Spec{}, err
			}
			t.Inputs = append(t.Inputs, engine.Input{Name: filepath.Base(in), Data: b})
			continue
		}
		err = filepath.WalkDir(in, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(in, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			t.Inputs = append(t.Inputs, engine.Input{Name: filepath.ToSlash(rel), Data: b})
			return nil
		})
		if err != nil {
			return task.Spec{}, fmt.Errorf("input %s: %w", in, err)
		}
	}
	if err := t.Validate(); err != nil {
		return task.Spec{}, err
	}
	return task.Spec{Task: t}, nil
}
