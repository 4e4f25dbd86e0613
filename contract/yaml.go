package contract

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"

	"github.com/fractal-harness/fractal/internal/yamlpos"
	"github.com/goccy/go-yaml/parser"
)

// The strict-YAML helpers shared with the scope package live in
// internal/yamlpos.
type (
	pos      = yamlpos.Pos
	posError = yamlpos.Error
)

var (
	errAt     = yamlpos.At
	nodePos   = yamlpos.NodePos
	yamlError = yamlpos.FromYAML
	tooDeep   = yamlpos.TooDeep
	entries   = yamlpos.Entries
)

func unsupported(n ast.Node) *posError { return yamlpos.Unsupported(n, " in a contract") }

func keyName(kv *ast.MappingValueNode) (string, *posError) {
	return yamlpos.KeyName(kv, " in a contract", "intent or path")
}

// MaxContractBytes bounds what Parse reads: a contract is a page of text,
// and the bound keeps a hostile file from costing the parser much.
const MaxContractBytes = 1 << 20

// maxYAMLDepth bounds how deeply a YAML text may nest before it is parsed.
// The parser recurses once per level and slows down quadratically with
// depth, so a file of a few megabytes of "[" would otherwise stall the
// harness or exhaust the stack, which no recover can catch.
const maxYAMLDepth = 1000

// maxMappingKeys bounds the keys of one block mapping. The parser handles
// each further key of a block mapping by recursing and copying all the
// keys after it, so time grows with the square of the count (20000 keys
// take about a second) and stack with the count itself; a data file with a
// few million keys would otherwise stall for hours or crash the process.
// Sequences and flow mappings do not have this problem.
const maxMappingKeys = 20000

// ParseError is an error in a contract file, positioned for people and
// editors: "name:LINE:COL: message".
type ParseError struct {
	Name string
	Line int
	Col  int
	Msg  string
	// Err is the underlying error when there is one: a *ValidationError
	// for a contract that reads as YAML but is not a valid contract.
	Err error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Name, e.Line, e.Col, e.Msg)
}

func (e *ParseError) Unwrap() error { return e.Err }

// offsetPos turns a byte offset into a line and column (columns count
// runes, as editors do).
func offsetPos(data []byte, off int) pos {
	line, col := 1, 1
	for _, r := range string(data[:off]) {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return pos{Line: line, Col: col}
}

// parseDocuments parses YAML text into the bodies of its non-empty
// documents, after the checks that keep the parser out of trouble.
func parseDocuments(data []byte) (bodies []ast.Node, perr *posError) {
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, errAt(offsetPos(data, off), "not valid UTF-8 text")
	}
	if line, ok := tooDeep(data, maxYAMLDepth); ok {
		return nil, errAt(pos{Line: line, Col: 1}, "nested more than %d levels deep", maxYAMLDepth)
	}
	if line, ok := tooWide(data, maxMappingKeys); ok {
		return nil, errAt(pos{Line: line, Col: 1}, "a mapping has more than %d keys, too many to read", maxMappingKeys)
	}
	defer func() {
		// The parser is third-party code fed with untrusted text; a bug in
		// it must become an error, not take the harness down.
		if r := recover(); r != nil {
			bodies, perr = nil, errAt(pos{Line: 1, Col: 1}, "the YAML parser failed: %v", r)
		}
	}()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(err)
	}
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			bodies = append(bodies, d.Body)
		}
	}
	return bodies, nil
}

