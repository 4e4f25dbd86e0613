// Package task reads a task file: the top-level contracts of a run, the
// input files to hand it, policy overrides and the model to use. It is the
// written form of what a discussion with the user agrees (F-D3.5); the
// discussion itself comes later and will produce the same structure.
package task

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/engine"
	"github.com/fractal-harness/fractal/policy"
)

// File is the YAML shape of a task file (docs/task-format.md).
type File struct {
	Title     string        `yaml:"title"`
	Model     string        `yaml:"model"`
	Inputs    []string      `yaml:"inputs"`
	Policy    *PolicyFields `yaml:"policy"`
	Contracts []struct {
		Name   string           `yaml:"name"`
		Intent string           `yaml:"intent"`
		Checks []contract.Check `yaml:"checks"`
	} `yaml:"contracts"`
}

// PolicyFields are the policy overrides a task may set; absent fields keep
// their defaults.
type PolicyFields struct {
	GranularityThreshold *int     `yaml:"granularity_threshold"`
	MaxDepth             *int     `yaml:"max_depth"`
	Reassign             *bool    `yaml:"reassign"`
	Replan               *bool    `yaml:"replan"`
	BudgetTokens         *int64   `yaml:"budget_tokens"`
	RiskThreshold        *float64 `yaml:"risk_threshold"`
	RetryCount           *int     `yaml:"retry_count"`
	MaxReassigns         *int     `yaml:"max_reassigns"`
	MaxReplans           *int     `yaml:"max_replans"`
	Mode                 *string  `yaml:"mode"`
	Pool                 *int     `yaml:"pool"`
	MaxTurns             *int     `yaml:"max_turns"`
	ModelTimeout         *string  `yaml:"model_timeout"`
	MaxConcurrent        *int     `yaml:"max_concurrent"`
	DailyLimit           *int     `yaml:"daily_limit"`
	MaxSessions          *int     `yaml:"max_sessions"`
	SessionTokens        *int     `yaml:"session_tokens"`
	WatchEvery           *int     `yaml:"watch_every"`
	ToolLoop             *int     `yaml:"tool_loop"`
	AnswerWait           *string  `yaml:"answer_wait"`
	NoProgress           *string  `yaml:"no_progress"`
	ReviewerSession      *string  `yaml:"reviewer_session"`
	MetaTurn             *string  `yaml:"meta_turn"`
}

// Apply returns p with the set fields overridden.
func (f *PolicyFields) Apply(p policy.Policy) (policy.Policy, error) {
	if f == nil {
		return p, nil
	}
	setI := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setI(&p.GranularityThreshold, f.GranularityThreshold)
	setI(&p.MaxDepth, f.MaxDepth)
	setI(&p.RetryCount, f.RetryCount)
	setI(&p.MaxReassigns, f.MaxReassigns)
	setI(&p.MaxReplans, f.MaxReplans)
	setI(&p.Pool, f.Pool)
	setI(&p.MaxTurns, f.MaxTurns)
	setI(&p.MaxConcurrent, f.MaxConcurrent)
	setI(&p.DailyLimit, f.DailyLimit)
	setI(&p.MaxSessions, f.MaxSessions)
	setI(&p.SessionTokens, f.SessionTokens)
	setI(&p.WatchEvery, f.WatchEvery)
	setI(&p.ToolLoop, f.ToolLoop)
	for _, d := range []struct {
		name string
		src  *string
		dst  *time.Duration
	}{{"answer_wait", f.AnswerWait, &p.AnswerWait}, {"no_progress", f.NoProgress, &p.NoProgress},
		{"reviewer_session", f.ReviewerSession, &p.ReviewerSession}, {"meta_turn", f.MetaTurn, &p.MetaTurn}} {
		if d.src == nil {
			continue
		}
		v, err := time.ParseDuration(*d.src)
		if err != nil {
			return p, fmt.Errorf("policy: %s: %v", d.name, err)
		}
		*d.dst = v
	}
	if f.Reassign != nil {
		p.Permissions.Reassign = *f.Reassign
	}
	if f.Replan != nil {
		p.Permissions.Replan = *f.Replan
	}
	if f.BudgetTokens != nil {
		p.Budget.Tokens = *f.BudgetTokens
	}
	if f.RiskThreshold != nil {
		p.RiskThreshold = *f.RiskThreshold
	}
	if f.Mode != nil {
		p.Mode = policy.Mode(*f.Mode)
	}
	if f.ModelTimeout != nil {
		d, err := time.ParseDuration(*f.ModelTimeout)
		if err != nil {
			return p, fmt.Errorf("policy: model_timeout: %v", err)
		}
		p.ModelTimeout = d
	}
	return p, p.Validate()
}

// Spec is a loaded task: the engine's Task plus where the model comes from.
type Spec struct {
	Task engine.Task
	// Model is the model reference as written ("script:script.yaml"), with
	// a script path made absolute; empty when the file names none.
	Model string
}

// Load reads a task file from disk; input paths are relative to its folder.
func Load(file string) (Spec, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Spec{}, fmt.Errorf("cannot read task file: %w", err)
	}
	dir := filepath.Dir(file)
	return Parse(data, file, os.DirFS(dir), dir)
}

// Parse reads a task from data; inputs are read from fsys. base is joined
// to a relative script path in the model reference.
func Parse(data []byte, name string, fsys fs.FS, base string) (Spec, error) {
	var f File
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.Strict()); err != nil {
		return Spec{}, yamlErr(name, err)
	}
	pol, err := f.Policy.Apply(policy.Default())
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", name, err)
	}
	t := engine.Task{Title: f.Title, Policy: pol}
	if t.Title == "" {
		t.Title = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	if len(f.Contracts) == 0 {
		return Spec{}, fmt.Errorf("%s: the task has no contracts (add a contracts: list)", name)
	}
	for i, c := range f.Contracts {
		ct := contract.New(strings.TrimSpace(c.Intent), c.Checks)
		if err := ct.Validate(); err != nil {
			return Spec{}, fmt.Errorf("%s: contract %d (%s): %w", name, i+1, c.Name, err)
		}
		t.Contracts = append(t.Contracts, engine.TopContract{Name: c.Name, Contract: ct})
	}
	for _, in := range f.Inputs {
		clean := path.Clean(in)
		if err := contract.ValidatePath(clean); err != nil {
			return Spec{}, fmt.Errorf("%s: input %q: %w", name, in, err)
		}
		b, err := fs.ReadFile(fsys, clean)
		if err != nil {
			return Spec{}, fmt.Errorf("%s: input %q: %w", name, in, err)
		}
		t.Inputs = append(t.Inputs, engine.Input{Name: strings.TrimPrefix(clean, "inputs/"), Data: b})
	}
	if err := t.Validate(); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", name, err)
	}
	spec := Spec{Task: t, Model: f.Model}
	if rest, ok := strings.CutPrefix(f.Model, "script:"); ok && rest != "" && !filepath.IsAbs(rest) && base != "" {
		spec.Model = "script:" + filepath.Join(base, rest)
	}
	return spec, nil
}

var posRe = regexp.MustCompile(`^\[(\d+):(\d+)\]\s*`)

// yamlErr makes goccy's error one line: "name:LINE:COL: message".
func yamlErr(name string, err error) error {
	msg := yaml.FormatError(err, false, false)
	if i := bytes.IndexByte([]byte(msg), '\n'); i >= 0 {
		msg = msg[:i]
	}
	if m := posRe.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s:%s: %s", name, m[1], m[2], strings.TrimSpace(msg[len(m[0]):]))
	}
	return fmt.Errorf("%s: %s", name, strings.TrimSpace(msg))
}
