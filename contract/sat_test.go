package contract

import (
	"strings"
	"testing"
)

func pass(i int) Result { return Result{Check: i, Pass: true} }

// F-D2, F-D3: evidence is bound to exactly one contract, with one result per
// check in order, and sat holds only when it is bound and every result is a
// clean pass. Each row breaks one part of that.
func TestBoundAndSat(t *testing.T) {
	c := New("three things", []Check{
		{Kind: FileExists, Path: "a"},
		{Kind: Contains, Path: "a", Text: "x"},
		{Kind: Rubric, Text: "reads well"},
	})
	other := New("something else", c.Checks)
	for _, tc := range []struct {
		name  string
		e     Evidence
		bound string // substring of Bound's error, "" when bound
		sat   bool
	}{
		// F-D3: the one way to be satisfied.
		{"all pass", Evidence{ContractID: c.ID, Results: []Result{pass(0), pass(1), pass(2)}}, "", true},
		// F-D2: evidence must name its contract.
		{"no contract id", Evidence{Results: []Result{pass(0), pass(1), pass(2)}}, "names no contract", false},
		// F-D2, F-D3: evidence for another contract proves nothing here,
		// even with the same checks and all passing.
		{"wrong id", Evidence{ContractID: other.ID, Results: []Result{pass(0), pass(1), pass(2)}}, "not " + c.ID, false},
		// F-D2: one result per check.
		{"missing result", Evidence{ContractID: c.ID, Results: []Result{pass(0), pass(1)}}, "2 results for 3 checks", false},
		{"extra result", Evidence{ContractID: c.ID, Results: []Result{pass(0), pass(1), pass(2), pass(3)}}, "4 results for 3 checks", false},
		{"no results", Evidence{ContractID: c.ID}, "0 results for 3 checks", false},
		// F-D2: in order; a reordered set cannot stand in for the checks.
		{"reordered", Evidence{ContractID: c.ID, Results: []Result{pass(1), pass(0), pass(2)}}, "result 0 is for check 1", false},
		{"duplicated", Evidence{ContractID: c.ID, Results: []Result{pass(0), pass(0), pass(2)}}, "result 1 is for check 0", false},
		// F-D3: bound, but a check is false.
		{"one fails", Evidence{ContractID: c.ID, Results: []Result{pass(0), {Check: 1}, pass(2)}}, "", false},
		// F-D3: an undecided check is false, even if something marked it passed.
		{"pass with error", Evidence{ContractID: c.ID, Results: []Result{pass(0), {Check: 1, Pass: true, Err: "unreadable"}, pass(2)}}, "", false},
		{"error", Evidence{ContractID: c.ID, Results: []Result{pass(0), pass(1), {Check: 2, Err: "no reviewer"}}}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Bound(c, tc.e)
			switch {
			case tc.bound == "" && err != nil:
				t.Errorf("Bound = %v, want nil", err)
			case tc.bound != "" && (err == nil || !strings.Contains(err.Error(), tc.bound)):
				t.Errorf("Bound = %v, want an error with %q", err, tc.bound)
			}
			if got := Sat(c, tc.e); got != tc.sat {
				t.Errorf("Sat = %v, want %v", got, tc.sat)
			}
		})
	}
}

// F-D3, F-T4: sat is a function of (c, e): the same pair always gives the
// same answer, and because the id is the content address, "the same c"
// cannot quietly mean different checks.
func TestSatIsStableForTheSamePair(t *testing.T) {
	c := New("x", []Check{{Kind: FileMinBytes, Path: "a", Min: 10}})
	e := Evidence{ContractID: c.ID, Results: []Result{pass(0)}}
	for range 3 {
		if !Sat(c, e) {
			t.Fatal("Sat flipped for the same (c, e)")
		}
	}
	weaker := c
	weaker.Checks = []Check{{Kind: FileMinBytes, Path: "a", Min: 1}}
	if weaker.IDValid() {
		t.Fatal("a contract with changed checks kept a valid id")
	}
	if err := weaker.Validate(); err == nil {
		t.Fatal("Validate accepted a contract changed after it was made")
	}
}

func TestFailed(t *testing.T) {
	e := Evidence{ContractID: "c-x", Results: []Result{pass(0), {Check: 1}, {Check: 2, Pass: true, Err: "x"}, pass(3)}}
	got := Failed(e)
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("Failed = %v, want [1 2]", got)
	}
}

// Every kind has a description of its own, naming what it checks.
func TestDescribe(t *testing.T) {
	for _, k := range Kinds {
		d := Check{Kind: k, Path: "a.md", Min: 3, Text: "x y", Field: "f", Interpreter: "sh"}.Describe()
		if d == string(k) || d == "" {
			t.Errorf("%s has no description", k)
		}
		if k != Rubric && !strings.Contains(d, "a.md") {
			t.Errorf("%s: %q does not name the file", k, d)
		}
	}
}