// tooWide estimates from the raw text whether a block mapping holds more
// than limit keys and returns the line where it does. It counts lines that
// look like "key: value" per indentation under the same parent, so it
// over-approximates (a literal block of such lines counts too), which only
// matters for absurd files.
func tooWide(data []byte, limit int) (int, bool) {
	counts := map[int]int{} // indentation -> keys seen there under the current parent
	line := 0
	for raw := range bytes.SplitSeq(data, []byte{'\n'}) {
		line++
		rest := bytes.TrimRight(raw, " \r")
		indent := 0
		for indent < len(rest) && rest[indent] == ' ' {
			indent++
		}
		rest = rest[indent:]
		if len(rest) == 0 || rest[0] == '#' {
			continue
		}
		// Anything deeper than this line belonged to a parent that ended.
		for d := range counts {
			if d > indent {
				delete(counts, d)
			}
		}
		// "- key: v" starts a new item, whose keys form a new mapping
		// indented past the dash.
		for len(rest) >= 2 && rest[0] == '-' && rest[1] == ' ' {
			indent += 2
			rest = rest[2:]
			delete(counts, indent)
		}
		if bytes.Contains(rest, []byte(": ")) || bytes.HasSuffix(rest, []byte(":")) {
			counts[indent]++
			if counts[indent] > limit {
				return line, true
			}
		}
	}
	return 0, false
}

// Parse reads a contract from YAML. name labels errors, which read
// "name:LINE:COL: message" and are *ParseError. Decoding is strict: an
// unknown key, a value of the wrong type, a key that does not apply to its
// check's kind, anchors, aliases and tags are all errors, so that a typo
// cannot silently weaken a contract. An id in the file must be the content
// address of the rest (the file was not edited after the contract was
// made); without one, the id is computed. The result is valid.
func Parse(data []byte, name string) (Contract, error) {
	c, perr := parse(data)
	if perr != nil {
		return Contract{}, &ParseError{Name: name, Line: perr.At.Line, Col: perr.At.Col, Msg: perr.Msg, Err: perr.Err}
	}
	return c, nil
}

// Contract-level keys.
const (
	keyID     = "id"
	keyIntent = "intent"
	keyChecks = "checks"
)

// where remembers the position of every value Parse read, so that a
// validation error about a field can point at the line that holds it.
type where struct {
	root   pos
	top    map[string]pos   // contract key -> value position
	checks []pos            // start of each check
	fields []map[string]pos // per check: key -> value position
}

func (w *where) of(e *ValidationError) pos {
	if e.Check < 0 {
		if at, ok := w.top[e.Field]; ok {
			return at
		}
		return w.root
	}
	if at, ok := w.fields[e.Check][e.Field]; ok {
		return at
	}
	return w.checks[e.Check]
}

func parse(data []byte) (Contract, *posError) {
	if len(data) > MaxContractBytes {
		return Contract{}, errAt(pos{Line: 1, Col: 1}, "the file is larger than %d bytes; a contract is a page of text", MaxContractBytes)
	}
	bodies, perr := parseDocuments(data)
	if perr != nil {
		return Contract{}, perr
	}
	switch len(bodies) {
	case 0:
		return Contract{}, errAt(pos{Line: 1, Col: 1}, "the file is empty; a contract needs intent and checks")
	case 1:
	default:
		return Contract{}, errAt(nodePos(bodies[1]), "the file holds more than one YAML document; write one contract per file")
	}
	root := bodies[0]
	w := &where{root: nodePos(root), top: map[string]pos{}}
	if perr := unsupported(root); perr != nil {
		return Contract{}, perr
	}
	kvs, ok := entries(root)
	if !ok {
		return Contract{}, errAt(nodePos(root), "a contract is a mapping with the keys id, intent and checks, not %s", describe(root))
	}

	var c Contract
	seen := map[string]bool{}
	for _, kv := range kvs {
		key, perr := keyName(kv)
		if perr != nil {
			return Contract{}, perr
		}
		if seen[key] {
			return Contract{}, errAt(nodePos(kv), "%s is given twice", key)
		}
		seen[key] = true
		w.top[key] = nodePos(kv.Value)
		switch key {
		case keyID:
			if c.ID, perr = stringValue(key, kv.Value); perr != nil {
				return Contract{}, perr
			}
		case keyIntent:
			if c.Intent, perr = stringValue(key, kv.Value); perr != nil {
				return Contract{}, perr
			}
		case keyChecks:
			if c.Checks, perr = parseChecks(kv.Value, w); perr != nil {
				return Contract{}, perr
			}
		default:
			return Contract{}, errAt(nodePos(kv), "unknown key %q; a contract has the keys id, intent and checks", key)
		}
	}
	if !seen[keyIntent] {
		return Contract{}, errAt(w.root, "intent is missing: say in a sentence what the user wants")
	}
	if !seen[keyChecks] {
		return Contract{}, errAt(w.root, "checks is missing: a contract needs at least one check")
	}
	given := func(i int) func(string) bool {
		return func(k string) bool { _, ok := w.fields[i][k]; return ok }
	}
	if e := c.validate(given); e != nil {
		return Contract{}, &posError{At: w.of(e), Msg: e.Error(), Err: e}
	}
	c.ID = ComputeID(c.Intent, c.Checks)
	return c, nil
}

