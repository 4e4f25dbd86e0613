// Package intake runs the two phases of a run that come before any
// instance exists (issue #6, "From intent to contracts"):
//
//   - Discuss (F-D3.5, DA-A3, DA-B4): Meta reads the raw task and the input
//     inventory, asks the person clarifying questions in plain words with
//     editable options (answered at the terminal, or by their defaults in
//     autonomous mode), and proposes the contracts and the six explicit
//     constraints of the task, each quoting the person's own words.
//   - Bootstrap (DA-B3, DA-A2, DA-A5): Meta writes the task harness through
//     the audited harness_write tool only; the host's static checks
//     (harness.Precheck) send faults back to Meta; then an independent
//     Reviewer, given only the person's words and the files, passes the
//     harness or sends it back for another round.
//
// Inventory (DA-B2) lists what every input really holds and writes
// inputs/inventory.md, which both phases start from.
//
// The package is model-driven but host-agnostic: it does its own file IO
// inside the run folder it is given (inputs/ and, through harness.Writer
// only, harness/), and it reports every step to Config.Record before the
// step's effect, so the host (the engine) can journal it and stop the
// flow by returning an error. It starts no goroutine and keeps no state
// between calls: everything it knows is in the run folder, the Outcome
// and its arguments.
//
// Everything a person reads — questions, the summary of a proposal — is
// checked by package usermsg for framework jargon; refusals go back to
// Meta as structured tool errors it can fix. docs/intake.md describes the
// phases for users and developers.
package intake
