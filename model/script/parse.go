package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/fractal-harness/fractal/model"
)

// Parse reads a script. name is used in error messages (usually the file
// name). Errors are one line, "name:LINE:COL: path: message" where the
// position is known, else "name: path: message".
func Parse(data []byte, name string) (*Script, error) {
	if name == "" {
		name = "script"
	}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(name, err)
	}
	var docs []*ast.DocumentNode
	for _, d := range file.Docs {
		if d.Body != nil {
			docs = append(docs, d)
		}
	}
	switch {
	case len(docs) == 0:
		return nil, fmt.Errorf("%s: empty script: want at least \"version: %d\" and \"sessions\"", name, Version)
	case len(docs) > 1:
		// A second document would be silently ignored by the decoder; a
		// person who wrote one meant something by it.
		return nil, posError(name, startToken(docs[1].Body), "", "a script is one YAML document; found a second one")
	}
	body := docs[0].Body

	// goccy/go-yaml converts leniently ("1.5" into an int, "12" into a
	// number); the shape check makes wrong types errors, with positions.
	sc := &shapeChecker{name: name, pos: map[string]*token.Token{}}
	if err := sc.check(body, scriptShape, ""); err != nil {
		return nil, err
	}
	var s Script
	if err := yaml.NodeToValue(body, &s, yaml.Strict()); err != nil {
		return nil, yamlError(name, err)
	}
	s.name = name
	if fe := s.validate(); fe != nil {
		return nil, posError(name, sc.find(fe.path), fe.path, fe.msg)
	}
	return &s, nil
}

// Validate checks a script built in Go by the rules Parse applies to a
// file: version 1, at least one session, known roles, at least one turn per
// session, named tool calls, not both args and args_json, arguments that
// encode as JSON, no negative latency, attempt or token count.
func (s *Script) Validate() error {
	if fe := s.validate(); fe != nil {
		return posError(s.labelName(), nil, fe.path, fe.msg)
	}
	return nil
}

func (s *Script) labelName() string {
	if s.name == "" {
		return "script"
	}
	return s.name
}

// fieldError is a validation failure at a path such as
// "sessions[2].turns[0].tool_calls[1].name".
type fieldError struct{ path, msg string }

func fieldErr(path, format string, a ...any) *fieldError {
	return &fieldError{path: path, msg: fmt.Sprintf(format, a...)}
}

func (s *Script) validate() *fieldError {
	if s.Version != Version {
		if s.Version == 0 {
			return fieldErr("version", "missing version: want \"version: %d\"", Version)
		}
		return fieldErr("version", "unsupported version %d: this fractal reads version %d", s.Version, Version)
	}
	if s.Latency < 0 {
		return fieldErr("latency", "negative latency %s", s.Latency)
	}
	if len(s.Sessions) == 0 {
		return fieldErr("sessions", "no sessions: want at least one")
	}
	for i, ss := range s.Sessions {
		sp := fmt.Sprintf("sessions[%d]", i)
		switch {
		case ss.Role == "":
			return fieldErr(sp+".role", "missing role: want one of %s", roleList())
		case !ss.Role.Valid():
			return fieldErr(sp+".role", "unknown role %q: want one of %s", ss.Role, roleList())
		case ss.Attempt < 0:
			return fieldErr(sp+".attempt", "attempt %d: attempts count from 1", ss.Attempt)
		case len(ss.Turns) == 0:
			return fieldErr(sp+".turns", "no turns: a session needs at least one")
		}
		for j, t := range ss.Turns {
			if fe := t.validate(fmt.Sprintf("%s.turns[%d]", sp, j)); fe != nil {
				return fe
			}
		}
	}
	return nil
}