func parseChecks(n ast.Node, w *where) ([]Check, *posError) {
	if perr := unsupported(n); perr != nil {
		return nil, perr
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return nil, errAt(nodePos(n), "checks must be a list of checks, not %s", describe(n))
	}
	checks := make([]Check, 0, len(seq.Values))
	for i, item := range seq.Values {
		ch, perr := parseCheck(i, item, w)
		if perr != nil {
			return nil, perr
		}
		checks = append(checks, ch)
	}
	return checks, nil
}

func parseCheck(i int, n ast.Node, w *where) (Check, *posError) {
	w.checks = append(w.checks, nodePos(n))
	fields := map[string]pos{}
	w.fields = append(w.fields, fields)
	if perr := unsupported(n); perr != nil {
		return Check{}, perr
	}
	kvs, ok := entries(n)
	if !ok {
		return Check{}, errAt(nodePos(n), "check %d must be a mapping with a kind and its fields, not %s", i+1, describe(n))
	}
	// Find the kind first so that a stray key can be reported with the
	// keys that kind does take.
	var kind Kind
	for _, kv := range kvs {
		if k, perr := keyName(kv); perr == nil && k == keyKind {
			if s, perr := stringValue(k, kv.Value); perr == nil {
				kind = Kind(s)
			}
		}
	}
	var ch Check
	for _, kv := range kvs {
		key, perr := keyName(kv)
		if perr != nil {
			return Check{}, perr
		}
		if _, dup := fields[key]; dup {
			return Check{}, errAt(nodePos(kv), "check %d: %s is given twice", i+1, key)
		}
		fields[key] = nodePos(kv.Value)
		v := kv.Value
		switch key {
		case keyKind:
			var s string
			s, perr = stringValue(key, v)
			ch.Kind = Kind(s)
		case keyPath:
			ch.Path, perr = stringValue(key, v)
		case keyMin:
			ch.Min, perr = intValue(key, v)
		case keyField:
			ch.Field, perr = stringValue(key, v)
		case keyGlob:
			ch.Glob, perr = stringValue(key, v)
		case keyText:
			ch.Text, perr = stringValue(key, v)
		case keyInterpreter:
			ch.Interpreter, perr = stringValue(key, v)
		case keyArgs:
			ch.Args, perr = listValue(key, v)
		case keyTimeout:
			ch.TimeoutSec, perr = intValue(key, v)
		case keyNote:
			ch.Note, perr = stringValue(key, v)
		default:
			if keys := KeysFor(kind); keys != nil {
				return Check{}, errAt(nodePos(kv), "check %d (%s): unknown key %q; a %s check takes %s", i+1, kind, key, kind, strings.Join(keys, ", "))
			}
			return Check{}, errAt(nodePos(kv), "check %d: unknown key %q; check keys are %s", i+1, key, strings.Join(checkKeys, ", "))
		}
		if perr != nil {
			perr.Msg = fmt.Sprintf("check %d: %s", i+1, perr.Msg)
			return Check{}, perr
		}
	}
	return ch, nil
}

