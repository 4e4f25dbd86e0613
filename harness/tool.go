package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/tool"
)

// ToolName is the name of the audited write tool.
const ToolName = "harness_write"

// CodeArgs is the code of a refusal for malformed arguments, as in the
// other tools.
const CodeArgs = "E-ARGS"

const writeSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path inside the harness folder: methodology.md, done_criteria.yaml, worker_prompt_taskpart.md, sop/<name>.md or tools/scripts/<name>.py or .sh (names: lowercase letters, digits, '-' and '_')."},
    "content": {"type": "string", "description": "The whole new content of the file."},
    "reason": {"type": "string", "description": "Why you make this change, in a sentence. It is kept in the audit log and shown to the reviewer."}
  },
  "required": ["path", "content", "reason"],
  "additionalProperties": false
}`

// Tool returns the harness_write tool, which writes through w on behalf of
// author. Only Meta is given it (DA-A5): every other role reaches the
// harness only by asking Meta, and the engine's pre-tool hook (Guard)
// refuses their ordinary writes under harness/.
//
// The tool ignores the calling instance's boundary: the harness folder is
// fixed when w is made, and lies outside every instance's boundary. For
// the same reason Result.Writes stays empty: the write is recorded by the
// audit record (the engine's harness_write event), not as a boundary
// write, which the state Guard would rightly refuse.
func (w *Writer) Tool(author string) tool.Tool { return writeTool{w: w, author: author} }

type writeTool struct {
	w      *Writer
	author string
}

var _ tool.Idempotent = writeTool{}

func (writeTool) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name: ToolName,
		Description: "Write a file of the task harness (the task's methodology, done criteria, worker instructions, SOPs and helper scripts). " +
			"This is the only way to change the harness; every write is audited with your reason, and large changes are reviewed by someone else. " +
			"The whole file is replaced atomically. done_criteria.yaml must be a valid list of structural checks, and methodology.md must open with the constraint table; " +
			"invalid content is refused and nothing is written. Tag every place a constraint lands with its marker, such as [C1]. " +
			"After changing the harness, tell the worker (send it a message): writing a file does not make anyone read it.",
		Schema: json.RawMessage(writeSchema),
	}
}

type writeArgs struct {
	Path    *string `json:"path"`
	Content *string `json:"content"`
	Reason  *string `json:"reason"`
}

func (t writeTool) Call(ctx context.Context, _ tool.Env, raw json.RawMessage) (tool.Result, error) {
	var a writeArgs
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return tool.Result{}, tool.Errorf(CodeArgs, "arguments must be a JSON object with path, content and reason: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return tool.Result{}, tool.Errorf(CodeArgs, "unexpected text after the arguments object")
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"path", a.Path}, {"content", a.Content}, {"reason", a.Reason}} {
		if f.v == nil {
			return tool.Result{}, tool.Errorf(CodeArgs, "missing %q", f.name)
		}
	}
	rec, err := t.w.Write(ctx, Write{Path: *a.Path, Reason: *a.Reason, Author: t.author, Content: []byte(*a.Content)})
	if err != nil {
		return tool.Result{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "wrote %d bytes to %s/%s (sha256 %s).", rec.Size, Dir, rec.Path, rec.SHA256[:12])
	if rec.Large {
		fmt.Fprintf(&b, " This is a large change (%s): a harness revision review will follow.", rec.LargeWhy)
	}
	b.WriteString(" Tell the worker about the change: it does not re-read the harness on its own.")
	return tool.Result{Content: b.String()}, nil
}

// Idempotent: writing the same content twice leaves the file as writing it
// once; the second audit record shows an unchanged file (Prev = SHA256).
func (writeTool) Idempotent(json.RawMessage) bool { return true }
