package stage

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

var (
	t0      = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	allOpen = Gates{BootstrapReviewPassed: true, LastCompletionClaimAt: t0, FinalReviewPassedAt: t0.Add(time.Minute)}
)

type move struct {
	by       Actor
	from, to Stage
}

// DA-A4: the table holds exactly these rows. Writing them out again here is
// deliberate: a change to the rules must be made twice, on purpose.
func TestTableRows(t *testing.T) {
	want := []move{
		{Host, Submitted, Clarifying},
		{Host, Clarifying, Bootstrapping},
		{Host, Bootstrapping, Running},
		{Host, Running, Done},
		{Host, AwaitingUser, Running},
		{Host, Running, AwaitingUser},
		{Host, Submitted, Failed}, {Host, Clarifying, Failed}, {Host, Bootstrapping, Failed},
		{Host, Running, Failed}, {Host, AwaitingUser, Failed}, {Host, Paused, Failed},
		{Meta, Running, AwaitingUser},
		{Meta, Running, Done},
		{User, Running, Paused},
		{User, Paused, Running},
		{User, AwaitingUser, Running},
		{User, Submitted, Cancelled}, {User, Clarifying, Cancelled}, {User, Bootstrapping, Cancelled},
		{User, Running, Cancelled}, {User, AwaitingUser, Cancelled}, {User, Paused, Cancelled},
	}
	got := Transitions()
	if len(got) != len(want) {
		t.Fatalf("table has %d rows, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.By != w.by || g.From != w.from || g.To != w.to {
			t.Errorf("row %d = %s %s→%s, want %s %s→%s", i, g.By, g.From, g.To, w.by, w.from, w.to)
		}
		if g.Why == "" {
			t.Errorf("row %d has no explanation", i)
		}
	}
}

// DA-A4: every row is allowed (with its gate open), every other
// (from, to, actor) triple is forbidden, with or without gates.
func TestEveryMove(t *testing.T) {
	rows := map[move]bool{}
	for _, r := range Transitions() {
		rows[move{r.By, r.From, r.To}] = true
	}
	for _, by := range Actors {
		for _, from := range Stages {
			for _, to := range Stages {
				m := move{by, from, to}
				errA := Allowed(from, to, by)
				errC := Check(from, to, by, allOpen)
				if rows[m] {
					if errA != nil || errC != nil {
						t.Errorf("%v: table row refused: %v / %v", m, errA, errC)
					}
					continue
				}
				if !errors.Is(errA, ErrForbidden) || !errors.Is(errC, ErrForbidden) {
					t.Errorf("%v: forbidden move not refused as ErrForbidden: %v / %v", m, errA, errC)
				}
			}
		}
	}
}

// DA-A3: Meta may never pause a run, from anywhere, whatever the gates.
func TestMetaNeverPauses(t *testing.T) {
	for _, from := range Stages {
		for _, g := range []Gates{{}, allOpen} {
			err := Check(from, Paused, Meta, g)
			if err == nil {
				t.Fatalf("meta paused the run from %s", from)
			}
			if from != Paused && !strings.Contains(err.Error(), "only the user pauses") && !from.Terminal() {
				t.Errorf("from %s: error does not say why: %v", from, err)
			}
		}
	}
	for _, r := range Transitions() {
		if r.To == Paused && r.By != User {
			t.Errorf("row lets %s pause", r.By)
		}
	}
}

// DA-A4: along any sequence of allowed moves, the run only ever enters
// paused by the user's hand, and never leaves a terminal stage.
func TestRandomWalks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := Submitted
		for range rapid.IntRange(0, 40).Draw(t, "steps") {
			by := rapid.SampledFrom(Actors).Draw(t, "by")
			to := rapid.SampledFrom(Stages).Draw(t, "to")
			if Check(s, to, by, allOpen) != nil {
				continue
			}
			if s.Terminal() {
				t.Fatalf("left terminal stage %s", s)
			}
			if to == Paused && by != User {
				t.Fatalf("%s paused the run", by)
			}
			s = to
		}
	})
}

