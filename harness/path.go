package harness

import (
	"path"
	"strings"

	"github.com/fractal-harness/fractal/tool"
)

// Dir is the harness folder inside a run folder.
const Dir = "harness"

// The fixed files of a harness, relative to Dir.
const (
	Methodology  = "methodology.md"
	DoneCriteria = "done_criteria.yaml"
	WorkerPrompt = "worker_prompt_taskpart.md"
	SOPDir       = "sop"
	ScriptsDir   = "tools/scripts"
)

// Inventory is the run-relative file where the input inventory is kept
// (DA-B2); methodology.md must cite it.
const Inventory = "inputs/inventory.md"

// maxName bounds the name part of an SOP or a script.
const maxName = 64

// Allowed reports whether rel, relative to the harness folder, is a path
// Meta may write (DA-B3): methodology.md, done_criteria.yaml,
// worker_prompt_taskpart.md, sop/<name>.md and tools/scripts/<name>.py or
// .sh, where <name> is 1–64 lowercase letters, digits, '-' and '_',
// starting with a letter or digit. Anything else is refused with a
// *tool.Error of code E-HARNESS-PATH.
//
// The judgement is on the exact string, with no cleaning: "./sop/a.md" or
// "sop//a.md" are refused rather than interpreted, so the path recorded in
// the audit is the path written. The narrow name alphabet keeps names
// portable, unambiguous on case-insensitive file systems, and never read
// as an option ("-x") by the interpreter a script is handed to.
func Allowed(rel string) error {
	switch rel {
	case Methodology, DoneCriteria, WorkerPrompt:
		return nil
	}
	if name, ok := strings.CutPrefix(rel, SOPDir+"/"); ok {
		if base, ok := strings.CutSuffix(name, ".md"); ok && validName(base) {
			return nil
		}
		return tool.Errorf(CodePath, "%q is not an allowed SOP name: write sop/<name>.md with <name> made of lowercase letters, digits, '-' and '_'", rel)
	}
	if name, ok := strings.CutPrefix(rel, ScriptsDir+"/"); ok {
		for _, ext := range []string{".py", ".sh"} {
			if base, ok := strings.CutSuffix(name, ext); ok && validName(base) {
				return nil
			}
		}
		return tool.Errorf(CodePath, "%q is not an allowed script name: write tools/scripts/<name>.py or .sh with <name> made of lowercase letters, digits, '-' and '_'", rel)
	}
	hint := ""
	if strings.HasPrefix(rel, Dir+"/") {
		hint = " (paths are relative to the harness folder: drop the leading \"harness/\")"
	}
	return tool.Errorf(CodePath, "%q may not be written%s; the harness files are %s, %s, %s, sop/<name>.md and tools/scripts/<name>.py or .sh",
		rel, hint, Methodology, DoneCriteria, WorkerPrompt)
}

func validName(s string) bool {
	if s == "" || len(s) > maxName {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '-' || r == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}

// isSOP reports whether rel is an SOP path (already allowed).
func isSOP(rel string) bool { return strings.HasPrefix(rel, SOPDir+"/") }

// Guard refuses any write under the harness folder by an ordinary tool
// (DA-A5): the engine calls it from its pre-tool hook with every
// run-relative path a tool call would write, and only the Writer's
// harness_write tool is exempt. The refusal is a *tool.Error of code
// E-HARNESS-DIRECT, so the model learns to use harness_write (Meta) or to
// ask Meta (everyone else).
//
// It judges the cleaned path, case-insensitively and with backslashes read
// as separators, so neither "work/../harness/x", "Harness/x" (the same
// folder on a case-insensitive file system) nor "harness\x" slips past.
// The harness folder itself is refused too: replacing or removing it is a
// write under it.
func Guard(rel string) error {
	p := strings.ReplaceAll(rel, `\`, "/")
	p = strings.TrimLeft(path.Clean("/"+p), "/")
	first, _, _ := strings.Cut(p, "/")
	if strings.EqualFold(first, Dir) {
		return tool.Errorf(CodeDirect,
			"%q is in the task harness, which is changed only through the audited harness_write tool (Meta's); ask Meta to change it", rel)
	}
	return nil
}