func (t *Turn) validate(tp string) *fieldError {
	if t.Latency < 0 {
		return fieldErr(tp+".latency", "negative latency %s", t.Latency)
	}
	if u := t.Usage; u != nil && (u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheWrite < 0) {
		return fieldErr(tp+".usage", "negative token count")
	}
	for k, c := range t.ToolCalls {
		cp := fmt.Sprintf("%s.tool_calls[%d]", tp, k)
		switch {
		case strings.TrimSpace(c.Name) == "":
			return fieldErr(cp+".name", "missing tool name")
		case c.Args != nil && c.ArgsJSON != "":
			return fieldErr(cp, "both args and args_json: give one")
		}
		if _, err := c.args(); err != nil {
			return fieldErr(cp+".args", "%v", err)
		}
	}
	return nil
}

func roleList() string {
	names := make([]string, len(model.Roles))
	for i, r := range model.Roles {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// posError formats one error line. tok may be nil, path may be empty.
func posError(name string, tok *token.Token, path, msg string) error {
	var b strings.Builder
	b.WriteString(name)
	if tok != nil && tok.Position != nil && tok.Position.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", tok.Position.Line, tok.Position.Column)
	}
	b.WriteString(": ")
	if path != "" {
		b.WriteString(path)
		b.WriteString(": ")
	}
	b.WriteString(oneLine(msg))
	return errors.New(b.String())
}

// yamlError formats an error of the YAML library without its source
// excerpt, which would break the one-line rule.
func yamlError(name string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		return posError(name, ye.GetToken(), "", ye.GetMessage())
	}
	return posError(name, nil, "", err.Error())
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// shape is what the script format expects at one place in the document.
type shape struct {
	kind   kind
	fields map[string]*shape // kindMap: the known keys
	order  []string          // kindMap: the keys in documentation order, for messages
	elem   *shape            // kindSeq
}

type kind int

const (
	kindInt      kind = iota
	kindScalar        // read as a string: a number or bool is its text
	kindDuration      // "200ms" or 0
	kindAny           // tool arguments: any mapping
	kindMap           // known keys only
	kindSeq
)

var (
	intShape      = &shape{kind: kindInt}
	scalarShape   = &shape{kind: kindScalar}
	durationShape = &shape{kind: kindDuration}
)

func mapShape(kv ...any) *shape {
	s := &shape{kind: kindMap, fields: map[string]*shape{}}
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		s.fields[k] = kv[i+1].(*shape)
		s.order = append(s.order, k)
	}
	return s
}

func seqShape(elem *shape) *shape { return &shape{kind: kindSeq, elem: elem} }

// scriptShape mirrors the yaml tags of Script and its parts.
var scriptShape = mapShape(
	"version", intShape,
	"latency", durationShape,
	"sessions", seqShape(mapShape(
		"role", scalarShape,
		"match", scalarShape,
		"attempt", intShape,
		"instance", scalarShape,
		"offers", scalarShape,
		"session", intShape,
		"turns", seqShape(mapShape(
			"text", scalarShape,
			"tool_calls", seqShape(mapShape(
				"name", scalarShape,
				"args", &shape{kind: kindAny},
				"args_json", scalarShape,
			)),
			"usage", mapShape(
				"input", intShape,
				"output", intShape,
				"cache_read", intShape,
				"cache_write", intShape,
			),
			"latency", durationShape,
			"stop_reason", scalarShape,
		)),
	)),
)

// shapeChecker walks the document against scriptShape and remembers the
// position of every path it visits, so that validation errors found later
// on the decoded value can point at the right line.
type shapeChecker struct {
	name string
	pos  map[string]*token.Token
}

// find returns the position of path, or of its nearest ancestor.
func (c *shapeChecker) find(path string) *token.Token {
	for {
		if tok, ok := c.pos[path]; ok {
			return tok
		}
		i := strings.LastIndexAny(path, ".[")
		if i <= 0 {
			return c.pos[""]
		}
		path = path[:i]
	}
}

func (c *shapeChecker) fail(n ast.Node, path, format string, a ...any) error {
	return posError(c.name, n.GetToken(), path, fmt.Sprintf(format, a...))
}

