package fs

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/tool"
)

type writeFile struct{}

// WriteFile returns the write_file tool: create, replace or append to a
// text file inside the instance's boundary. The tool implements
// tool.WritePaths.
func WriteFile() tool.Tool { return writeFile{} }

var _ tool.WritePaths = writeFile{}

const writeSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the run folder, inside your own folder, e.g. \"work/root/market/notes.md\"."},
    "content": {"type": "string", "description": "The text to write."},
    "append": {"type": "boolean", "description": "Add the content to the end of the file instead of replacing it. Default false."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`

func (writeFile) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name: "write_file",
		Description: "Write a text file inside your own folder (your boundary); writing anywhere else is refused. " +
			"The path is relative to the run folder, for example \"work/root/market/notes.md\"; missing folders on the way are created. " +
			"By default the file is replaced as a whole, atomically: a reader sees the old file or the new one, never a mix. " +
			"With append=true the content is added to the end of the file (created if missing). Symlinks are not written through.",
		Schema: json.RawMessage(writeSchema),
	}
}

type writeArgs struct {
	Path    *string `json:"path"`
	Content *string `json:"content"`
	Append  bool    `json:"append"`
}

// parse checks the arguments and returns them with the clean path.
func (writeFile) parse(raw json.RawMessage) (writeArgs, string, error) {
	var a writeArgs
	if err := decodeArgs(raw, &a); err != nil {
		return a, "", err
	}
	rel, err := pathArg(a.Path)
	if err != nil {
		return a, "", err
	}
	if a.Content == nil {
		return a, "", required("content")
	}
	return a, rel, nil
}

// WritePaths returns the run-relative path a call with these arguments
// would write, so the host can record it and the Guard can refuse the call
// before it runs. Bad arguments give the same error Call would.
func (w writeFile) WritePaths(raw json.RawMessage) ([]string, error) {
	_, rel, err := w.parse(raw)
	if err != nil {
		return nil, err
	}
	return []string{rel}, nil
}

func (w writeFile) Call(ctx context.Context, env tool.Env, raw json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	a, rel, err := w.parse(raw)
	if err != nil {
		return tool.Result{}, err
	}
	pl, err := locate(env, rel, forWrite)
	if err != nil {
		return tool.Result{}, err
	}
	defer pl.close()
	if pl.name == "." {
		return tool.Result{}, tool.Errorf(CodeIsDir, "%q is your boundary folder itself: give a file path inside it", rel)
	}
	fail := func(err error) (tool.Result, error) {
		return tool.Result{}, ioError(rel, pl.base, CodeBoundaryWrite, err)
	}
	if dir := path.Dir(pl.name); dir != "." {
		if err := pl.root.MkdirAll(dir, 0o755); err != nil {
			return fail(err)
		}
	}
	perm, existed := iofs.FileMode(0o644), false
	switch fi, err := pl.root.Lstat(pl.name); {
	case err == nil && fi.Mode()&iofs.ModeSymlink != 0:
		// Even a symlink that points inside: the Guard records the path
		// named here, and a write must land on exactly that file.
		return tool.Result{}, tool.Errorf(CodeBoundaryWrite, "%q is a symlink: write_file does not write through symlinks", rel)
	case err == nil && fi.IsDir():
		return tool.Result{}, tool.Errorf(CodeIsDir, "%q is a folder", rel)
	case err == nil && !fi.Mode().IsRegular():
		return tool.Result{}, tool.Errorf(CodeNotFile, "%q is not a regular file", rel)
	case err == nil:
		perm, existed = fi.Mode().Perm(), true
	case !errors.Is(err, iofs.ErrNotExist):
		return fail(err)
	}

	verb := "wrote"
	if a.Append {
		verb = "appended"
		err = appendTo(pl.root, pl.name, *a.Content)
	} else if existed {
		err = replace(pl.root, pl.name, *a.Content, perm, existed)
	} else {
		err = create(pl.root, pl.name, *a.Content, perm)
	}
	if err != nil {
		return fail(err)
	}
	return tool.Result{
		Content: fmt.Sprintf("%s %d bytes to %s", verb, len(*a.Content), rel),
		Writes:  []string{rel},
	}, nil
}

func appendTo(root *os.Root, name, content string) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// create writes a new file in place. Nothing is there to protect from a
// half-written replacement, and the instance's folder is its own (no one
// else writes it; readers read only accepted work), so the temporary file
// and rename of replace — the costliest part of a write — are not needed.
// O_EXCL keeps a file that appeared meanwhile from being truncated.
func create(root *os.Root, name, content string, perm iofs.FileMode) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		if errors.Is(err, iofs.ErrExist) {
			return replace(root, name, content, perm, false)
		}
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		root.Remove(name)
	}
	return err
}

// replace writes content to a temporary file beside name and renames it
// over name, so a crash or a concurrent reader never sees half a file.
// It does not fsync: the host makes an attempt's files durable once, when
// the attempt submits its evidence, instead of at every write.
func replace(root *os.Root, name, content string, perm iofs.FileMode, keepMode bool) error {
	dir, base := path.Split(name)
	if len(base) > 100 {
		base = base[:100] // stay under the 255-byte name limit
	}
	tmp := dir + "." + base + ".tmp-" + rand.Text()[:10]
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && keepMode {
		// The umask may have narrowed perm at creation.
		err = root.Chmod(tmp, perm)
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}

var _ tool.Idempotent = writeFile{}

// Idempotent: replacing a file with the same content twice is the same as
// once; appending is not.
func (w writeFile) Idempotent(raw json.RawMessage) bool {
	a, _, err := w.parse(raw)
	return err == nil && !a.Append
}
