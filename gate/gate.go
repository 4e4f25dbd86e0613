// Package gate holds the host's hard gates on finished work (DA-B1, DC5):
// the exit signals a session ends with (DA-A1), the worker's
// self-assessment, a sanity check of a deliverable against its inputs, the
// Reviewer's structured verdict, and the delivery gate on a structured
// result.
//
// Every gate is a pure function of its arguments: the caller reads the files
// and passes their contents in, so a gate can be tested, replayed and
// recomputed by anyone. Gates fail closed: anything missing, malformed or
// unverifiable is a refusal, never a pass (the systems before us passed
// work when their reviewer errored; see NOTES.md).
//
// A refusal is a list of Problems. Each has a stable Code for the engine to
// branch on and a Message written for the model that has to fix it: it says
// what is wrong and what to do.
package gate

import "fmt"

// Code is a stable problem code. Codes never change meaning.
type Code string

// The codes. docs/gates.md lists them with what the worker should do.
const (
	// Self-assessment (DA-B1).
	ESelfMissing     Code = "E-SELF-MISSING"      // a check or constraint has no item
	ESelfFailed      Code = "E-SELF-FAILED"       // an item says pass=false
	ESelfNoQuote     Code = "E-SELF-NO-QUOTE"     // an item quotes nothing
	ESelfQuoteAbsent Code = "E-SELF-QUOTE-ABSENT" // the quote is not in the named file
	ESelfWrongLine   Code = "E-SELF-WRONG-LINE"   // the quote is in the file, but does not start on the named line
	ESelfNoSource    Code = "E-SELF-NO-SOURCE"    // file, line or origin missing, or the file does not exist, or the origin is no source
	ESelfDuplicate   Code = "E-SELF-DUPLICATE"    // a check or constraint is assessed twice
	ESelfUnknown     Code = "E-SELF-UNKNOWN"      // an item names a kind or number that does not exist

	// Deliverable sanity (DA-B1).
	ESuspectEmpty       Code = "E-SUSPECT-EMPTY"       // empty or whitespace only
	ESuspectCopy        Code = "E-SUSPECT-COPY"        // (nearly) a copy of an input
	ESuspectPlaceholder Code = "E-SUSPECT-PLACEHOLDER" // template text left in

	// Delivery gate (DC5).
	ESOPMissing    Code = "E-SOP-MISSING"    // an SOP step is not accounted for
	ESOPUnknown    Code = "E-SOP-UNKNOWN"    // an account names a step that does not exist
	EResultInvalid Code = "E-RESULT-INVALID" // the structured result is malformed
)

// Problem is one reason a gate refuses.
type Problem struct {
	// Item says what the problem is about: "check 2", "constraint 1",
	// "line 14", an input's name, "step 3", "result".
	Item    string `json:"item"`
	Code    Code   `json:"code"`
	Message string `json:"message"` // what is wrong and what to do, for the model
}

func (p Problem) String() string { return fmt.Sprintf("%s %s: %s", p.Code, p.Item, p.Message) }
