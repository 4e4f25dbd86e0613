// Package usermsg checks what the run says to its user (DA-B4). The user is
// not a developer: every message is a question, a delivery report or a
// notification, in everyday words. A question offers editable options with
// one default and says what would go wrong, silently, if the default were
// wrong — the user should not have to be the one who spots errors.
//
// Validate is the host's check on a message Meta wants to send; when it
// refuses, the host hands the error back to Meta to rephrase. TakeDefault is
// what autonomous mode does with a question nobody answered.
//
// The package is pure: it reads no clock (the wait is an argument) and
// sends nothing.
package usermsg

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Kind is what a message is for.
type Kind string

// The kinds.
const (
	Question       Kind = "question"        // the run needs a decision from the user
	DeliveryReport Kind = "delivery_report" // the work is delivered: what, where, what was assumed
	Notification   Kind = "notification"    // for information; needs no answer
)

// Kinds lists every kind.
var Kinds = []Kind{Question, DeliveryReport, Notification}

// Option is one proposed answer to a question. The user may take it as it
// is or edit it: an option is a starting point, not a cage (DA-A3).
type Option struct {
	Label   string `json:"label"`   // what the user reads
	Value   string `json:"value"`   // what the run does with it; what the user edits
	Default bool   `json:"default"` // taken when no answer comes in autonomous mode
}

// Message is one message to the user.
type Message struct {
	Kind    Kind     `json:"kind"`
	Text    string   `json:"text"`
	Options []Option `json:"options,omitempty"` // questions only
	// SilentFailure, for a question, says what would go wrong without
	// anyone noticing if the default were the wrong choice (DA-B4).
	SilentFailure string `json:"silent_failure,omitempty"`
}

// jargon are the framework words a user must never see, with an everyday
// replacement to suggest. Matched as whole words, ignoring case, with
// their plurals and possessives ("workers", "Meta's"); a hyphen or an
// underscore joins a word, so "meta-analysis" and "metadata" are not
// matched, but "sub-agent" and "write_file" are.
//
// "contract" is refused even in its legal sense ("the supplier contract"):
// the check cannot tell the senses apart, and the host asks Meta to
// rephrase ("the supplier agreement"). A false positive costs Meta one
// rewording; jargon costs the user's understanding.
var jargon = map[string]string{
	"instance":       "(say what is being done, not who does it)",
	"contract":       "the agreed requirements / the agreement",
	"harness":        "the method",
	"worker":         "I / the assistant",
	"meta":           "I / the assistant",
	"stage":          "step / phase, in plain words",
	"sub-agent":      "(say what is being done, not who does it)",
	"subagent":       "(say what is being done, not who does it)",
	"watcher":        "(leave it out)",
	"evidence":       "the passage / the source",
	"guard":          "a safety rule",
	"journal":        "the record of the work",
	"bootstrapping":  "preparing",
	"awaiting_user":  "waiting for you",
	"done_criteria":  "what the result must contain",
	"progress.md":    "(leave it out)",
	"manifest.yaml":  "(leave it out)",
	"events.jsonl":   "(leave it out)",
	"read_file":      "read",
	"write_file":     "wrote",
	"list_dir":       "looked through the folder",
	"declare_done":   "finished",
	"submit_plan":    "planned",
	"submit_grade":   "checked",
	"request_help":   "asked for help",
	"notify_meta":    "(leave it out)",
	"send_to_worker": "(leave it out)",
	"ask_user":       "asked you",
}

