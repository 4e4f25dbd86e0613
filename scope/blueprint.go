package scope

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Blueprint defines a kind of sub-agent in YAML (DC9). It is a Request
// against whatever parent spawns it: the same blueprint yields a narrower
// child under a narrower parent, and one that asks for more than a parent
// has is refused at that parent (CheckBlueprint), not at reading.
//
// The keys, with the seed's names kept:
//
//	id: researcher                 # the agent kind; required
//	description: one line          # for people and planners; optional
//	capabilities:
//	  inherit: minimal             # none (default) | minimal | full
//	  allow: [web_fetch]
//	  deny: [write_file]
//	  composed: [{name: survey, of: [list_dir, read_file]}]
//	budget: {max_tokens: 400000, max_concurrent: 1, daily_limit: 20}
//	constraints:
//	  no_spawn: true               # also no_network, read_only, sandbox_required
//	  allowed_commands: [pdftotext]
//	  timeout_ms: 7200000
//	  stall_threshold_ms: 600000
//	scope: {read: [inputs, work], write: [work], execute: []}
//	dispatch_targets: [reviewer]
//	sop:                           # a list, or the seed's block text "1. …"
//	  - Read the brief.
//
// Every key but id is optional; an absent key asks for nothing (0 budget
// and timeout values take the parent's).
type Blueprint struct {
	ID              string                `json:"id"`
	Description     string                `json:"description,omitempty"`
	Capabilities    BlueprintCapabilities `json:"capabilities"`
	Budget          Budget                `json:"budget"`
	Constraints     BlueprintConstraints  `json:"constraints"`
	Scope           Scope                 `json:"scope"`
	DispatchTargets []string              `json:"dispatch_targets,omitempty"`
	SOP             []string              `json:"sop,omitempty"`

	// Source is the name the blueprint was parsed under, for messages.
	Source string `json:"-"`
	// at holds where each key and list item was in the file, so that
	// CheckBlueprint can point at the line of a widening request.
	at *positions
}

// BlueprintCapabilities is the capabilities section: DC3's four steps.
type BlueprintCapabilities struct {
	Inherit  InheritMode `json:"inherit,omitempty"`
	Allow    []string    `json:"allow,omitempty"`
	Deny     []string    `json:"deny,omitempty"`
	Composed []Composite `json:"composed,omitempty"`
}

// BlueprintConstraints is the constraints section. The seed puts the stall
// threshold there, so the timeout sits beside it.
type BlueprintConstraints struct {
	Constraints
	StallThresholdMs int64 `json:"stall_threshold_ms,omitempty"`
	TimeoutMs        int64 `json:"timeout_ms,omitempty"`
}

// The keys a blueprint takes, by section, in the order documentation lists them.
var (
	blueprintKeys   = []string{"id", "description", "capabilities", "budget", "constraints", "scope", "dispatch_targets", "sop"}
	capabilityKeys  = []string{"inherit", "allow", "deny", "composed"}
	budgetKeys      = []string{"max_tokens", "max_concurrent", "daily_limit"}
	constraintKeys  = []string{"no_spawn", "no_network", "read_only", "sandbox_required", "allowed_commands", "timeout_ms", "stall_threshold_ms"}
	scopeKeys       = []string{"read", "write", "execute"}
	compositeKeys   = []string{"name", "of"}
	requestFieldKey = map[string]string{
		"agent_kind":         "id",
		"timeout_ms":         "constraints.timeout_ms",
		"stall_threshold_ms": "constraints.stall_threshold_ms",
	}
)

// positions maps dotted keys ("budget.max_tokens") to where the key is,
// and key+"\x00"+item to where a list item is.
type positions struct {
	root pos
	keys map[string]pos
}

func (p *positions) item(key, value string) string { return key + "\x00" + value }

