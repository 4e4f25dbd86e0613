// Package harness holds the task harness: the task-specific instructions
// Meta writes during bootstrapping and the workers follow (DA-B3), and the
// rules that keep it honest at runtime (DA-A5, DA-A2).
//
// The framework's own prompts stay task-agnostic. Everything that is
// particular to one task lives under <run>/harness/, in a few files:
//
//	methodology.md             opens with the constraint → landing-point table
//	done_criteria.yaml         structural checks of the deliverable (DA-B1)
//	worker_prompt_taskpart.md  the task part of the worker's instructions
//	sop/<name>.md              step-by-step procedures
//	tools/scripts/<name>.py|sh helper scripts
//
// The package provides four things:
//
//   - Constraints. The raw task is translated into explicit constraints of
//     six kinds (audience, form, time window, must-include, exclude,
//     quality). Each one quotes the user's own words from the task or a
//     clarification answer; a constraint from "domain common sense" has no
//     such quote and is refused (CheckSources).
//   - Placements. Each constraint is written into at least three files,
//     tagged with its marker "[C1]", and methodology.md opens with a table
//     that says where each lands (CheckPlacements).
//   - Audited writes. Only whitelisted paths may be written (Allowed), only
//     through the Writer, which validates structured files, records an
//     audit entry before it touches the disk, and writes atomically. Every
//     other write under harness/ is refused (Guard).
//   - Review bookkeeping. A change reviewed by its own author is not
//     reviewed (Unreviewed); large changes need a revision review; the
//     bootstrap review gets the user's words and the files, nothing of
//     Meta's opinion (ReviewPacket), after the host's static checks
//     (Precheck).
//
// Everything here is pure except the Writer, which does the file IO.
// docs/harness.md is the user-facing description.
package harness
