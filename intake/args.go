package intake

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/fractal-harness/fractal/tool"
)

// codeArgs is the refusal code for arguments that do not decode, as in
// the other tools.
const codeArgs = "E-ARGS"

// decodeArgs reads one JSON object into dst strictly: unknown fields (at
// any depth) and trailing text are refused, so a misspelt field is an
// error the model sees, never a silently empty value.
func decodeArgs(raw json.RawMessage, dst any, fields string) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return tool.Errorf(codeArgs, "arguments must be one JSON object with %s", fields)
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return tool.Errorf(codeArgs, "arguments must be one JSON object with %s: %v", fields, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return tool.Errorf(codeArgs, "unexpected text after the arguments object")
	}
	return nil
}

// errorLines splits an error, joined or not, into its lines, one fault
// each, for Step.Problems and for a list the model can work through.
func errorLines(err error) []string {
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []string
	for _, e := range errs {
		for l := range strings.SplitSeq(e.Error(), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

func bullets(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("- " + l + "\n")
	}
	return b.String()
}