// of returns the best position for an error about field (a request or
// blueprint key) and, for a list, one of its items: the item, else the key,
// else its section, else the top of the file.
func (p *positions) of(field, value string) pos {
	if k, ok := requestFieldKey[field]; ok {
		field = k
	}
	if value != "" {
		if at, ok := p.keys[p.item(field, value)]; ok {
			return at
		}
	}
	for f := field; f != ""; {
		if at, ok := p.keys[f]; ok {
			return at
		}
		i := strings.LastIndexByte(f, '.')
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return p.root
}

// ParseBlueprint reads a blueprint from YAML; name labels errors, which are
// *ParseError reading "name:LINE:COL: message". Decoding is strict: unknown
// and duplicate keys, values of the wrong type (max_tokens: "lots"), null
// values, unknown inherit modes, bad names and paths, anchors, aliases and
// tags are errors, so that a typo cannot silently change what a kind of
// agent may do. What can be checked without a parent is checked here
// (read_only with write paths, no_spawn with targets, a stall threshold
// past the timeout); what needs one is CheckBlueprint's.
//
// The SOP may be a list of steps or, as in the seed, one block of text with
// a step per line; leading numbering ("1.", "2)", "-") is removed, since
// Render numbers the steps.
func ParseBlueprint(data []byte, name string) (Blueprint, error) {
	b, perr := parseBlueprint(data)
	if perr != nil {
		return Blueprint{}, &ParseError{Name: name, Line: perr.At.Line, Col: perr.At.Col, Msg: perr.Msg, Err: perr.Err}
	}
	b.Source = name
	return b, nil
}

func parseBlueprint(data []byte) (Blueprint, *posError) {
	root, perr := parseYAML(data, "blueprint")
	if perr != nil {
		return Blueprint{}, perr
	}
	at := &positions{root: nodePos(root), keys: map[string]pos{}}
	b := Blueprint{at: at}
	list := func(key string, n ast.Node) ([]string, *posError) {
		return listValue(key, n, func(item string, p pos) {
			if _, dup := at.keys[at.item(key, item)]; !dup {
				at.keys[at.item(key, item)] = p
			}
		})
	}
	perr = mapping("", root, blueprintKeys, func(k string, kv *ast.MappingValueNode) *posError {
		at.keys[k] = nodePos(kv)
		var perr *posError
		switch k {
		case "id":
			b.ID, perr = textValue(k, kv.Value)
		case "description":
			b.Description, perr = textValue(k, kv.Value)
			b.Description = strings.TrimSpace(b.Description)
		case "dispatch_targets":
			b.DispatchTargets, perr = list(k, kv.Value)
		case "sop":
			b.SOP, perr = sopValue(k, kv.Value, at)
		case "capabilities":
			perr = mapping(k, kv.Value, capabilityKeys, func(k2 string, kv *ast.MappingValueNode) *posError {
				key := join(k, k2)
				at.keys[key] = nodePos(kv)
				var perr *posError
				c := &b.Capabilities
				switch k2 {
				case "inherit":
					var s string
					s, perr = textValue(key, kv.Value)
					c.Inherit = InheritMode(s)
				case "allow":
					c.Allow, perr = list(key, kv.Value)
				case "deny":
					c.Deny, perr = list(key, kv.Value)
				case "composed":
					c.Composed, perr = composedValue(key, kv.Value, at)
				}
				return perr
			})
		case "budget":
			perr = mapping(k, kv.Value, budgetKeys, func(k2 string, kv *ast.MappingValueNode) *posError {
				key := join(k, k2)
				at.keys[key] = nodePos(kv)
				n, perr := intValue(key, kv.Value)
				switch k2 {
				case "max_tokens":
					b.Budget.MaxTokens = n
				case "max_concurrent":
					b.Budget.MaxConcurrent = int(n)
				case "daily_limit":
					b.Budget.DailyLimit = int(n)
				}
				return perr
			})
		case "constraints":
			perr = mapping(k, kv.Value, constraintKeys, func(k2 string, kv *ast.MappingValueNode) *posError {
				key := join(k, k2)
				at.keys[key] = nodePos(kv)
				var perr *posError
				c := &b.Constraints
				switch k2 {
				case "no_spawn":
					c.NoSpawn, perr = boolValue(key, kv.Value)
				case "no_network":
					c.NoNetwork, perr = boolValue(key, kv.Value)
				case "read_only":
					c.ReadOnly, perr = boolValue(key, kv.Value)
				case "sandbox_required":
					c.SandboxRequired, perr = boolValue(key, kv.Value)
				case "allowed_commands":
					c.AllowedCommands, perr = list(key, kv.Value)
				case "timeout_ms":
					c.TimeoutMs, perr = intValue(key, kv.Value)
				case "stall_threshold_ms":
					c.StallThresholdMs, perr = intValue(key, kv.Value)
				}
				return perr
			})
		case "scope":
			perr = mapping(k, kv.Value, scopeKeys, func(k2 string, kv *ast.MappingValueNode) *posError {
				key := join(k, k2)
				at.keys[key] = nodePos(kv)
				var perr *posError
				switch k2 {
				case "read":
					b.Scope.Read, perr = list(key, kv.Value)
				case "write":
					b.Scope.Write, perr = list(key, kv.Value)
				case "execute":
					b.Scope.Execute, perr = list(key, kv.Value)
				}
				return perr
			})
		}
		return perr
	})
	if perr != nil {
		return Blueprint{}, perr
	}
	if _, ok := at.keys["id"]; !ok {
		return Blueprint{}, errAt(at.root, "id is missing: name the kind of agent this blueprint defines")
	}
	if e := validateRequest(b.Request()); e != nil {
		return Blueprint{}, &posError{At: at.of(e.Field, e.Value), Msg: blueprintMsg(e.Field, e.Error()), Err: e}
	}
	return b, nil
}

// blueprintMsg rewrites a request field name at the start of msg into the
// blueprint key the author wrote ("agent_kind: …" → "id: …").
func blueprintMsg(field, msg string) string {
	if k, ok := requestFieldKey[field]; ok && strings.HasPrefix(msg, field) {
		return k + msg[len(field):]
	}
	return msg
}

func composedValue(key string, n ast.Node, at *positions) ([]Composite, *posError) {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return nil, errAt(nodePos(n), "%s must be a list of {name, of} entries, not %s", key, describe(n))
	}
	var out []Composite
	for i, item := range seq.Values {
		what := fmt.Sprintf("%s item %d", key, i+1)
		var c Composite
		perr := mapping(what, item, compositeKeys, func(k string, kv *ast.MappingValueNode) *posError {
			var perr *posError
			switch k {
			case "name":
				c.Name, perr = textValue(what+".name", kv.Value)
			case "of":
				c.Of, perr = listValue(what+".of", kv.Value, func(string, pos) {})
			}
			return perr
		})
		if perr != nil {
			return nil, perr
		}
		if c.Name == "" {
			return nil, errAt(nodePos(item), "%s has no name", what)
		}
		if _, dup := at.keys[at.item(key, c.Name)]; !dup {
			at.keys[at.item(key, c.Name)] = nodePos(item)
		}
		out = append(out, c)
	}
	return out, nil
}