// describe names the type of a YAML value for an error message.
func describe(n ast.Node) string {
	if n == nil {
		return "empty (null)"
	}
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "empty (null)"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	}
	return "text"
}

// stringValue reads a text field. Plain numbers and booleans are taken as
// the text they are written as (`text: 2024` means "2024"), because
// insisting on quotes there would only trip people up; null, lists and
// mappings are errors.
func stringValue(key string, n ast.Node) (string, *posError) {
	if perr := unsupported(n); perr != nil {
		return "", perr
	}
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, nil
	case *ast.LiteralNode:
		if v.Value == nil {
			return "", nil
		}
		return v.Value.Value, nil
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return n.GetToken().Value, nil
	case *ast.NullNode:
		return "", errAt(nodePos(n), "%s has no value; give one or remove the key", key)
	}
	return "", errAt(nodePos(n), "%s must be text, not %s", key, describe(n))
}

// intValue reads a whole-number field; "3", 3.5 and true are errors, not
// numbers, so a mistyped bound cannot quietly become another bound.
func intValue(key string, n ast.Node) (int, *posError) {
	if perr := unsupported(n); perr != nil {
		return 0, perr
	}
	switch v := n.(type) {
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			if x >= math.MinInt && x <= math.MaxInt {
				return int(x), nil
			}
		case uint64:
			if x <= math.MaxInt {
				return int(x), nil
			}
		}
		return 0, errAt(nodePos(n), "%s is too large", key)
	case *ast.FloatNode:
		return 0, errAt(nodePos(n), "%s must be a whole number, got %s", key, v.GetToken().Value)
	case *ast.NullNode:
		return 0, errAt(nodePos(n), "%s has no value; give a number or remove the key", key)
	case *ast.StringNode:
		return 0, errAt(nodePos(n), "%s must be a number, not text (%q)", key, v.Value)
	}
	return 0, errAt(nodePos(n), "%s must be a number, not %s", key, describe(n))
}

// listValue reads a list of text values. An empty list reads as nil: the
// id does not distinguish the two, and neither should the decoded value.
func listValue(key string, n ast.Node) ([]string, *posError) {
	if perr := unsupported(n); perr != nil {
		return nil, perr
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return nil, errAt(nodePos(n), "%s must be a list, not %s; write [a, b] or one \"- item\" per line", key, describe(n))
	}
	var out []string
	for i, item := range seq.Values {
		s, perr := stringValue(fmt.Sprintf("%s item %d", key, i+1), item)
		if perr != nil {
			return nil, perr
		}
		out = append(out, s)
	}
	return out, nil
}

