package watchdog

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
)

// Canonical returns the canonical form of tool arguments: JSON with object
// keys sorted and no white space, so {"b":1,"a":2} and { "a": 2, "b": 1 }
// give the same bytes and count as the same call. Strings are re-encoded
// (so "\u0041" equals "A"); numbers keep their literal text (1 and 1.0
// differ — a model repeating itself repeats its digits too). When a key
// repeats, the last value wins, as in encoding/json. Empty arguments are
// "{}", as model.ToolCall.Sanitize makes them. Text that is not JSON is
// returned unchanged, so the same broken arguments still compare equal.
func Canonical(args json.RawMessage) []byte {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		return []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return slices.Clone(args)
	}
	if _, err := dec.Token(); err != io.EOF { // trailing text: not one JSON value
		return slices.Clone(args)
	}
	var b bytes.Buffer
	write(&b, v)
	return b.Bytes()
}

func write(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			write(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			write(b, e)
		}
		b.WriteByte(']')
	case string:
		writeString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	default: // nil
		b.WriteString("null")
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode appends a newline
}
