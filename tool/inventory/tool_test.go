package inventory

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fractal-harness/fractal/tool"
)

// runFixture is a run folder: inputs the instance may read, its own
// boundary, a sibling's folder and a folder outside the run.
type runFixture struct {
	run, outside string
	env          tool.Env
}

func newRun(t *testing.T) *runFixture {
	t.Helper()
	f := &runFixture{run: t.TempDir(), outside: t.TempDir()}
	pic := makePNG(t, 8, 6)
	writeFile(t, f.run, "inputs/book.xlsx", makeXLSX(t, pic))
	writeFile(t, f.run, "inputs/scan.pdf", makePDF(t, pic))
	writeFile(t, f.run, "inputs/sub/ragged.csv", []byte("a,b\n1\n"))
	writeFile(t, f.run, "work/root/a/notes.md", []byte("# notes\n"))
	writeFile(t, f.run, "work/root/b/x.md", []byte("sibling\n"))
	writeFile(t, f.run, "harness/method.md", []byte("secret method\n"))
	writeFile(t, f.outside, "secret.csv", []byte("outside,secret\n"))
	f.env = tool.Env{Instance: "root/a", RunRoot: f.run, Boundary: "work/root/a", Readable: []string{"inputs"}}
	return f
}

func (f *runFixture) symlink(t *testing.T, target, rel string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(f.run, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

func callTool(t *testing.T, env tool.Env, args string) (string, error) {
	t.Helper()
	res, err := Tool().Call(t.Context(), env, json.RawMessage(args))
	if err == nil && res.Writes != nil {
		t.Errorf("the inventory reported writes: %v", res.Writes)
	}
	return res.Content, err
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	te, ok := tool.AsError(err)
	if !ok {
		t.Fatalf("err = %v (%T), want a tool error %s", err, err, code)
	}
	if te.Code != code {
		t.Fatalf("code = %s (%s), want %s", te.Code, te.Msg, code)
	}
}

// DA-B2: the tool inventories a readable folder and reports run-relative
// paths, warnings first.
func TestToolFolder(t *testing.T) {
	f := newRun(t)
	out, err := callTool(t, f.env, `{"path": "inputs"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{
		"`inputs/book.xlsx` — sheet \"Data\" holds 1 picture (D2 \"Logo\" PNG)",
		"`inputs/book.xlsx` — sheet \"Secret\" is hidden",
		"`inputs/scan.pdf` — page 2 holds only images and no text",
		"`inputs/sub/ragged.csv` — 1 of 1 rows has a different number of fields",
		"### `inputs/sub/ragged.csv`",
	} {
		contains(t, "tool output", out, sub)
	}
	if strings.Index(out, "## Warnings") > strings.Index(out, "## Files") {
		t.Errorf("warnings are not first")
	}
	// One file, and the instance's own boundary.
	out, err = callTool(t, f.env, `{"path": "inputs/scan.pdf"}`)
	if err != nil || !strings.Contains(out, "1 file,") || !strings.Contains(out, "### `inputs/scan.pdf`") {
		t.Errorf("one file: %v\n%s", err, out)
	}
	if _, err := callTool(t, f.env, `{"path": "./work/root/a/"}`); err != nil {
		t.Errorf("own boundary: %v", err)
	}
}

// F-A3 / I-Boundary: the tool reads only what read_file may read; a
// symlink cannot lead it out; symlinks inside a folder are listed and not
// followed.
func TestToolConfinement(t *testing.T) {
	f := newRun(t)
	f.symlink(t, filepath.Join(f.outside, "secret.csv"), "inputs/leak.csv")
	f.symlink(t, f.outside, "inputs/out")
	f.symlink(t, "../harness", "inputs/up")
	f.symlink(t, "book.xlsx", "inputs/alias.xlsx") // stays inside: fine

	tests := []struct {
		path, code string
	}{
		{"harness/method.md", CodeBoundaryRead},
		{"work/root/b", CodeBoundaryRead},
		{"work/root", CodeBoundaryRead},
		{".", CodeBoundaryRead},
		{"inputs/leak.csv", CodeBoundaryRead},
		{"inputs/out", CodeBoundaryRead},
		{"inputs/out/secret.csv", CodeBoundaryRead},
		{"inputs/up/method.md", CodeBoundaryRead},
		{"../etc/passwd", CodePath},
		{"/etc/passwd", CodePath},
		{f.outside, CodePath},
		{`inputs\book.xlsx`, CodePath},
		{"inputs/x:y", CodePath},
		{"", CodePath},
		{"inputs/missing.pdf", CodeNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"path": tc.path})
			_, err := callTool(t, f.env, string(args))
			wantCode(t, err, tc.code)
		})
	}

	out, err := callTool(t, f.env, `{"path": "inputs/alias.xlsx"}`)
	if err != nil || !strings.Contains(out, "Excel workbook") {
		t.Errorf("symlink inside the folder: %v", err)
	}
	out, err = callTool(t, f.env, `{"path": "inputs"}`)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "tool output", out, "`inputs/leak.csv` — it is a symlink to")
	contains(t, "tool output", out, "`inputs/out` — it is a symlink to")
	if strings.Contains(out, "outside,secret") || strings.Contains(out, "secret method") {
		t.Errorf("a symlink was followed out:\n%s", out)
	}
}

// Bad arguments are E-ARGS, named plainly.
func TestToolArgs(t *testing.T) {
	f := newRun(t)
	for _, args := range []string{``, `{}`, `{"path": 3}`, `{"path": null}`, `{"path": "inputs", "depth": 2}`, `[1]`, `{"path": "inputs"} x`, `{"path": `} {
		t.Run(args, func(t *testing.T) {
			_, err := callTool(t, f.env, args)
			wantCode(t, err, CodeArgs)
		})
	}
	if s := Tool().Spec(); s.Name != "inventory" || !json.Valid(s.Schema) {
		t.Errorf("spec %+v", s)
	}
}

// A cancelled call stops; a FIFO is refused without blocking.
func TestToolContextAndSpecial(t *testing.T) {
	f := newRun(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Tool().Call(ctx, f.env, json.RawMessage(`{"path": "inputs"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if err := mkfifo(filepath.Join(f.run, "inputs", "pipe")); err != nil {
		t.Fatal(err)
	}
	_, err := callTool(t, f.env, `{"path": "inputs/pipe"}`)
	wantCode(t, err, CodeNotFile)
}

// The output stays under MaxOutput: the details go first, then the table
// is cut, each with a note.
func TestCapped(t *testing.T) {
	items := func(n, pathLen int) []Item {
		var out []Item
		for i := range n {
			out = append(out, Item{Path: strings.Repeat("x", pathLen) + strconv.Itoa(i), Kind: KindText,
				Text: &Text{Lines: 1, Encoding: EncodingUTF8, UTF8: true, LineEnd: "LF"}})
		}
		return out
	}
	out := capped(items(1000, 100), "inputs")
	if len(out) > MaxOutput || !strings.Contains(out, "details of each file were left out") || strings.Contains(out, "## Details") ||
		!strings.Contains(out, strings.Repeat("x", 100)+"999") {
		t.Errorf("details not dropped cleanly: len %d", len(out))
	}
	out = capped(items(400, 1000), "inputs")
	if len(out) > MaxOutput || !strings.Contains(out, "Truncated at the 256 KiB cap") || !strings.Contains(out, "## Warnings") {
		t.Errorf("len %d, tail %q", len(out), out[max(0, len(out)-200):])
	}
	if out := capped(items(3, 10), "inputs"); !strings.Contains(out, "## Details") {
		t.Errorf("a small report lost its details")
	}
}

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }
