package fs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/fractal-harness/fractal/tool"
)

// decodeArgs reads a JSON object of arguments into dst, refusing unknown
// keys: a model that passes "start_line" should learn it has no effect
// rather than get a silently different result.
func decodeArgs(raw json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return tool.Errorf(CodeArgs, "no arguments: want a JSON object such as {\"path\": \"inputs/sales.csv\"}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return argsError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return tool.Errorf(CodeArgs, "unexpected text after the arguments object")
	}
	return nil
}

func argsError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return tool.Errorf(CodeArgs, "arguments are not valid JSON: %v (at byte %d)", syn, syn.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return tool.Errorf(CodeArgs, "arguments are not valid JSON: unexpected end of input")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return tool.Errorf(CodeArgs, "arguments must be a JSON object, not %s", typ.Value)
		}
		return tool.Errorf(CodeArgs, "%q must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no typed error for this one.
		return tool.Errorf(CodeArgs, "unknown argument %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return tool.Errorf(CodeArgs, "bad arguments: %v", err)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int64":
		return "an integer"
	}
	return "a " + goKind
}

// required reports a missing required argument.
func required(name string) error {
	return tool.Errorf(CodeArgs, "missing %q", name)
}

// pathArg applies the path rules to a "path" argument and returns it in
// canonical form ("./a//b/" becomes "a/b").
func pathArg(p *string) (string, error) {
	if p == nil {
		return "", required("path")
	}
	return cleanPath(*p)
}
