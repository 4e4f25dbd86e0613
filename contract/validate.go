package contract

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// AllowedInterpreters are the programs a script check may name. A script is
// always started as `interpreter script args...`, never through a shell, so
// a contract cannot smuggle a command line into a check; which program
// starts is always one of these.
var AllowedInterpreters = []string{"python3", "bash", "sh", "node", "perl"}

// MaxTimeoutSec is the largest timeout_sec a script check may ask for.
const MaxTimeoutSec = 3600

// ValidationError says what is wrong with a contract or one of its checks.
// Parse uses Check and Field to point at the offending line.
type ValidationError struct {
	// Check is the 0-based index of the check at fault, or -1 when there
	// is none: the contract itself is at fault (intent, checks, id), or
	// Check.Validate judged a check on its own.
	Check int
	// Kind is the kind of that check, when known.
	Kind Kind
	// Field is the YAML key at fault ("path", "min", "intent", ...), or ""
	// when the check as a whole is at fault.
	Field string
	// Reason is the plain explanation.
	Reason string
}

func (e *ValidationError) Error() string {
	known := e.Kind != "" && slices.Contains(Kinds, e.Kind)
	switch {
	case e.Check < 0 && known:
		return fmt.Sprintf("%s: %s", e.Kind, e.Reason)
	case e.Check < 0:
		return e.Reason
	case known:
		return fmt.Sprintf("check %d (%s): %s", e.Check+1, e.Kind, e.Reason)
	}
	return fmt.Sprintf("check %d: %s", e.Check+1, e.Reason)
}

// The YAML keys of a check. "kind" and "note" belong to every kind.
const (
	keyKind        = "kind"
	keyPath        = "path"
	keyMin         = "min"
	keyField       = "field"
	keyGlob        = "glob"
	keyText        = "text"
	keyInterpreter = "interpreter"
	keyArgs        = "args"
	keyTimeout     = "timeout_sec"
	keyNote        = "note"
)

// checkKeys is every key a check may carry, in the order Marshal writes
// them (the declaration order of Check).
var checkKeys = []string{keyKind, keyPath, keyMin, keyField, keyGlob, keyText, keyInterpreter, keyArgs, keyTimeout, keyNote}

// kindKeys lists, per kind, the keys that kind uses besides kind and note.
// Any other key set on a check is an error, so a misplaced or misspelt
// field surfaces instead of being silently ignored.
var kindKeys = map[Kind][]string{
	FileExists:       {keyPath},
	FileMinLines:     {keyPath, keyMin},
	FileMinBytes:     {keyPath, keyMin},
	YAMLFieldPresent: {keyPath, keyField},
	DirMinFiles:      {keyPath, keyMin, keyGlob},
	Script:           {keyPath, keyInterpreter, keyArgs, keyTimeout},
	Contains:         {keyPath, keyText},
	Matches:          {keyPath, keyText},
	Rubric:           {keyText},
}

// KeysFor returns the YAML keys a check of kind k may carry (kind and note
// included), or nil for an unknown kind.
func KeysFor(k Kind) []string {
	ks, ok := kindKeys[k]
	if !ok {
		return nil
	}
	return append(append([]string{keyKind}, ks...), keyNote)
}

// set reports whether the field under key holds a non-zero value: the only
// way a decoded Check can say a field was given.
func (ch Check) set(key string) bool {
	switch key {
	case keyKind:
		return ch.Kind != ""
	case keyPath:
		return ch.Path != ""
	case keyMin:
		return ch.Min != 0
	case keyField:
		return ch.Field != ""
	case keyGlob:
		return ch.Glob != ""
	case keyText:
		return ch.Text != ""
	case keyInterpreter:
		return ch.Interpreter != ""
	case keyArgs:
		return len(ch.Args) > 0
	case keyTimeout:
		return ch.TimeoutSec != 0
	case keyNote:
		return ch.Note != ""
	}
	return false
}

