// Package contract holds the fractal specification's first layer: contracts,
// checks and evidence (F-D1, F-D2, F-D3, F-T4).
//
// A Contract is an immutable ⟨id, intent, checks⟩. Its id is the hash of its
// canonical content, so a contract cannot change without becoming another
// contract: "mutating" one is detectable by anyone who recomputes the id.
// Evidence proves exactly one contract, and Sat is the purely mechanical
// satisfaction relation of the specification.
//
// The package does no IO. Evaluating checks against real files lives in the
// check package.
package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Kind names a check kind.
type Kind string

// The check kinds. The first six are the structural kinds of the original
// done criteria; contains and matches read a text file; rubric is a statement
// graded by the Reviewer role.
const (
	FileExists       Kind = "file_exists"
	FileMinLines     Kind = "file_min_lines"
	FileMinBytes     Kind = "file_min_bytes"
	YAMLFieldPresent Kind = "yaml_field_present"
	DirMinFiles      Kind = "dir_min_files"
	Script           Kind = "script"
	Contains         Kind = "contains"
	Matches          Kind = "matches"
	Rubric           Kind = "rubric"
)

// Kinds lists every known kind in a stable order.
var Kinds = []Kind{FileExists, FileMinLines, FileMinBytes, YAMLFieldPresent, DirMinFiles, Script, Contains, Matches, Rubric}

// Check is one decidable proposition about the world state. Which fields
// matter depends on Kind; Validate says which are required.
type Check struct {
	Kind Kind `json:"kind" yaml:"kind"`
	// Path is relative to the folder the contract is evaluated in (an
	// instance's boundary). Used by every kind but rubric.
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
	// Min is the minimum for file_min_lines, file_min_bytes, dir_min_files.
	Min int `json:"min,omitempty" yaml:"min,omitempty"`
	// Field is the dotted path for yaml_field_present.
	Field string `json:"field,omitempty" yaml:"field,omitempty"`
	// Glob filters dir_min_files (default "*").
	Glob string `json:"glob,omitempty" yaml:"glob,omitempty"`
	// Text is the substring for contains, the regular expression for
	// matches, and the statement to grade for rubric.
	Text string `json:"text,omitempty" yaml:"text,omitempty"`
	// Interpreter and Args configure script; TimeoutSec bounds it.
	Interpreter string   `json:"interpreter,omitempty" yaml:"interpreter,omitempty"`
	Args        []string `json:"args,omitempty" yaml:"args,omitempty"`
	TimeoutSec  int      `json:"timeout_sec,omitempty" yaml:"timeout_sec,omitempty"`
	// Note is free text for people; it is part of the id like everything else.
	Note string `json:"note,omitempty" yaml:"note,omitempty"`
}

// Contract is ⟨id, intent, checks⟩ (F-D1). Treat it as a value: a changed
// requirement is a new contract with a new id.
type Contract struct {
	ID     string  `json:"id" yaml:"id"`
	Intent string  `json:"intent" yaml:"intent"`
	Checks []Check `json:"checks" yaml:"checks"`
}

// canonical is the hashed form: intent and checks only, in a fixed field
// order (encoding/json emits struct fields in declaration order and omits
// empty ones, so equal content gives equal bytes).
type canonical struct {
	Intent string  `json:"intent"`
	Checks []Check `json:"checks"`
}

// ComputeID returns the content address of intent + checks: "c-" followed by
// the first 16 hex digits of the SHA-256 of their canonical JSON.
func ComputeID(intent string, checks []Check) string {
	if checks == nil {
		checks = []Check{}
	}
	b, err := json.Marshal(canonical{Intent: intent, Checks: checks})
	if err != nil {
		// Only strings, ints and slices of them: Marshal cannot fail.
		panic(fmt.Sprintf("contract: canonical encoding: %v", err))
	}
	sum := sha256.Sum256(b)
	return "c-" + hex.EncodeToString(sum[:8])
}

// New builds a contract and computes its id.
func New(intent string, checks []Check) Contract {
	cs := append([]Check(nil), checks...)
	return Contract{ID: ComputeID(intent, cs), Intent: intent, Checks: cs}
}

// IDValid reports whether c.ID is the content address of c's intent and
// checks. A contract whose id does not match was edited after it was made.
func (c Contract) IDValid() bool { return c.ID == ComputeID(c.Intent, c.Checks) }

// Equal reports whether two contracts have the same id and content.
func (c Contract) Equal(o Contract) bool {
	return c.ID == o.ID && c.IDValid() && o.IDValid()
}

// Result is the outcome of one check: ⟦ch⟧ ∈ {true, false}. Err is set when
// the check could not be decided (a missing file, an unreadable folder);
// such a check is false, never true. Rationale carries the Reviewer's reason
// for a rubric grade, or a short explanation for the others.
type Result struct {
	Check     int    `json:"check"` // index into Contract.Checks
	Pass      bool   `json:"pass"`
	Detail    string `json:"detail,omitempty"`
	Err       string `json:"error,omitempty"`
	Rationale string `json:"rationale,omitempty"`
}

// Evidence is ⟨contract_id, results, artifacts⟩ (F-D2). One evidence proves
// exactly one contract (I-Evidence).
type Evidence struct {
	ContractID string   `json:"contract_id"`
	Results    []Result `json:"results"`
	Artifacts  []string `json:"artifacts,omitempty"`
}

// Bound reports why e cannot be evidence for c, or nil when it is bound to c:
// the contract id matches and there is exactly one result per check, in
// order.
func Bound(c Contract, e Evidence) error {
	if e.ContractID == "" {
		return fmt.Errorf("evidence names no contract")
	}
	if e.ContractID != c.ID {
		return fmt.Errorf("evidence is for %s, not %s", e.ContractID, c.ID)
	}
	if len(e.Results) != len(c.Checks) {
		return fmt.Errorf("evidence has %d results for %d checks", len(e.Results), len(c.Checks))
	}
	for i, r := range e.Results {
		if r.Check != i {
			return fmt.Errorf("result %d is for check %d", i, r.Check)
		}
	}
	return nil
}

// Sat is sat(c, e) of F-D3: e.contract_id = c.id and every check is true.
// Purely mechanical; a result with an error is false.
func Sat(c Contract, e Evidence) bool {
	if Bound(c, e) != nil {
		return false
	}
	for _, r := range e.Results {
		if !r.Pass || r.Err != "" {
			return false
		}
	}
	return true
}

// Failed returns the indexes of the checks e does not satisfy.
func Failed(e Evidence) []int {
	var out []int
	for _, r := range e.Results {
		if !r.Pass || r.Err != "" {
			out = append(out, r.Check)
		}
	}
	return out
}
