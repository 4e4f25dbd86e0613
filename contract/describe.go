package contract

import (
	"fmt"
	"strings"
)

// Describe says what a check verifies, in a phrase a person (or a model)
// reads without knowing the check kinds: "the file brief.md has at least
// 20 lines".
func (ch Check) Describe() string {
	switch ch.Kind {
	case FileExists:
		return fmt.Sprintf("the file %s exists", ch.Path)
	case FileMinLines:
		return fmt.Sprintf("the file %s has at least %d lines", ch.Path, ch.Min)
	case FileMinBytes:
		return fmt.Sprintf("the file %s holds at least %d bytes", ch.Path, ch.Min)
	case YAMLFieldPresent:
		return fmt.Sprintf("the file %s has the entry %q", ch.Path, ch.Field)
	case DirMinFiles:
		where := "the folder " + ch.Path
		if ch.Path == "." {
			where = "the folder itself"
		}
		s := fmt.Sprintf("%s holds at least %d files", where, ch.Min)
		if ch.Glob != "" && ch.Glob != "*" {
			s += fmt.Sprintf(" named like %q", ch.Glob)
		}
		return s
	case Script:
		return fmt.Sprintf("the checking program %s (run with %s) succeeds", ch.Path, ch.Interpreter)
	case Contains:
		return fmt.Sprintf("the file %s contains %q", ch.Path, ch.Text)
	case Matches:
		return fmt.Sprintf("the file %s has text matching the pattern %q", ch.Path, ch.Text)
	case Rubric:
		return "a reviewer confirms: " + strings.Join(strings.Fields(ch.Text), " ")
	}
	return string(ch.Kind)
}