// Marshal writes c as readable YAML that Parse reads back to an equal
// contract: id first, then intent, then each check with only the fields it
// sets. An empty id is filled in. Marshal refuses a contract Parse would
// refuse, so anything it writes can be read back.
func Marshal(c Contract) ([]byte, error) {
	if c.ID == "" {
		c.ID = ComputeID(c.Intent, c.Checks)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var b strings.Builder
	writeKey(&b, "", keyID, c.ID)
	writeKey(&b, "", keyIntent, c.Intent)
	b.WriteString(keyChecks + ":\n")
	for _, ch := range c.Checks {
		first := true
		for _, k := range checkKeys {
			if !ch.set(k) {
				continue
			}
			indent := "    "
			if first {
				b.WriteString("  - ")
				indent, first = "", false
			}
			switch k {
			case keyMin:
				fmt.Fprintf(&b, "%s%s: %d\n", indent, k, ch.Min)
			case keyTimeout:
				fmt.Fprintf(&b, "%s%s: %d\n", indent, k, ch.TimeoutSec)
			case keyArgs:
				fmt.Fprintf(&b, "%s%s:\n", indent, k)
				for _, a := range ch.Args {
					b.WriteString("      - ")
					writeScalar(&b, a, "        ")
				}
			default:
				// A check's first key shares the "  - " line but its
				// continuation lines belong at the check's indentation.
				fmt.Fprintf(&b, "%s%s: ", indent, k)
				writeScalar(&b, checkString(ch, k), "      ")
			}
		}
	}
	return []byte(b.String()), nil
}

func checkString(ch Check, key string) string {
	switch key {
	case keyKind:
		return string(ch.Kind)
	case keyPath:
		return ch.Path
	case keyField:
		return ch.Field
	case keyGlob:
		return ch.Glob
	case keyText:
		return ch.Text
	case keyInterpreter:
		return ch.Interpreter
	case keyNote:
		return ch.Note
	}
	return ""
}

func writeKey(b *strings.Builder, indent, key, value string) {
	b.WriteString(indent + key + ": ")
	writeScalar(b, value, indent+"  ")
}

// writeScalar writes s as a YAML scalar and a newline: plain when that
// cannot be misread, a literal block for readable multi-line text, and a
// double-quoted string with escapes for everything else. blockIndent is the
// indentation of a literal block's lines.
func writeScalar(b *strings.Builder, s, blockIndent string) {
	switch {
	case plainSafe(s):
		b.WriteString(s)
		b.WriteByte('\n')
	case literalSafe(s):
		body, chomp := s, "-"
		if strings.HasSuffix(s, "\n") {
			body, chomp = s[:len(s)-1], ""
		}
		b.WriteString("|" + chomp + "\n")
		for line := range strings.SplitSeq(body, "\n") {
			if line != "" {
				b.WriteString(blockIndent + line)
			}
			b.WriteByte('\n')
		}
	default:
		b.WriteString(quote(s))
		b.WriteByte('\n')
	}
}

// yamlWords are plain scalars YAML 1.1 or 1.2 readers take for something
// other than text.
var yamlWords = []string{"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"}

// plainSafe reports whether s can be written unquoted and still read back
// as the same text by any YAML reader. It is deliberately narrow: letters,
// digits and a few punctuation marks, starting with a letter, so that
// numbers, dates, booleans, comments and indicators never arise.
func plainSafe(s string) bool {
	if s == "" || strings.HasSuffix(s, " ") || strings.Contains(s, "  ") {
		return false
	}
	if slices.Contains(yamlWords, strings.ToLower(s)) {
		return false
	}
	for i, r := range s {
		letter := r == '_' || (r < utf8.RuneSelf && ('a' <= r|0x20 && r|0x20 <= 'z')) || (r >= utf8.RuneSelf && unicode.IsLetter(r))
		if i == 0 {
			if !letter {
				return false
			}
			continue
		}
		if letter || ('0' <= r && r <= '9') || strings.ContainsRune(" ._/-()", r) {
			continue
		}
		return false
	}
	return true
}

// literalSafe reports whether s reads better, and round-trips exactly, as
// a literal block: printable text with a line break whose first line does not
// start with a space (which would change the block's indentation), with no
// lines of only blanks and at most one trailing newline.
func literalSafe(s string) bool {
	if !strings.Contains(s, "\n") || strings.HasSuffix(s, "\n\n") {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[0] == '\n' {
		return false
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(s, "\n"), "\n") {
		if line != "" && strings.TrimLeft(line, " \t") == "" {
			return false
		}
		if strings.HasSuffix(line, " ") || strings.HasSuffix(line, "\t") {
			return false
		}
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && !isPrint(r) {
			return false
		}
	}
	return true
}

// isPrint is unicode.IsPrint: graphic characters and the ASCII space. Any
// other space, control or format character is escaped by quote.
func isPrint(r rune) bool { return unicode.IsPrint(r) }

// quote writes s as a YAML double-quoted scalar, escaping exactly what a
// reader could lose or misread: quotes, backslashes, line breaks and
// characters that are not printable.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			switch {
			case isPrint(r):
				b.WriteRune(r)
			case r <= 0xFFFF:
				fmt.Fprintf(&b, `\u%04X`, r)
			default:
				fmt.Fprintf(&b, `\U%08X`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
