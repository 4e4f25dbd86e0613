package fs

import (
	"context"
	"encoding/json"
	"fmt"
	iofs "io/fs"
	"path"
	"sort"
	"strings"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/tool"
)

type listDir struct{}

// ListDir returns the list_dir tool: the entries of a folder inside the
// instance's boundary or a readable folder.
func ListDir() tool.Tool { return listDir{} }

const listSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Folder path relative to the run folder, e.g. \"inputs\" or \"work/root/market\"."}
  },
  "required": ["path"],
  "additionalProperties": false
}`

func (listDir) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name: "list_dir",
		Description: "List a folder. The path is relative to the run folder (for example \"inputs\" or \"work/root/market\"); " +
			"you may list inside your own folder and the folders you were given to read. " +
			"One entry per line, sorted by name: a folder ends with \"/\", a file shows its size in bytes, " +
			"and a symlink shows \"-> target\".",
		Schema: json.RawMessage(listSchema),
	}
}

type listArgs struct {
	Path *string `json:"path"`
}

func (listDir) Call(ctx context.Context, env tool.Env, raw json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	var a listArgs
	if err := decodeArgs(raw, &a); err != nil {
		return tool.Result{}, err
	}
	rel, err := pathArg(a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	pl, err := locate(env, rel, forRead)
	if err != nil {
		return tool.Result{}, err
	}
	defer pl.close()
	fail := func(err error) (tool.Result, error) {
		return tool.Result{}, ioError(rel, pl.base, CodeBoundaryRead, err)
	}
	fi, err := pl.root.Stat(pl.name)
	if err != nil {
		return fail(err)
	}
	if !fi.IsDir() {
		return tool.Result{}, tool.Errorf(CodeNotDir, "%q is a file, not a folder: use read_file", rel)
	}
	d, err := pl.root.Open(pl.name)
	if err != nil {
		return fail(err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return fail(err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	if len(entries) == 0 {
		return tool.Result{Content: "(empty folder)"}, nil
	}

	var b strings.Builder
	for i, e := range entries {
		line := entryLine(pl, e)
		if b.Len()+len(line)+1 > MaxOutput {
			fmt.Fprintf(&b, "[truncated at the 256 KiB cap: showed %d of %d entries]", i, len(entries))
			break
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return tool.Result{Content: b.String()}, nil
}

// entryLine formats one entry: "name/" for a folder, "name  123 bytes" for
// a file, "name -> target (symlink)" for a symlink, which is not followed
// (the target may be outside what the instance may read).
func entryLine(pl *place, e iofs.DirEntry) string {
	name := e.Name()
	switch t := e.Type(); {
	case t&iofs.ModeSymlink != 0:
		target, err := pl.root.Readlink(path.Join(pl.name, name))
		if err != nil {
			return name + " (symlink)"
		}
		return fmt.Sprintf("%s -> %s (symlink)", name, target)
	case t.IsDir():
		return name + "/"
	case t.IsRegular():
		info, err := e.Info()
		if err != nil {
			return name // removed while listing
		}
		return fmt.Sprintf("%s  %d bytes", name, info.Size())
	default:
		return name + "  (special file)"
	}
}