// ValidatePath checks a path that names a file inside the folder a contract
// is evaluated in. It must be relative, slash-separated and unable to climb
// out of the folder by its spelling alone (symbolic links are the evaluator's
// business). "." is refused: it names the folder, not a file.
func ValidatePath(p string) error {
	if p == "." {
		return fmt.Errorf(`path "." names the folder itself, not a file`)
	}
	return validatePath(p)
}

// ValidateDirPath is ValidatePath for a path that names a folder (the path
// of dir_min_files), where "." means the evaluated folder itself.
func ValidateDirPath(p string) error {
	if p == "." {
		return nil
	}
	return validatePath(p)
}

func validatePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("path is empty")
	case !utf8.ValidString(p):
		return fmt.Errorf("path %q is not valid UTF-8", p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("path %q contains a NUL byte", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute; paths are relative to the folder the contract is checked in", p)
	case strings.ContainsRune(p, '\\'):
		return fmt.Errorf(`path %q contains a backslash; separate folders with "/"`, p)
	case strings.ContainsRune(p, ':'):
		return fmt.Errorf(`path %q contains ":"; drive letters and URLs are not paths inside the folder`, p)
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." {
			return fmt.Errorf(`path %q contains "..": a check may only look inside its folder`, p)
		}
	}
	return nil
}

// Validate reports the first problem with ch, or nil. Its error is a
// *ValidationError with Check -1, since a check alone has no index;
// Contract.Validate reports the index.
func (ch Check) Validate() error {
	if e := ch.validate(ch.set); e != nil {
		e.Check = -1
		return e
	}
	return nil
}