// sopValue reads the SOP as a list of steps or a block of text with one
// step per line.
func sopValue(key string, n ast.Node, at *positions) ([]string, *posError) {
	record := func(step string, p pos) {
		if _, dup := at.keys[at.item(key, step)]; !dup {
			at.keys[at.item(key, step)] = p
		}
	}
	if _, ok := n.(*ast.SequenceNode); ok {
		steps, perr := listValue(key, n, func(string, pos) {})
		if perr != nil {
			return nil, perr
		}
		seq := n.(*ast.SequenceNode)
		for i := range steps {
			steps[i] = stripNumber(steps[i])
			record(steps[i], nodePos(seq.Values[i]))
		}
		return steps, nil
	}
	text, perr := textValue(key, n)
	if perr != nil {
		return nil, errAt(nodePos(n), "%s must be a list of steps or a block of text, not %s", key, describe(n))
	}
	start := nodePos(n)
	first := start.Line
	if _, lit := n.(*ast.LiteralNode); lit {
		first++ // a block's text starts on the line after "|"
	}
	var steps []string
	for i, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		step := stripNumber(l)
		record(step, pos{Line: first + i, Col: 1})
		steps = append(steps, step)
	}
	return steps, nil
}

// stripNumber removes surrounding space and a leading "1.", "2)", "-" or
// "*" marker from a step.
func stripNumber(s string) string {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	switch {
	case i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') && i+1 < len(s) && s[i+1] == ' ':
		return strings.TrimSpace(s[i+1:])
	case i == 0 && len(s) > 1 && (s[0] == '-' || s[0] == '*') && s[1] == ' ':
		return strings.TrimSpace(s[1:])
	}
	return s
}

