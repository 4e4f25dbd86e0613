package policy

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/fractal-harness/fractal/contract"
)

func checks(n int) []contract.Check {
	var cs []contract.Check
	for range n {
		cs = append(cs, contract.Check{Kind: contract.FileExists, Path: "x.md"})
	}
	return cs
}

// F-D5.5: the documented defaults are valid and autonomous.
func TestDefaults(t *testing.T) {
	p := Default()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Mode != Autonomous || p.RetryCount != 2 || p.MaxDepth != 3 || p.GranularityThreshold != 3 || p.Pool != 4 {
		t.Fatalf("defaults changed: %+v", p)
	}
	bad := []func(*Policy){
		func(p *Policy) { p.GranularityThreshold = 0 },
		func(p *Policy) { p.MaxDepth = -1 },
		func(p *Policy) { p.Budget.Tokens = -1 },
		func(p *Policy) { p.RiskThreshold = 1.5 },
		func(p *Policy) { p.RetryCount = -1 },
		func(p *Policy) { p.Mode = "sometimes" },
		func(p *Policy) { p.Pool = 0 },
		func(p *Policy) { p.MaxTurns = 0 },
		func(p *Policy) { p.ModelTimeout = 0 },
	}
	for i, f := range bad {
		p := Default()
		f(&p)
		if p.Validate() == nil {
			t.Errorf("case %d: invalid policy accepted", i)
		}
	}
}

// F-D6: g decomposes above the granularity threshold, never at max depth.
func TestG(t *testing.T) {
	p := Default()
	cases := []struct {
		checks, depth int
		want          Granularity
	}{
		{1, 0, Direct}, {3, 0, Direct}, {4, 0, Decompose}, {4, 2, Decompose}, {4, 3, Direct}, {10, 5, Direct},
	}
	for _, c := range cases {
		if got := G(contract.New("x", checks(c.checks)), c.depth, p); got != c.want {
			t.Errorf("G(%d checks, depth %d) = %s, want %s", c.checks, c.depth, got, c.want)
		}
	}
}

// F-D6, F-D3: v accepts exactly when sat.
func TestV(t *testing.T) {
	c := contract.New("x", checks(2))
	ok := contract.Evidence{ContractID: c.ID, Results: []contract.Result{{Check: 0, Pass: true}, {Check: 1, Pass: true}}}
	if V(c, ok) != Accept {
		t.Fatal("sat evidence rejected")
	}
	bad := ok
	bad.Results = []contract.Result{{Check: 0, Pass: true}, {Check: 1, Pass: true, Err: "missing file"}}
	if V(c, bad) != Reject {
		t.Fatal("an erroring check must not pass")
	}
	other := ok
	other.ContractID = "c-other"
	if V(c, other) != Reject {
		t.Fatal("evidence for another contract accepted")
	}
}

// F-D6: r in the specification's order: retry, reassign, replan, ask_user.
func TestROrder(t *testing.T) {
	p := Default()
	steps := []struct {
		t    Tally
		want Action
	}{
		{Tally{}, Retry},
		{Tally{Retries: 1}, Retry},
		{Tally{Retries: 2}, Reassign},
		{Tally{Retries: 2, Reassigns: 1}, Replan},
		{Tally{Retries: 2, Reassigns: 1, Replans: 1}, AskUser},
	}
	for _, s := range steps {
		if got := R(s.t, 0, p); got != s.want {
			t.Errorf("R(%+v) = %s, want %s", s.t, got, s.want)
		}
	}
	noPerm := p
	noPerm.Permissions = Permissions{}
	if got := R(Tally{Retries: 2}, 0, noPerm); got != AskUser {
		t.Errorf("without permissions: %s", got)
	}
	if got := R(Tally{}, 0.9, p); got != AskUser {
		t.Errorf("over the risk threshold: %s", got)
	}
	if got := R(Tally{TokensUsed: p.Budget.Tokens}, 0, p); got != AskUser {
		t.Errorf("budget spent: %s", got)
	}
	inter := p
	inter.Mode = Interactive
	if got := R(Tally{}, 0, inter); got != Retry {
		t.Errorf("interactive low-risk retry: %s", got)
	}
	if got := R(Tally{Retries: 2}, 0, inter); got != AskUser {
		t.Errorf("interactive after retries: %s", got)
	}
}

// F-D6: r is total and deterministic, and every chain of decisions reaches
// ask_user in finitely many steps (so supervision terminates).
func TestRTerminates(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := Default()
		p.RetryCount = rapid.IntRange(0, 5).Draw(t, "retries")
		p.MaxReassigns = rapid.IntRange(0, 3).Draw(t, "reassigns")
		p.MaxReplans = rapid.IntRange(0, 3).Draw(t, "replans")
		p.Permissions.Reassign = rapid.Bool().Draw(t, "canReassign")
		p.Permissions.Replan = rapid.Bool().Draw(t, "canReplan")
		var tl Tally
		for steps := 0; ; steps++ {
			a := R(tl, 0, p)
			if a != R(tl, 0, p) {
				t.Fatal("R is not deterministic")
			}
			switch a {
			case Retry:
				tl.Retries++
			case Reassign:
				tl.Reassigns++
				tl.Retries = 0
			case Replan:
				tl.Replans++
				tl.Retries, tl.Reassigns = 0, 0
			case AskUser:
				return
			default:
				t.Fatalf("unknown action %q", a)
			}
			if steps > 1000 {
				t.Fatal("r never reaches ask_user")
			}
		}
	})
}
