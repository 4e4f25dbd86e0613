package scope

import (
	"path"
	"strings"
	"unicode"
)

// maxNameLen is the longest tool or agent kind name. Model APIs accept tool
// names of at most 64 characters from [a-zA-Z0-9_-]; a name the model
// cannot be shown is no use in a contract.
const maxNameLen = 64

// checkName reports why s is not a tool or agent kind name, or "". A name
// starts with a letter and continues with letters, digits, "_" or "-", so
// that it reads the same in YAML, JSON, a prompt and a model's tool list.
func checkName(s string) string {
	switch {
	case s == "":
		return "a name is empty"
	case len(s) > maxNameLen:
		return "a name is longer than 64 characters"
	case !isLetter(s[0]):
		return "a name must start with a letter (a-z, A-Z)"
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '_' && c != '-' {
			return "a name may hold only letters, digits, \"_\" and \"-\""
		}
	}
	return ""
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// checkCommand reports why s is not an allowed command, or "". An allowed
// command is a bare program name, matched exactly against the program a
// tool would run: never a prefix, never a path, never arguments. A
// prefix-matched allow-list lets "git; rm -rf ." through "git" (one of the
// faults NOTES.md lists); a name of only these characters has no shell
// meaning at all.
func checkCommand(s string) string {
	switch {
	case s == "":
		return "a command is empty"
	case len(s) > maxNameLen:
		return "a command name is longer than 64 characters"
	case s[0] == '-' || s[0] == '.':
		return "a command name may not start with \"-\" or \".\""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && !strings.ContainsRune("._+-", rune(c)) {
			return "a command is a bare program name (letters, digits, \".\", \"_\", \"+\", \"-\"), without a path, arguments or shell syntax"
		}
	}
	return ""
}

// checkPath reports why p is not a scope path, or "". A scope path names a
// folder relative to the run folder, written exactly one way: slash
// separated and already clean, so that two contracts never disagree about
// whether a path is the same. The run folder itself (".") is refused: it
// holds the journal and the manifest, which no agent may touch.
func checkPath(p string) string {
	switch {
	case p == "":
		return "a path is empty"
	case p == ".":
		return "\".\" is the whole run folder, which holds the journal; name a folder inside it, such as \"work\""
	case strings.HasPrefix(p, "/"):
		return "a path must be relative to the run folder, not absolute"
	case strings.Contains(p, `\`):
		return "a path separates folders with \"/\", not \"\\\""
	case strings.Contains(p, ":"):
		// A colon is a drive letter or a URL scheme, never part of a
		// folder a run needs; refusing it avoids both readings.
		return "a path may not contain \":\""
	case strings.ContainsAny(p, "*?["):
		// Scope paths are folders, not patterns; a "*" that looks like a
		// glob but is matched literally would mislead its author.
		return "a path is a folder, not a pattern: \"*\", \"?\" and \"[\" are not allowed"
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return "a path may not contain control characters"
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." {
			return "a path may not contain \"..\""
		}
	}
	if path.Clean(p) != p {
		return "a path must be clean: no \"./\", \"//\" or trailing \"/\" (write " + quote(path.Clean(p)) + ")"
	}
	return ""
}

// inside reports whether the clean path p is root or lies under it,
// comparing whole segments: "work/ab" is not inside "work/a".
func inside(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

// insideAny reports whether p is inside one of roots.
func insideAny(p string, roots ...[]string) bool {
	for _, rs := range roots {
		for _, r := range rs {
			if inside(p, r) {
				return true
			}
		}
	}
	return false
}

// checkLine reports why s is not one line of text for a prompt, or "".
func checkLine(s string) string {
	if strings.TrimSpace(s) == "" {
		return "is empty"
	}
	for _, r := range s {
		if r == '\n' || r == '\r' {
			return "spans several lines; write one step per line"
		}
		if unicode.IsControl(r) && r != '\t' {
			return "contains a control character"
		}
	}
	return ""
}

func quote(s string) string { return "\"" + s + "\"" }
