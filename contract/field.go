package contract

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// maxAliasHops bounds alias and merge-key chasing during a lookup, so that
// a document whose aliases refer in circles still gives an answer.
const maxAliasHops = 64

// LookupField decides yaml_field_present for the YAML text doc: ok is true
// when the dotted field resolves, key by key through mappings, to a value
// that is present and not null. When ok is false, reason says why in plain
// words. err is set when doc is not readable YAML, in which case the field
// is neither present nor absent. Only the first document of a
// multi-document text is looked at.
//
// Aliases and merge keys (<<) are followed one hop at a time rather than
// expanded, so a document built to blow up on expansion costs nothing.
func LookupField(doc []byte, field string) (ok bool, reason string, err error) {
	for seg := range strings.SplitSeq(field, ".") {
		if seg == "" {
			return false, "", fmt.Errorf("field %q has an empty segment", field)
		}
	}
	bodies, perr := parseDocuments(doc)
	if perr != nil {
		return false, "", fmt.Errorf("%d:%d: %s", perr.At.Line, perr.At.Col, perr.Msg)
	}
	if len(bodies) == 0 {
		return false, "the file holds no YAML values", nil
	}
	l := lookup{anchors: map[string][]*ast.AnchorNode{}}
	ast.Walk(&l, bodies[0])

	node := bodies[0]
	segs := strings.Split(field, ".")
	for i, seg := range segs {
		at := strings.Join(segs[:i], ".")
		node = l.resolve(node)
		if _, isMap := entries(node); !isMap {
			if i == 0 {
				return false, fmt.Sprintf("the document is %s, not a mapping", describe(node)), nil
			}
			return false, fmt.Sprintf("%s is %s, not a mapping", at, describe(node)), nil
		}
		next, found := l.get(node, seg, 0)
		if !found {
			if i == 0 {
				return false, fmt.Sprintf("the document has no key %s", seg), nil
			}
			return false, fmt.Sprintf("%s has no key %s", at, seg), nil
		}
		node = next
	}
	if _, isNull := l.resolve(node).(*ast.NullNode); isNull || l.resolve(node) == nil {
		return false, fmt.Sprintf("%s is empty (null)", field), nil
	}
	return true, "", nil
}

// lookup indexes a document's anchors so aliases can be resolved lazily.
type lookup struct {
	anchors map[string][]*ast.AnchorNode
}

func (l *lookup) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil {
		name := a.Name.GetToken().Value
		l.anchors[name] = append(l.anchors[name], a)
	}
	return l
}

// resolve strips anchors and tags and follows aliases to the node they
// stand for: the latest anchor of that name defined before the alias, as
// YAML specifies.
func (l *lookup) resolve(n ast.Node) ast.Node {
	for range maxAliasHops {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			if v.Value == nil {
				return nil
			}
			var target ast.Node
			off := offset(v)
			for _, a := range l.anchors[v.Value.GetToken().Value] {
				if offset(a) < off {
					target = a.Value
				}
			}
			if target == nil {
				return nil
			}
			n = target
		default:
			return n
		}
	}
	return nil
}

func offset(n ast.Node) int {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Offset
	}
	return 0
}

// get finds key in the mapping m, looking through merge keys when m does
// not have it itself (explicit keys win over merged ones).
func (l *lookup) get(m ast.Node, key string, hops int) (ast.Node, bool) {
	kvs, _ := entries(m)
	var merged []ast.Node
	for _, kv := range kvs {
		if kv.Key == nil {
			continue
		}
		if kv.Key.IsMergeKey() {
			merged = append(merged, kv.Value)
			continue
		}
		if name, ok := scalarText(l.resolve(kv.Key)); ok && name == key {
			return kv.Value, true
		}
	}
	if hops >= maxAliasHops {
		return nil, false
	}
	for _, mv := range merged {
		src := l.resolve(mv)
		var sources []ast.Node
		if seq, ok := src.(*ast.SequenceNode); ok {
			sources = seq.Values
		} else {
			sources = []ast.Node{src}
		}
		for _, s := range sources {
			s = l.resolve(s)
			if _, isMap := entries(s); !isMap {
				continue
			}
			if v, ok := l.get(s, key, hops+1); ok {
				return v, true
			}
		}
	}
	return nil, false
}

// scalarText is the text of a scalar key as written.
func scalarText(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.MappingKeyNode:
		return scalarText(v.Value)
	case ast.ScalarNode:
		if tk := v.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return "", false
}