// Jargon returns the framework words Validate refuses, sorted. The list is
// documented in docs/user-messages.md.
func Jargon() []string {
	out := make([]string, 0, len(jargon))
	for w := range jargon {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// A word is a run of letters, digits, "_", "-" and "." (so tool names and
// file names stay whole); dots and hyphens at its ends are trimmed ("stage."
// → "stage"), and an apostrophe ends it ("worker's" → "worker").
var wordRE = regexp.MustCompile(`[\p{L}\p{N}_.\-]+`)

// jargonIn returns the framework words in s, lower-cased, in order of first
// appearance.
func jargonIn(s string) []string {
	var out []string
	for _, w := range wordRE.FindAllString(s, -1) {
		w = strings.ToLower(strings.Trim(w, ".-"))
		base, ok := root(w)
		if ok && !slices.Contains(out, base) {
			out = append(out, base)
		}
	}
	return out
}

// root maps a word, or its plural, to its entry in jargon.
func root(w string) (string, bool) {
	if _, ok := jargon[w]; ok {
		return w, true
	}
	for _, suf := range []string{"es", "s"} {
		if b, ok := strings.CutSuffix(w, suf); ok {
			if _, ok := jargon[b]; ok {
				return b, true
			}
		}
	}
	return "", false
}

// Error is a refused message. Problems are structural faults; Words are
// the framework words found, each with where it was.
type Error struct {
	Problems []string
	Words    []Word
}

// Word is one framework word found in a message.
type Word struct {
	Word  string // the jargon entry, lower-case
	Where string // "text", "option 2 label", "option 2 value", "silent failure"
}

func (e *Error) Error() string {
	var parts []string
	parts = append(parts, e.Problems...)
	if len(e.Words) > 0 {
		var ws []string
		for _, w := range e.Words {
			ws = append(ws, fmt.Sprintf("%q in the %s (try: %s)", w.Word, w.Where, jargon[w.Word]))
		}
		parts = append(parts, "the user would not know these words, rephrase in everyday language: "+strings.Join(ws, "; "))
	}
	return "usermsg: " + strings.Join(parts, "; ")
}

// Validate checks a message before it goes to the user. It refuses an
// unknown kind; empty text; a question with fewer than two options, an
// option with an empty label or value, two options with the same value,
// not exactly one default, or no SilentFailure; options or a SilentFailure
// on a message that is not a question (the user would never see them); and
// any framework word (see Jargon) in the text, the options or the silent
// failure. The error is an *Error naming every fault and every word, so
// Meta can fix everything in one go.
func Validate(m Message) error {
	e := &Error{}
	bad := func(format string, args ...any) { e.Problems = append(e.Problems, fmt.Sprintf(format, args...)) }
	if !slices.Contains(Kinds, m.Kind) {
		bad("kind %q is not question, delivery_report or notification", m.Kind)
	}
	if strings.TrimSpace(m.Text) == "" {
		bad("the text is empty")
	}
	if m.Kind == Question {
		if len(m.Options) < 2 {
			bad("a question needs at least two options the user can pick and edit, not a blank box")
		}
		defaults := 0
		values := map[string]int{}
		for i, o := range m.Options {
			n := i + 1
			if strings.TrimSpace(o.Label) == "" {
				bad("option %d has no label", n)
			}
			if strings.TrimSpace(o.Value) == "" {
				bad("option %d has no value for the user to edit", n)
			} else if j, dup := values[strings.TrimSpace(o.Value)]; dup {
				bad("options %d and %d have the same value", j, n)
			} else {
				values[strings.TrimSpace(o.Value)] = n
			}
			if o.Default {
				defaults++
			}
		}
		if len(m.Options) >= 2 && defaults != 1 {
			bad("a question needs exactly one default option, it has %d", defaults)
		}
		if strings.TrimSpace(m.SilentFailure) == "" {
			bad("a question must say what would go wrong, unnoticed, if the default were wrong (silent_failure)")
		}
	} else if m.Kind.valid() {
		if len(m.Options) > 0 {
			bad("a %s has no options; only a question does", m.Kind)
		}
		if m.SilentFailure != "" {
			bad("a %s has no silent_failure; only a question does (put it in the text)", m.Kind)
		}
	}
	find := func(where, s string) {
		for _, w := range jargonIn(s) {
			e.Words = append(e.Words, Word{Word: w, Where: where})
		}
	}
	find("text", m.Text)
	for i, o := range m.Options {
		find(fmt.Sprintf("option %d label", i+1), o.Label)
		find(fmt.Sprintf("option %d value", i+1), o.Value)
	}
	find("silent failure", m.SilentFailure)
	if len(e.Problems) == 0 && len(e.Words) == 0 {
		return nil
	}
	return e
}

func (k Kind) valid() bool { return slices.Contains(Kinds, k) }

// Answer is the resolution of a question.
type Answer struct {
	Value     string `json:"value"`
	Defaulted bool   `json:"defaulted"` // true when no one answered and the default was taken
	// Note is a line for the delivery report, in the user's words: the
	// user must learn which decisions were taken without them.
	Note string `json:"note,omitempty"`
}

// TakeDefault resolves a question nobody answered after waited, in
// autonomous mode: it takes the default option and writes the note the
// delivery report must carry. A message with no default (which Validate
// would have refused) yields an empty, non-defaulted Answer whose note says
// so; TakeDefault never invents an answer.
func TakeDefault(m Message, waited time.Duration) Answer {
	for _, o := range m.Options {
		if o.Default {
			return Answer{Value: o.Value, Defaulted: true,
				Note: fmt.Sprintf("no answer after %s; took the default: %s", human(waited), o.Label)}
		}
	}
	return Answer{Note: fmt.Sprintf("no answer after %s, and there was no default to take", human(waited))}
}

// human writes a wait the way a person would: "10m", "1h30m", "45s".
func human(d time.Duration) string {
	switch {
	case d < time.Second:
		return "less than a second"
	case d < time.Minute:
		return d.Round(time.Second).String()
	}
	d = d.Round(time.Minute)
	h, m := d/time.Hour, (d%time.Hour)/time.Minute
	switch {
	case h == 0:
		return fmt.Sprintf("%dm", m)
	case m == 0:
		return fmt.Sprintf("%dh", h)
	}
	return fmt.Sprintf("%dh%dm", h, m)
}