// DA-A2, DA-B1: the two host gates.
func TestGates(t *testing.T) {
	claim := t0
	cases := []struct {
		name     string
		from, to Stage
		by       Actor
		g        Gates
		ok       bool
	}{
		{"bootstrap without review", Bootstrapping, Running, Host, Gates{}, false},
		{"bootstrap with review", Bootstrapping, Running, Host, Gates{BootstrapReviewPassed: true}, true},
		{"resume needs the bootstrap review too", Paused, Running, User, Gates{}, false},
		{"answer needs the bootstrap review too", AwaitingUser, Running, User, Gates{}, false},
		{"done with no claim", Running, Done, Host, Gates{FinalReviewPassedAt: claim}, false},
		{"done with no review", Running, Done, Host, Gates{LastCompletionClaimAt: claim}, false},
		{"review before the claim", Running, Done, Host, Gates{LastCompletionClaimAt: claim, FinalReviewPassedAt: claim.Add(-time.Second)}, false},
		{"review at the same instant", Running, Done, Meta, Gates{LastCompletionClaimAt: claim, FinalReviewPassedAt: claim}, false},
		{"review after the claim", Running, Done, Host, Gates{LastCompletionClaimAt: claim, FinalReviewPassedAt: claim.Add(time.Nanosecond)}, true},
		{"meta delivery with review", Running, Done, Meta, Gates{LastCompletionClaimAt: claim, FinalReviewPassedAt: claim.Add(time.Minute)}, true},
		{"ungated row", Running, AwaitingUser, Meta, Gates{}, true},
		{"fail needs no gate", Bootstrapping, Failed, Host, Gates{}, true},
	}
	for _, c := range cases {
		err := Check(c.from, c.to, c.by, c.g)
		if c.ok != (err == nil) {
			t.Errorf("%s: err = %v, want ok=%v", c.name, err, c.ok)
		}
		if !c.ok && !errors.Is(err, ErrGate) {
			t.Errorf("%s: err = %v, want ErrGate", c.name, err)
		}
	}
}

// DA-B1: a new completion claim after a passed review makes that review
// stale; only a newer review opens the gate again.
func TestNewClaimResetsFinalReview(t *testing.T) {
	g := Gates{LastCompletionClaimAt: t0, FinalReviewPassedAt: t0.Add(time.Minute)}
	if err := Check(Running, Done, Host, g); err != nil {
		t.Fatal(err)
	}
	g.LastCompletionClaimAt = t0.Add(2 * time.Minute) // the worker claimed again
	if err := Check(Running, Done, Host, g); !errors.Is(err, ErrGate) {
		t.Fatalf("stale review accepted: %v", err)
	}
	g.FinalReviewPassedAt = t0.Add(3 * time.Minute)
	if err := Check(Running, Done, Host, g); err != nil {
		t.Fatal(err)
	}
}

// Unknown stages and actors are refused as such, and errors say what would
// be allowed.
func TestErrors(t *testing.T) {
	for _, c := range []struct {
		from, to Stage
		by       Actor
	}{
		{"started", Running, Host}, {Running, "finished", Host}, {Running, Paused, "robot"},
	} {
		if err := Allowed(c.from, c.to, c.by); !errors.Is(err, ErrUnknown) {
			t.Errorf("%v: %v, want ErrUnknown", c, err)
		}
	}
	err := Allowed(Running, Paused, Meta)
	var te *TransitionError
	if !errors.As(err, &te) || te.By != Meta || te.From != Running || te.To != Paused {
		t.Fatalf("not a TransitionError: %v", err)
	}
	for _, want := range []string{"only the user pauses", "awaiting_user", "done"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if err := Allowed(Done, Running, User); !strings.Contains(err.Error(), "final") {
		t.Errorf("terminal error unclear: %v", err)
	}
	if err := Allowed(Running, Running, User); !errors.Is(err, ErrForbidden) {
		t.Errorf("self-move: %v", err)
	}
}

// Transitions hands out copies: editing one changes no rule.
func TestTableImmutable(t *testing.T) {
	tr := Transitions()
	tr[0].By = Meta
	if Transitions()[0].By != Host {
		t.Fatal("the table was changed through a returned slice")
	}
}

// The doc renders the same table as the code.
func TestDocInStep(t *testing.T) {
	b, err := os.ReadFile("../docs/stages.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), Markdown()) {
		t.Fatalf("docs/stages.md is out of step with the table; paste this in:\n%s", Markdown())
	}
}