// validate checks ch given which keys were given: Validate infers that
// from non-zero fields, Parse knows it from the YAML (so `min: 0` on a
// file_exists check is caught too).
func (ch Check) validate(given func(key string) bool) *ValidationError {
	fail := func(field, format string, args ...any) *ValidationError {
		return &ValidationError{Kind: ch.Kind, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if ch.Kind == "" {
		return fail(keyKind, "kind is missing; use one of %s", kindList())
	}
	keys, ok := kindKeys[ch.Kind]
	if !ok {
		return fail(keyKind, "unknown kind %q; use one of %s", ch.Kind, kindList())
	}
	for _, k := range checkKeys {
		if k == keyKind || k == keyNote || slices.Contains(keys, k) || !given(k) {
			continue
		}
		return fail(k, "%s does not apply to %s (it takes %s)", k, ch.Kind, strings.Join(keys, ", "))
	}
	for _, s := range []struct{ key, v string }{
		{keyPath, ch.Path}, {keyField, ch.Field}, {keyGlob, ch.Glob}, {keyText, ch.Text},
		{keyInterpreter, ch.Interpreter}, {keyNote, ch.Note},
	} {
		// encoding/json turns invalid UTF-8 into U+FFFD, so two different
		// invalid strings would share an id; refusing them keeps the id a
		// faithful address of the content.
		if !utf8.ValidString(s.v) {
			return fail(s.key, "%s is not valid UTF-8 text", s.key)
		}
	}
	for i, a := range ch.Args {
		if !utf8.ValidString(a) {
			return fail(keyArgs, "argument %d is not valid UTF-8 text", i+1)
		}
		if strings.ContainsRune(a, 0) {
			return fail(keyArgs, "argument %d contains a NUL byte, which no program can receive", i+1)
		}
	}

	if ch.Kind != Rubric {
		validate := ValidatePath
		if ch.Kind == DirMinFiles {
			validate = ValidateDirPath
		}
		if ch.Path == "" {
			what := "the file to check"
			switch ch.Kind {
			case DirMinFiles:
				what = `the folder to count files in ("." for the whole folder)`
			case Script:
				what = "the script file to run"
			}
			return fail(keyPath, "path is missing: it names %s", what)
		}
		if err := validate(ch.Path); err != nil {
			return fail(keyPath, "%v", err)
		}
	}
	if slices.Contains(keys, keyMin) && ch.Min < 1 {
		return fail(keyMin, "min must be at least 1, got %d", ch.Min)
	}

	switch ch.Kind {
	case YAMLFieldPresent:
		if ch.Field == "" {
			return fail(keyField, "field is missing: it is the dotted path of the YAML key, such as meta.title")
		}
		for seg := range strings.SplitSeq(ch.Field, ".") {
			if seg == "" {
				return fail(keyField, "field %q has an empty segment; write keys separated by single dots, such as meta.title", ch.Field)
			}
		}
	case DirMinFiles:
		if ch.Glob != "" {
			if strings.Contains(ch.Glob, "/") {
				return fail(keyGlob, "glob %q contains \"/\"; it matches file names directly inside the folder, so put subfolders in path", ch.Glob)
			}
			if strings.Contains(ch.Glob, "..") {
				return fail(keyGlob, "glob %q contains \"..\"", ch.Glob)
			}
			if _, err := filepath.Match(ch.Glob, ""); err != nil {
				return fail(keyGlob, "glob %q is not a valid pattern (use *, ? and [abc])", ch.Glob)
			}
		}
	case Script:
		if ch.Interpreter == "" {
			return fail(keyInterpreter, "interpreter is missing; use one of %s", strings.Join(AllowedInterpreters, ", "))
		}
		if !slices.Contains(AllowedInterpreters, ch.Interpreter) {
			return fail(keyInterpreter, "interpreter %q is not allowed; use one of %s", ch.Interpreter, strings.Join(AllowedInterpreters, ", "))
		}
		if ch.TimeoutSec < 0 || ch.TimeoutSec > MaxTimeoutSec {
			return fail(keyTimeout, "timeout_sec must be between 0 and %d seconds (0 means the default), got %d", MaxTimeoutSec, ch.TimeoutSec)
		}
	case Contains:
		if ch.Text == "" {
			return fail(keyText, "text is missing: it is the text the file must contain")
		}
	case Matches:
		if ch.Text == "" {
			return fail(keyText, "text is missing: it is the regular expression the file must match")
		}
		if _, err := regexp.Compile(ch.Text); err != nil {
			return fail(keyText, "text is not a valid regular expression: %v", regexpReason(err))
		}
	case Rubric:
		if strings.TrimSpace(ch.Text) == "" {
			return fail(keyText, "text is missing: it is the statement the reviewer grades")
		}
	}
	return nil
}

// regexpReason drops the "error parsing regexp: " prefix, which repeats what
// the surrounding message already says.
func regexpReason(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

func kindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Validate reports the first problem with c, or nil: an empty intent, no
// checks, an invalid check (as a *ValidationError naming it), or an id that
// is not the content address of the rest.
func (c Contract) Validate() error {
	if e := c.validate(func(i int) func(string) bool { return c.Checks[i].set }); e != nil {
		return e
	}
	return nil
}

func (c Contract) validate(given func(i int) func(string) bool) *ValidationError {
	if strings.TrimSpace(c.Intent) == "" {
		return &ValidationError{Check: -1, Field: "intent", Reason: "intent is empty: say in a sentence what the user wants"}
	}
	if !utf8.ValidString(c.Intent) {
		return &ValidationError{Check: -1, Field: "intent", Reason: "intent is not valid UTF-8 text"}
	}
	if len(c.Checks) == 0 {
		return &ValidationError{Check: -1, Field: "checks", Reason: "a contract needs at least one check"}
	}
	for i, ch := range c.Checks {
		if e := ch.validate(given(i)); e != nil {
			e.Check = i
			return e
		}
	}
	if c.ID != "" {
		if want := ComputeID(c.Intent, c.Checks); c.ID != want {
			return &ValidationError{Check: -1, Field: "id", Reason: idMismatch(c.ID, want)}
		}
	}
	return nil
}

func idMismatch(got, want string) string {
	return fmt.Sprintf("the id %s does not match the content (which is %s): the contract was changed after it was made. "+
		"Contracts are immutable; a changed requirement is a new contract, so drop the id to make one", got, want)
}
