// Package script is a model that replays a YAML script instead of calling a
// language model. The demo and the tests run on it, and a person can write
// one to reproduce a run or to test a blueprint without spending tokens.
//
// A script is a list of sessions, each a list of assistant turns. For every
// request the script picks the first session whose role and optional
// filters (intent substring, attempt, instance) match the request, and
// answers with the turn whose index is the number of assistant messages
// already in the conversation. The answer is therefore a function of the
// request alone: there is no call counter, so parallel instances do not
// interfere and a resumed run gets the same answers as the run that crashed.
//
// docs/script-format.md is the user reference of the format.
package script

import (
	"fmt"
	"os"
	"time"

	"github.com/fractal-harness/fractal/model"
)

// Version is the only script format version this package reads.
const Version = 1

// Script is a parsed script. It implements model.Model.
//
// A Script is read-only once built: Generate and WithLatency never modify
// it, which is what makes it safe for concurrent use. Do not change its
// fields while it is in use.
type Script struct {
	Version  int       `yaml:"version"`
	Latency  Duration  `yaml:"latency,omitempty"` // default delay before every turn
	Sessions []Session `yaml:"sessions"`

	name        string        // file name for error messages; "" when built in Go
	overridden  bool          // set by WithLatency
	forcedDelay time.Duration // the delay of every turn when overridden
}

// Session is the scripted conversation of one role, optionally narrowed to
// some instances by the filter fields. A zero filter field matches anything.
type Session struct {
	Role     model.Role `yaml:"role"`
	Match    string     `yaml:"match,omitempty"`    // substring of Request.Intent
	Attempt  int        `yaml:"attempt,omitempty"`  // exact Request.Attempt
	Instance string     `yaml:"instance,omitempty"` // exact Request.Instance
	// Offers names a tool the request must offer, so one role's different
	// jobs (a reviewer grading a statement, a reviewer giving a verdict)
	// can be told apart.
	Offers string `yaml:"offers,omitempty"`
	// Session selects one relay session of a worker's attempt (from 1).
	Session int    `yaml:"session,omitempty"`
	Turns   []Turn `yaml:"turns"`
}

// Turn is one scripted assistant answer.
type Turn struct {
	Text      string       `yaml:"text,omitempty"`
	ToolCalls []Call       `yaml:"tool_calls,omitempty"`
	Usage     *model.Usage `yaml:"usage,omitempty"` // nil: estimated from the request size
	// Latency replaces the script's default delay for this turn when it is
	// non-zero.
	Latency    Duration `yaml:"latency,omitempty"`
	StopReason string   `yaml:"stop_reason,omitempty"` // "": "tool_use" with tool calls, else "end_turn"
}

// Call is one scripted tool call. Args is sent as a JSON object; ArgsJSON
// is sent verbatim instead, so a script can feed a tool malformed
// arguments. Setting both is an error; setting neither sends "{}".
type Call struct {
	Name     string         `yaml:"name"`
	Args     map[string]any `yaml:"args,omitempty"`
	ArgsJSON string         `yaml:"args_json,omitempty"`
}

// Duration is a time.Duration written in YAML as a Go duration string
// ("200ms", "1.5s"). A bare 0 is accepted too.
type Duration time.Duration

// String returns the duration in Go syntax, for example "200ms".
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalYAML writes the duration as a string, so a script written by a
// program reads back the same.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalYAML reads a duration string or a bare 0.
func (d *Duration) UnmarshalYAML(unmarshal func(any) error) error {
	var v any
	if err := unmarshal(&v); err != nil {
		return err
	}
	x, err := parseDuration(v)
	if err != nil {
		return err
	}
	*d = Duration(x)
	return nil
}

// parseDuration accepts what Duration.UnmarshalYAML accepts; the parser
// calls it directly so that a bad duration is reported with its position.
func parseDuration(v any) (time.Duration, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case string:
		x, err := time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("bad duration %q: want a value like \"200ms\" or \"1.5s\"", v)
		}
		return x, nil
	case int, int64, uint64:
		// Only 0 needs no unit; "latency: 200" is ambiguous (ms? s?).
		if fmt.Sprint(v) == "0" {
			return 0, nil
		}
		return 0, fmt.Errorf("bad duration %v: give a unit, like \"%vms\" or \"%vs\"", v, v, v)
	default:
		return 0, fmt.Errorf("bad duration %v: want a value like \"200ms\" or \"1.5s\"", v)
	}
}

// Load reads and parses the script file at path. Errors name the file.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	return Parse(data, path)
}

// WithLatency returns a copy of s in which every turn waits d, replacing
// the script's default and every turn's own latency. d of 0 answers at
// once (benchmarks); the demo uses it to slow a run down to watch it.
func (s *Script) WithLatency(d time.Duration) *Script {
	c := *s
	// The copy gets its own session list so that appending to one script's
	// sessions never shows up in the other; the turns are shared, read-only.
	c.Sessions = append([]Session(nil), s.Sessions...)
	c.overridden = true
	c.forcedDelay = d
	return &c
}

// delay is how long turn t waits before it is answered.
func (s *Script) delay(t *Turn) time.Duration {
	switch {
	case s.overridden:
		return s.forcedDelay
	case t.Latency != 0:
		return time.Duration(t.Latency)
	default:
		return time.Duration(s.Latency)
	}
}

// label names the script in error messages.
func (s *Script) label() string {
	if s.name == "" {
		return "script"
	}
	return "script " + s.name
}
