// Package fs gives a model three file tools — read_file, write_file and
// list_dir — confined to the calling instance (F-D4, F-A3, I-Boundary).
//
// Paths in arguments are relative to the run folder (tool.Env.RunRoot), for
// example "inputs/sales.csv" or "work/root/market/notes.md". An instance
// writes only inside its boundary (Env.Boundary) and reads inside its
// boundary or one of the folders in Env.Readable.
//
// Every call is checked before any file is touched, in this order:
//
//  1. the arguments are a JSON object with the required fields (E-ARGS);
//  2. the path is non-empty and relative, with no "..", ":", backslash or
//     NUL (E-PATH);
//  3. the path lies inside the allowed folder, compared segment by segment,
//     so "work/root/ab" is not inside "work/root/a" (E-BOUNDARY-WRITE,
//     E-BOUNDARY-READ);
//  4. on disk, the real path of the target (or of its deepest existing
//     folder, for a new file) stays inside the real path of the allowed
//     folder, and that folder is not itself reached through a symlink, so
//     a symlink cannot lead out (same codes).
//
// The file operations then go through an os.Root opened at the allowed
// folder, so a symlink swapped in between the check and the use still
// cannot lead out; os.Root also never follows absolute symlinks, so those
// are refused even when they point inside. write_file never writes through
// a symlink, creates parent folders, and replaces files atomically.
//
// Refusals are *tool.Error values the model can act on; any other error is
// a host fault (a bad Env, an IO failure).
package fs

import (
	"github.com/fractal-harness/fractal/tool"
)

// MaxOutput caps what read_file and list_dir return, so one call cannot
// flood the model's context; a note says how to read on.
const MaxOutput = 256 << 10

// The stable codes of the refusals, besides tool's own.
const (
	CodeArgs          = "E-ARGS"
	CodePath          = "E-PATH"
	CodeBoundaryWrite = "E-BOUNDARY-WRITE"
	CodeBoundaryRead  = "E-BOUNDARY-READ"
	CodeNotFound      = "E-NOT-FOUND"
	CodeBinary        = "E-BINARY"
	CodeIsDir         = "E-IS-DIR"
	CodeNotDir        = "E-NOT-DIR"
	CodeNotFile       = "E-NOT-FILE" // a device, socket or FIFO
	CodePermission    = "E-PERMISSION"
)

// All returns every tool of this package, in the order a model should see
// them.
func All() []tool.Tool {
	return []tool.Tool{ReadFile(), WriteFile(), ListDir()}
}
