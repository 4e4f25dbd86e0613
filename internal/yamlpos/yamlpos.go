// Package yamlpos is the part of strict YAML reading that contracts and
// blueprints share: positions of nodes, one-line positioned errors, and
// refusing the YAML features (anchors, aliases, tags, merge keys) that
// make a file say something other than what it shows.
package yamlpos

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Pos is a 1-based line and column.
type Pos struct{ Line, Col int }

// Error is a problem found in YAML text, before a file name is attached.
type Error struct {
	At  Pos
	Msg string
	Err error
}

// At builds an *Error at p.
func At(p Pos, format string, args ...any) *Error {
	return &Error{At: p, Msg: fmt.Sprintf(format, args...)}
}

// NodePos is where a node starts, as people see it.
func NodePos(n ast.Node) Pos {
	switch m := n.(type) {
	case *ast.MappingNode:
		// A mapping's own token is its first ":"; people think of a
		// mapping as starting at its first key.
		if len(m.Values) > 0 {
			return NodePos(m.Values[0])
		}
	case *ast.MappingValueNode:
		if m.Key != nil {
			return NodePos(m.Key)
		}
	}
	if n == nil {
		return Pos{1, 1}
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil || tk.Position.Line < 1 {
		return Pos{1, 1}
	}
	return Pos{tk.Position.Line, max(tk.Position.Column, 1)}
}

// FromYAML turns a go-yaml error into a positioned one-line *Error.
func FromYAML(err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		at := Pos{1, 1}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line > 0 {
			at = Pos{tk.Position.Line, max(tk.Position.Column, 1)}
		}
		return &Error{At: at, Msg: OneLine(ye.GetMessage()), Err: err}
	}
	return &Error{At: Pos{1, 1}, Msg: OneLine(err.Error()), Err: err}
}

// OneLine keeps the first line of a message and makes control characters
// visible: go-yaml quotes the offending character raw, and a raw tab or CR
// in a message is invisible in a terminal.
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.NewReplacer("\t", `\t`, "\r", `\r`).Replace(s)
}

// tooDeep estimates from the raw text whether YAML nests deeper than limit
// and returns the line where it does. It over-approximates (brackets
// inside quoted text count too), which only matters for absurd files.
func TooDeep(data []byte, limit int) (int, bool) {
	flow, line, lead, atStart := 0, 1, 0, true
	for _, c := range data {
		switch {
		case c == '\n':
			line, lead, atStart = line+1, 0, true
			continue
		case c == '[' || c == '{':
			flow++
		case (c == ']' || c == '}') && flow > 0:
			flow--
		}
		if atStart {
			// Block nesting shows as indentation and compact "- - x"
			// entries; two columns per level is the tightest YAML allows.
			if c == ' ' || c == '-' || c == '?' {
				lead++
			} else {
				atStart = false
			}
		}
		if flow > limit || lead > 2*limit {
			return line, true
		}
	}
	return 0, false
}

// Entries returns the key-value pairs of a mapping node.
func Entries(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}, true
	}
	return nil, false
}

// Unsupported refuses anchors, aliases and tags; in says where, for the
// message (" in a contract", or "").
func Unsupported(n ast.Node, in string) *Error {
	switch n.(type) {
	case *ast.AnchorNode, *ast.AliasNode:
		return At(NodePos(n), "anchors (&) and aliases (*) are not supported%s; write the value out", in)
	case *ast.TagNode:
		return At(NodePos(n), "tags (!) are not supported%s; write the plain value", in)
	}
	return nil
}

// KeyName is a mapping entry's key as a plain word; merge keys are refused.
// in says where, and example names keys of the format, for the messages.
func KeyName(kv *ast.MappingValueNode, in, example string) (string, *Error) {
	if kv.Key == nil {
		return "", At(NodePos(kv), "a key is missing")
	}
	if kv.Key.IsMergeKey() {
		return "", At(NodePos(kv), "merge keys (<<) are not supported%s; write the keys out", in)
	}
	if s, ok := kv.Key.(*ast.StringNode); ok {
		return s.Value, nil
	}
	if s, ok := kv.Key.(ast.ScalarNode); ok {
		if tk := s.GetToken(); tk != nil {
			return tk.Value, nil
		}
	}
	return "", At(NodePos(kv), "keys must be plain words such as %s", example)
}
