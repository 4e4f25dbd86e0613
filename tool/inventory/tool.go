package inventory

import (
	"github.com/fractal-harness/fractal/tool/fs"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/tool"
)

// The stable codes of the tool's refusals; the same codes, for the same
// cases, as package tool/fs.
const (
	CodeArgs         = "E-ARGS"
	CodePath         = "E-PATH"
	CodeBoundaryRead = "E-BOUNDARY-READ"
	CodeNotFound     = "E-NOT-FOUND"
	CodeNotDir       = "E-NOT-DIR"
	CodeNotFile      = "E-NOT-FILE"
	CodePermission   = "E-PERMISSION"
)

// MaxOutput caps what the tool returns, as tool/fs caps read_file: past
// it, the per-file details are left out (the warnings and the table of
// files are kept) and a note says how to see them.
const MaxOutput = 256 << 10

type inventoryTool struct{}

// Tool returns the "inventory" tool: the inventory (Markdown) of a file or
// folder the calling instance may read, confined like tool/fs's read_file.
func Tool() tool.Tool { return inventoryTool{} }

const schema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File or folder path relative to the run folder, e.g. \"inputs\" or \"inputs/sales.xlsx\"."}
  },
  "required": ["path"],
  "additionalProperties": false
}`

func (inventoryTool) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name: "inventory",
		Description: "List what input files really hold before you rely on them. Give a file or a folder, relative to the run folder " +
			"(for example \"inputs\"); you may inventory inside your own folder and the folders you were given to read. " +
			"Returns a Markdown report: warnings first (files that could not be read; PDF pages that are only scanned images; " +
			"spreadsheet pictures, charts, objects and text boxes whose content is in no cell; hidden sheets; formulas with no stored result; " +
			"text that is not UTF-8; CSV rows with the wrong number of fields), then a table of the files and details per file. " +
			"Office files are examined inside (they are zip archives), PDFs page by page. Symlinks inside a folder are listed, not followed. " +
			"Save the report (for example as inventory.md) as evidence that the inputs were checked.",
		Schema: json.RawMessage(schema),
	}
}

type args struct {
	Path *string `json:"path"`
}

func (inventoryTool) Call(ctx context.Context, env tool.Env, raw json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	var a args
	if err := decodeArgs(raw, &a); err != nil {
		return tool.Result{}, err
	}
	if a.Path == nil {
		return tool.Result{}, tool.Errorf(CodeArgs, "missing %q", "path")
	}
	// The same confinement as read_file: one implementation of the rules.
	place, err := fs.LocateRead(env, *a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	defer place.Close()
	rel := place.Rel
	fi, err := place.Root.Stat(place.Name)
	if err != nil {
		return tool.Result{}, fs.ReadError(rel, place.Base, err)
	}
	var items []Item
	switch {
	case fi.IsDir():
		items, err = folder(ctx, place.Root, place.Name, rel)
		if err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			var fe *fileError
			if errors.As(err, &fe) {
				return tool.Result{}, fs.ReadError(rel, place.Base, fe.err)
			}
			return tool.Result{}, fs.ReadError(rel, place.Base, errors.Unwrap(err))
		}
	case fi.Mode().IsRegular():
		it, err := inspectFile(ctx, place.Root, place.Name, rel)
		if err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			var fe *fileError
			if errors.As(err, &fe) {
				if errors.Is(fe.err, errNotRegular) {
					return tool.Result{}, tool.Errorf(CodeNotFile, "%q is not a regular file", rel)
				}
				return tool.Result{}, fs.ReadError(rel, place.Base, fe.err)
			}
			return tool.Result{}, fmt.Errorf("inventory: %s: %w", rel, err)
		}
		items = []Item{it}
	default:
		return tool.Result{}, tool.Errorf(CodeNotFile, "%q is not a regular file or a folder", rel)
	}
	return tool.Result{Content: capped(items, rel)}, nil
}

// capped renders items within MaxOutput.
func capped(items []Item, rel string) string {
	head, details := markdownParts(items)
	if len(head)+len(details) <= MaxOutput {
		return head + details
	}
	note := fmt.Sprintf("[The details of each file were left out: the full report is over the 256 KiB cap. "+
		"Call inventory on a single file or a subfolder of %q for its details.]\n", rel)
	if len(head)+len(note) <= MaxOutput {
		return head + note
	}
	cut := strings.LastIndexByte(head[:MaxOutput-len(note)-1], '\n')
	return head[:cut+1] + "\n[Truncated at the 256 KiB cap: the report covers too many files. " +
		"Call inventory on subfolders of " + fmt.Sprintf("%q", rel) + " one by one.]\n"
}

// decodeArgs reads a JSON object of arguments into dst, refusing unknown
// keys, as tool/fs does.
func decodeArgs(raw json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return tool.Errorf(CodeArgs, "no arguments: want a JSON object such as {\"path\": \"inputs\"}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
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
			return tool.Errorf(CodeArgs, "%q must be a string, not %s", typ.Field, typ.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return tool.Errorf(CodeArgs, "unknown argument %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return tool.Errorf(CodeArgs, "bad arguments: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return tool.Errorf(CodeArgs, "unexpected text after the arguments object")
	}
	return nil
}