func (c *shapeChecker) check(n ast.Node, s *shape, path string) error {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
			continue
		case *ast.TagNode:
			n = v.Value
			continue
		}
		break
	}
	switch n.(type) {
	case *ast.AliasNode:
		// The anchored value was checked where it was defined.
		return nil
	case *ast.NullNode:
		c.pos[path] = n.GetToken()
		return nil // an empty value means "not given"
	}
	c.pos[path] = n.GetToken()
	what := describe(n)
	switch s.kind {
	case kindInt:
		if _, ok := n.(*ast.IntegerNode); !ok {
			return c.fail(n, path, "want an integer, got %s", what)
		}
	case kindScalar:
		if !isScalar(n) {
			return c.fail(n, path, "want a text value, got %s", what)
		}
	case kindDuration:
		var v any
		switch x := n.(type) {
		case *ast.StringNode:
			v = x.Value
		case *ast.IntegerNode:
			v = x.Value
		default:
			return c.fail(n, path, "want a duration like \"200ms\", got %s", what)
		}
		if _, err := parseDuration(v); err != nil {
			return c.fail(n, path, "%v", err)
		}
	case kindAny:
		if _, ok := n.(*ast.MappingNode); !ok {
			if _, ok := n.(*ast.MappingValueNode); !ok {
				return c.fail(n, path, "want a mapping of arguments (or args_json for raw text), got %s", what)
			}
		}
	case kindSeq:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			return c.fail(n, path, "want a list, got %s", what)
		}
		for i, e := range seq.Values {
			if err := c.check(e, s.elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case kindMap:
		var pairs []*ast.MappingValueNode
		switch m := n.(type) {
		case *ast.MappingNode:
			pairs = m.Values
		case *ast.MappingValueNode:
			pairs = []*ast.MappingValueNode{m}
		default:
			return c.fail(n, path, "want a mapping, got %s", what)
		}
		c.pos[path] = startToken(n)
		for _, p := range pairs {
			if p.Key.IsMergeKey() {
				continue // "<<: *base" is resolved by the decoder
			}
			key := p.Key.GetToken().Value
			sub, ok := s.fields[key]
			if !ok {
				return c.fail(p.Key, path, "unknown key %q (known: %s)", key, strings.Join(s.order, ", "))
			}
			if err := c.check(p.Value, sub, join(path, key)); err != nil {
				return err
			}
		}
	}
	return nil
}

// startToken is where a node begins for a person reading the file: a
// mapping's own token is the ':' after its first key, so use the key.
func startToken(n ast.Node) *token.Token {
	switch m := n.(type) {
	case *ast.MappingNode:
		if len(m.Values) > 0 {
			return m.Values[0].Key.GetToken()
		}
	case *ast.MappingValueNode:
		return m.Key.GetToken()
	}
	return n.GetToken()
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func isScalar(n ast.Node) bool {
	switch n.(type) {
	case *ast.StringNode, *ast.LiteralNode, *ast.IntegerNode, *ast.FloatNode,
		*ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return true
	}
	return false
}

func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode:
		return fmt.Sprintf("text %q", truncate(n.GetToken().Value, 40))
	case *ast.IntegerNode:
		return "the integer " + n.GetToken().Value
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "the number " + n.GetToken().Value
	case *ast.BoolNode:
		return "the boolean " + n.GetToken().Value
	}
	return "a " + n.Type().YAMLName()
}

// args is the JSON text a call sends.
func (c *Call) args() (json.RawMessage, error) {
	if c.ArgsJSON != "" {
		return json.RawMessage(c.ArgsJSON), nil
	}
	if c.Args == nil {
		return json.RawMessage("{}"), nil
	}
	b, err := json.Marshal(c.Args)
	if err != nil {
		return nil, fmt.Errorf("arguments do not encode as JSON: %w", err)
	}
	return b, nil
}

// truncate shortens s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
