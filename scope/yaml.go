package scope

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"

	"github.com/fractal-harness/fractal/internal/yamlpos"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// The strict-YAML helpers shared with the contract package live in
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

func unsupported(n ast.Node) *posError { return yamlpos.Unsupported(n, "") }

func keyName(kv *ast.MappingValueNode) (string, *posError) {
	return yamlpos.KeyName(kv, "", "id or budget")
}

// The YAML reading here walks go-yaml's syntax tree by hand instead of
// decoding into a struct: that is what keeps every key's line and column,
// tells a quoted "5" from the number 5, and refuses unknown keys, duplicate
// keys, anchors, aliases and tags at the place they occur. It follows the
// approach of package contract's reader.

// MaxBlueprintBytes bounds what ParseBlueprint reads. A blueprint is a
// screenful; the bound also keeps a hostile file from costing the parser
// much, since go-yaml's time grows with the square of a block mapping's
// keys and of the nesting depth.
const MaxBlueprintBytes = 64 << 10

// maxDepth bounds nesting before the text is parsed: a blueprint nests
// four levels at most, and the parser recurses once per level.
const maxDepth = 32

// ParseError is an error in a blueprint file, positioned for people and
// editors: "name:LINE:COL: message" on one line.
type ParseError struct {
	Name string
	Line int
	Col  int
	Msg  string
	// Err is the underlying error when there is one: a *FieldError for a
	// malformed value, a *WidenError from CheckBlueprint.
	Err error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Name, e.Line, e.Col, e.Msg)
}

func (e *ParseError) Unwrap() error { return e.Err }

// parseYAML checks the raw text and parses it into the body of its one
// document.
func parseYAML(data []byte, what string) (body ast.Node, perr *posError) {
	if len(data) > MaxBlueprintBytes {
		return nil, errAt(pos{Line: 1, Col: 1}, "the file is larger than %d bytes; a %s is a screenful of text", MaxBlueprintBytes, what)
	}
	if !utf8.Valid(data) {
		line := 1
		for off := 0; off < len(data); {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			if r == '\n' {
				line++
			}
			off += n
		}
		return nil, errAt(pos{Line: line, Col: 1}, "not valid UTF-8 text")
	}
	if line, deep := tooDeep(data, maxDepth); deep {
		return nil, errAt(pos{Line: line, Col: 1}, "nested more than %d levels deep; a %s nests at most four", maxDepth, what)
	}
	defer func() {
		// The parser is third-party code fed with text from a file; a bug
		// in it must become an error, not take the harness down.
		if r := recover(); r != nil {
			body, perr = nil, errAt(pos{Line: 1, Col: 1}, "the YAML parser failed: %v", r)
		}
	}()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(err)
	}
	var bodies []ast.Node
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			bodies = append(bodies, d.Body)
		}
	}
	switch len(bodies) {
	case 0:
		return nil, errAt(pos{Line: 1, Col: 1}, "the file is empty; a %s needs at least an id", what)
	case 1:
		return bodies[0], nil
	}
	return nil, errAt(nodePos(bodies[1]), "the file holds more than one YAML document; write one %s per file", what)
}

// describe names the type of a YAML value for an error message.
func describe(n ast.Node) string {
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return "empty (null)"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.StringNode:
		return fmt.Sprintf("text (%q)", v.Value)
	}
	return "text"
}

// mapping calls fn for each entry of the mapping n (the value of key),
// refusing anything but a mapping, duplicate keys and keys not in known.
func mapping(key string, n ast.Node, known []string, fn func(k string, kv *ast.MappingValueNode) *posError) *posError {
	if perr := unsupported(n); perr != nil {
		return perr
	}
	kvs, ok := entries(n)
	if !ok {
		if key == "" {
			return errAt(nodePos(n), "a blueprint is a mapping of the keys %s, not %s", strings.Join(known, ", "), describe(n))
		}
		return errAt(nodePos(n), "%s must be a mapping of the keys %s, not %s", key, strings.Join(known, ", "), describe(n))
	}
	var seen []string
	for _, kv := range kvs {
		k, perr := keyName(kv)
		if perr != nil {
			return perr
		}
		full := join(key, k)
		switch {
		case contains(seen, k):
			return errAt(nodePos(kv), "%s is given twice", full)
		case !contains(known, k):
			if key == "" {
				return errAt(nodePos(kv), "unknown key %q; a blueprint has the keys %s", k, strings.Join(known, ", "))
			}
			return errAt(nodePos(kv), "unknown key %q in %s; it takes %s", k, key, strings.Join(known, ", "))
		}
		seen = append(seen, k)
		if perr := unsupported(kv.Value); perr != nil {
			return perr
		}
		if _, null := kv.Value.(*ast.NullNode); null || kv.Value == nil {
			return errAt(nodePos(kv), "%s has no value; give one or remove the key", full)
		}
		if perr := fn(k, kv); perr != nil {
			return perr
		}
	}
	return nil
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// textValue reads text. Numbers and booleans are refused rather than taken
// as the text they are written as: every text field of a blueprint is a
// name, a path or a sentence, none of which is a bare number.
func textValue(key string, n ast.Node) (string, *posError) {
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
	}
	return "", errAt(nodePos(n), "%s must be text, not %s", key, describe(n))
}

// intValue reads a whole number of at least 0. A quoted "5", 1e6, 3.5 and
// true are errors, not numbers, so that a mistyped cap cannot quietly
// become another cap.
func intValue(key string, n ast.Node) (int64, *posError) {
	switch v := n.(type) {
	case *ast.IntegerNode:
		var x int64
		switch y := v.Value.(type) {
		case int64:
			x = y
		case uint64:
			if y > 1<<62 {
				return 0, errAt(nodePos(n), "%s is too large", key)
			}
			x = int64(y)
		default:
			return 0, errAt(nodePos(n), "%s is not a number go-yaml can read", key)
		}
		if x < 0 {
			return 0, errAt(nodePos(n), "%s must be 0 or more, not %d", key, x)
		}
		if x > 1<<62 {
			return 0, errAt(nodePos(n), "%s is too large", key)
		}
		return x, nil
	case *ast.StringNode:
		// go-yaml reads a plain number too large for 64 bits as text.
		if tk := v.GetToken(); tk != nil && tk.Type == token.StringType && isDigits(v.Value) {
			return 0, errAt(nodePos(n), "%s is too large", key)
		}
		return 0, errAt(nodePos(n), "%s must be a whole number, not text (%q)", key, v.Value)
	case *ast.FloatNode:
		return 0, errAt(nodePos(n), "%s must be a whole number, not %s", key, v.GetToken().Value)
	}
	return 0, errAt(nodePos(n), "%s must be a whole number, not %s", key, describe(n))
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func boolValue(key string, n ast.Node) (bool, *posError) {
	if v, ok := n.(*ast.BoolNode); ok {
		return v.Value, nil
	}
	return false, errAt(nodePos(n), "%s must be true or false, not %s", key, describe(n))
}

// listValue reads a list of text items, calling at with each item's
// position so that a later error about one item can point at its line.
func listValue(key string, n ast.Node, at func(item string, p pos)) ([]string, *posError) {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return nil, errAt(nodePos(n), "%s must be a list, not %s; write [a, b] or one \"- item\" per line", key, describe(n))
	}
	var out []string
	for i, item := range seq.Values {
		if perr := unsupported(item); perr != nil {
			return nil, perr
		}
		s, perr := textValue(fmt.Sprintf("%s item %d", key, i+1), item)
		if perr != nil {
			return nil, perr
		}
		at(s, nodePos(item))
		out = append(out, s)
	}
	return out, nil
}