// Request returns the blueprint as a request against a parent: a
// blueprint asks; the parent that spawns it bounds it.
func (b Blueprint) Request() Request {
	return Request{
		AgentKind:        b.ID,
		Inherit:          b.Capabilities.Inherit,
		Allow:            slices.Clone(b.Capabilities.Allow),
		Deny:             slices.Clone(b.Capabilities.Deny),
		Composed:         cloneComposites(b.Capabilities.Composed),
		Constraints:      cloneConstraintsValue(b.Constraints.Constraints),
		Scope:            Scope{Read: slices.Clone(b.Scope.Read), Write: slices.Clone(b.Scope.Write), Execute: slices.Clone(b.Scope.Execute)},
		Budget:           b.Budget,
		TimeoutMs:        b.Constraints.TimeoutMs,
		StallThresholdMs: b.Constraints.StallThresholdMs,
		SOP:              slices.Clone(b.SOP),
		DispatchTargets:  slices.Clone(b.DispatchTargets),
	}
}

func cloneComposites(cs []Composite) []Composite {
	var out []Composite
	for _, c := range cs {
		out = append(out, Composite{Name: c.Name, Of: slices.Clone(c.Of)})
	}
	return out
}

func cloneConstraintsValue(c Constraints) Constraints {
	c.AllowedCommands = slices.Clone(c.AllowedCommands)
	return c
}

// CheckBlueprint reports whether parent may spawn the blueprint's kind and
// whether the blueprint's request fits within parent. A refusal names the
// field; for a parsed blueprint it is a *ParseError pointing at the
// offending key or list item ("researcher.yaml:5:11: capabilities.allow
// widens the parent: …"), wrapping the *WidenError or *FieldError. A parent
// that is itself malformed is reported as such, without a position.
func CheckBlueprint(b Blueprint, parent DelegationContract) error {
	if err := parent.Validate(); err != nil {
		return fmt.Errorf("scope: parent contract: %w", err)
	}
	if err := CheckDispatch(parent, b.ID); err != nil {
		return b.locate("agent_kind", b.ID, fmt.Sprintf("the parent (%s) may not start a %s agent: %v", parent.Identity.AgentKind, b.ID, err), err)
	}
	_, err := Clone(parent, b.Request())
	if err == nil {
		return nil
	}
	var we *WidenError
	var fe *FieldError
	switch {
	case errors.As(err, &we):
		return b.locate(we.Field, we.Child, blueprintMsg(we.Field, err.Error()), err)
	case errors.As(err, &fe):
		return b.locate(fe.Field, fe.Value, blueprintMsg(fe.Field, err.Error()), err)
	}
	return b.locate("", "", err.Error(), err)
}

// locate positions an error about field (and one of its items) in the
// file b came from; a blueprint built in code has no positions and gets
// the error unchanged.
func (b Blueprint) locate(field, value, msg string, err error) error {
	if b.at == nil {
		return err
	}
	at := b.at.of(field, value)
	return &ParseError{Name: b.Source, Line: at.Line, Col: at.Col, Msg: msg, Err: err}
}
