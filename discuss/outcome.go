package discuss

import (
	"errors"
	"fmt"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/harness"
)

// Proposed is one contract the discussion proposes (F-D3.5: one discussion
// may yield several parallel contracts). Its id is computed when it is
// made (contract.New); Name is the folder of its root instance, work/<name>.
type Proposed struct {
	Name   string           `json:"name" yaml:"name"`
	Intent string           `json:"intent" yaml:"intent"`
	Checks []contract.Check `json:"checks" yaml:"checks"`
}

// Contract makes the contract p proposes.
func (p Proposed) Contract() contract.Contract { return contract.New(p.Intent, p.Checks) }

// Outcome is the result of a discussion.
type Outcome struct {
	Contracts   []Proposed           `json:"contracts" yaml:"contracts"`
	Constraints []harness.Constraint `json:"constraints" yaml:"constraints"`
	// FastPath is set when the raw task was clear enough to need no
	// questions: it must then state all six kinds of constraint itself,
	// since "none stated" needs a clarification answer to quote.
	FastPath bool    `json:"fast_path,omitempty" yaml:"fast_path,omitempty"`
	Rounds   []Round `json:"rounds,omitempty" yaml:"rounds,omitempty"`
}

// maxName bounds a contract name, as the engine does.
const maxName = 64

// Validate reports every problem with o, joined: at least one contract;
// names of letters, digits, '-' and '_' (they name folders), unique; each
// contract valid (contract.New(...).Validate()); FastPath exactly when
// there are no rounds; rounds numbered 1, 2, … with valid questions and
// one answer, not empty, to each question; and the constraints traced to
// the user's words (harness.CheckSources), quoting only rounds that took
// place. sources maps a source name to its text, as Sources builds it.
func (o Outcome) Validate(sources map[string]string) error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf("discuss: "+format, a...)) }
	if len(o.Contracts) == 0 {
		fail("the discussion proposes no contract")
	}
	names := map[string]bool{}
	for i, p := range o.Contracts {
		switch {
		case !validName(p.Name):
			fail("contract %d: name %q: use 1 to %d letters, digits, '-' and '_' (it names a folder)", i+1, p.Name, maxName)
		case names[p.Name]:
			fail("contract %d: the name %q is used twice", i+1, p.Name)
		}
		names[p.Name] = true
		if err := p.Contract().Validate(); err != nil {
			fail("contract %s: %w", p.Name, err)
		}
	}

	switch {
	case o.FastPath && len(o.Rounds) > 0:
		fail("a fast-path discussion asks no questions, but it records rounds of questions (%d)", len(o.Rounds))
	case !o.FastPath && len(o.Rounds) == 0:
		fail("no questions were asked: record the rounds, or mark the discussion as a fast path")
	}
	for i, r := range o.Rounds {
		if r.N != i+1 {
			fail("round %d is numbered %d; number rounds 1, 2, 3, …", i+1, r.N)
		}
		if err := ValidateQuestions(r.Questions); err != nil {
			fail("round %d: %w", r.N, err)
		}
		asked := map[string]bool{}
		for _, q := range r.Questions {
			asked[q.ID] = true
		}
		answered := map[string]bool{}
		for _, a := range r.Answers {
			switch {
			case !asked[a.QuestionID]:
				fail("round %d: an answer to %q, which was not asked", r.N, a.QuestionID)
			case answered[a.QuestionID]:
				fail("round %d: question %s is answered twice", r.N, a.QuestionID)
			case oneLine(a.Value) == "":
				fail("round %d: the answer to %s is empty", r.N, a.QuestionID)
			}
			answered[a.QuestionID] = true
		}
		for _, q := range r.Questions {
			if !answered[q.ID] {
				fail("round %d: question %s has no answer (in autonomous mode, take the defaults)", r.N, q.ID)
			}
		}
	}

	for _, c := range o.Constraints {
		if n, ok := harness.AnswersRound(c.Source); ok && n > len(o.Rounds) {
			fail("constraint %s quotes round %d, which did not take place", c.ID, n)
		}
	}
	for _, p := range harness.CheckSources(o.Constraints, sources) {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

func validName(s string) bool {
	if s == "" || len(s) > maxName {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Sources returns the texts constraints may quote: the raw task under
// harness.TaskSource and each round's AnswersMarkdown under
// harness.AnswersSource(n) — the same texts written to inputs/.
func Sources(rawTask string, rounds []Round) map[string]string {
	m := map[string]string{harness.TaskSource: rawTask}
	for _, r := range rounds {
		m[harness.AnswersSource(r.N)] = AnswersMarkdown(r)
	}
	return m
}
