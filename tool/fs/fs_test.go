package fs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/fractal-harness/fractal/tool"
)

// fixture is a run folder with two sibling boundaries and a folder outside
// the run that no call may touch.
type fixture struct {
	run, outside string
	env          tool.Env
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{run: t.TempDir(), outside: t.TempDir()}
	for name, content := range map[string]string{
		"inputs/sales.csv":   "region,total\nnorth,10\nsouth,20\n",
		"harness/method.md":  "secret method\n",
		"work/root/a/own.md": "mine\n",
		"work/root/b/x.md":   "sibling\n",
		"work/root/ab/y.md":  "prefix sibling\n",
	} {
		f.write(t, name, content)
	}
	if err := os.WriteFile(filepath.Join(f.outside, "secret.txt"), []byte("outside secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.env = tool.Env{Instance: "root/a", RunRoot: f.run, Boundary: "work/root/a", Readable: []string{"inputs"}}
	return f
}

func (f *fixture) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(f.run, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) symlink(t *testing.T, target, rel string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(f.run, rel)); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.run, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// outsideUntouched checks that nothing outside the run was created or
// changed.
func (f *fixture) outsideUntouched(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(f.outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "secret.txt" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("outside folder changed: %v", names)
	}
	if b, _ := os.ReadFile(filepath.Join(f.outside, "secret.txt")); string(b) != "outside secret\n" {
		t.Errorf("outside file changed: %q", b)
	}
}

func call(t *testing.T, tl tool.Tool, env tool.Env, args string) (tool.Result, error) {
	t.Helper()
	return tl.Call(context.Background(), env, json.RawMessage(args))
}

// attempt calls tl on path with the arguments its schema wants, so one
// table can try every tool.
func attempt(t *testing.T, tl tool.Tool, env tool.Env, path string) (tool.Result, error) {
	t.Helper()
	if tl.Spec().Name == "write_file" {
		return call(t, tl, env, args("path", path, "content", "pwned"))
	}
	return call(t, tl, env, args("path", path))
}

func args(kv ...any) string {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func wantCode(t *testing.T, err error, code string) *tool.Error {
	t.Helper()
	te, ok := tool.AsError(err)
	if !ok {
		t.Fatalf("err = %v (%T), want a tool error %s", err, err, code)
	}
	if te.Code != code {
		t.Fatalf("code = %s (%s), want %s", te.Code, te.Msg, code)
	}
	return te
}

// I-Boundary: an instance reads its inputs and its own boundary, and
// writes its own boundary.
func TestReadInputsAndOwnBoundary(t *testing.T) {
	f := newFixture(t)
	res, err := call(t, ReadFile(), f.env, args("path", "inputs/sales.csv"))
	if err != nil || res.Content != "region,total\nnorth,10\nsouth,20\n" {
		t.Fatalf("read input: %q %v", res.Content, err)
	}
	if res.Writes != nil {
		t.Errorf("read reported writes %v", res.Writes)
	}
	res, err = call(t, WriteFile(), f.env, args("path", "work/root/a/notes.md", "content", "hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "wrote 6 bytes to work/root/a/notes.md" || len(res.Writes) != 1 || res.Writes[0] != "work/root/a/notes.md" {
		t.Errorf("write result %+v", res)
	}
	res, err = call(t, ReadFile(), f.env, args("path", "work/root/a/notes.md"))
	if err != nil || res.Content != "hello\n" {
		t.Errorf("read back: %q %v", res.Content, err)
	}
	// A readable folder is not writable.
	_, err = call(t, WriteFile(), f.env, args("path", "inputs/sales.csv", "content", "x"))
	wantCode(t, err, CodeBoundaryWrite)
	if got := f.read(t, "inputs/sales.csv"); !strings.HasPrefix(got, "region") {
		t.Errorf("input overwritten: %q", got)
	}
}

// I-Boundary: reads outside the boundary and the readable folders are
// refused, naming what is readable.
func TestReadOutsideRefused(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"harness/method.md", "work/root/b/x.md", "work/root/ab/y.md", "work/root", "."} {
		_, err := call(t, ReadFile(), f.env, args("path", p))
		te := wantCode(t, err, CodeBoundaryRead)
		if !strings.Contains(te.Msg, "work/root/a (your boundary), inputs") {
			t.Errorf("%s: message does not say what is readable: %s", p, te.Msg)
		}
		_, err = call(t, ListDir(), f.env, args("path", p))
		wantCode(t, err, CodeBoundaryRead)
	}
}

// F-A3 / I-Boundary: path rules refuse traversal, absolute paths, colons,
// backslashes and NUL before any IO, for every tool.
func TestPathRules(t *testing.T) {
	f := newFixture(t)
	paths := []string{
		"work/root/../../etc/passwd",
		"work/root/a/../../b/x.md",
		"..",
		"/etc/passwd",
		f.outside + "/secret.txt",
		"C:/Windows/win.ini",
		"work/root/a/x:y",
		`work\root\a\x`,
		"work/root/a/x\x00y",
		"",
	}
	for _, p := range paths {
		for _, tl := range All() {
			t.Run(tl.Spec().Name+" "+p, func(t *testing.T) {
				_, err := attempt(t, tl, f.env, p)
				wantCode(t, err, CodePath)
			})
		}
	}
	f.outsideUntouched(t)
}

// F-D4 / F-A3 / I-Boundary: writes land only inside the instance's own
// boundary; siblings, a boundary that merely shares a string prefix, and
// the parent are refused.
func TestWriteOutsideBoundaryRefused(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"work/root/b/x.md", "work/root/b/new.md", "work/root/ab/y.md", "work/root/abc.md", "work/root/top.md", "harness/method.md"} {
		t.Run(p, func(t *testing.T) {
			before, _ := os.ReadFile(filepath.Join(f.run, p))
			_, err := call(t, WriteFile(), f.env, args("path", p, "content", "pwned"))
			te := wantCode(t, err, CodeBoundaryWrite)
			if !strings.Contains(te.Msg, `"work/root/a"`) {
				t.Errorf("message does not name the boundary: %s", te.Msg)
			}
			after, _ := os.ReadFile(filepath.Join(f.run, p))
			if string(after) != string(before) {
				t.Errorf("file changed: %q", after)
			}
		})
	}
	// The boundary folder itself is not a file.
	_, err := call(t, WriteFile(), f.env, args("path", "work/root/a", "content", "x"))
	wantCode(t, err, CodeIsDir)
	// An instance without a boundary writes nothing.
	env := f.env
	env.Boundary = ""
	_, err = call(t, WriteFile(), env, args("path", "work/root/a/z.md", "content", "x"))
	wantCode(t, err, CodeBoundaryWrite)
}

// F-A3 / I-Boundary: a symlink cannot carry a read or a write out of the
// boundary, whether it is the file itself, a folder on the way, or the
// boundary folder; nothing is written outside.
func TestSymlinkEscapesRefused(t *testing.T) {
	f := newFixture(t)
	f.symlink(t, filepath.Join(f.outside, "secret.txt"), "work/root/a/leak.txt")
	f.symlink(t, f.outside, "work/root/a/out")
	f.symlink(t, "../b", "work/root/a/sib")
	f.symlink(t, "../../../harness", "work/root/a/up")
	f.symlink(t, "/nonexistent/fractal-test", "work/root/a/dangling")
	f.symlink(t, "loop2", "work/root/a/loop1")
	f.symlink(t, "loop1", "work/root/a/loop2")

	tests := []struct {
		name string
		tl   tool.Tool
		path string
		code string
	}{
		{"read file symlink to outside", ReadFile(), "work/root/a/leak.txt", CodeBoundaryRead},
		{"write file symlink to outside", WriteFile(), "work/root/a/leak.txt", CodeBoundaryWrite},
		{"read through folder symlink to outside", ReadFile(), "work/root/a/out/secret.txt", CodeBoundaryRead},
		{"write new file through folder symlink to outside", WriteFile(), "work/root/a/out/new.txt", CodeBoundaryWrite},
		{"write new folders through folder symlink to outside", WriteFile(), "work/root/a/out/d/e/new.txt", CodeBoundaryWrite},
		{"list folder symlink to outside", ListDir(), "work/root/a/out", CodeBoundaryRead},
		{"write into sibling through symlink", WriteFile(), "work/root/a/sib/x.md", CodeBoundaryWrite},
		{"read sibling through symlink", ReadFile(), "work/root/a/sib/x.md", CodeBoundaryRead},
		{"read harness through symlink", ReadFile(), "work/root/a/up/method.md", CodeBoundaryRead},
		{"write dangling symlink", WriteFile(), "work/root/a/dangling", CodeBoundaryWrite},
		{"write under dangling symlink", WriteFile(), "work/root/a/dangling/x", CodeBoundaryWrite},
		{"read dangling symlink", ReadFile(), "work/root/a/dangling", CodeBoundaryRead},
		{"read symlink loop", ReadFile(), "work/root/a/loop1", CodeBoundaryRead},
		{"write under symlink loop", WriteFile(), "work/root/a/loop1/x", CodeBoundaryWrite},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := attempt(t, tc.tl, f.env, tc.path)
			wantCode(t, err, tc.code)
		})
	}
	if got := f.read(t, "work/root/b/x.md"); got != "sibling\n" {
		t.Errorf("sibling changed: %q", got)
	}
	f.outsideUntouched(t)
	if _, err := os.Stat("/nonexistent/fractal-test"); err == nil {
		t.Error("dangling target created")
	}
}

// I-Boundary: a boundary that is itself a symlink (say, planted by a
// parent) does not take the instance's writes with it.
func TestSymlinkedBoundaryRefused(t *testing.T) {
	f := newFixture(t)
	f.symlink(t, f.outside, "work/root/c")
	f.symlink(t, "b", "work/root/d")
	for _, boundary := range []string{"work/root/c", "work/root/d"} {
		env := f.env
		env.Boundary = boundary
		_, err := call(t, WriteFile(), env, args("path", boundary+"/new.txt", "content", "pwned"))
		wantCode(t, err, CodeBoundaryWrite)
		_, err = call(t, ReadFile(), env, args("path", boundary+"/x.md"))
		wantCode(t, err, CodeBoundaryRead)
	}
	if _, err := os.Stat(filepath.Join(f.run, "work/root/b/new.txt")); err == nil {
		t.Error("written into the sibling")
	}
	f.outsideUntouched(t)
}

// I-Boundary: write_file never writes through a symlink, even one that
// stays inside the boundary, so the recorded path is the file changed.
// Reading through such a symlink is fine.
func TestWriteThroughInsideSymlinkRefused(t *testing.T) {
	f := newFixture(t)
	f.symlink(t, "own.md", "work/root/a/alias.md")
	_, err := call(t, WriteFile(), f.env, args("path", "work/root/a/alias.md", "content", "changed"))
	wantCode(t, err, CodeBoundaryWrite)
	_, err = call(t, WriteFile(), f.env, args("path", "work/root/a/alias.md", "content", "changed", "append", true))
	wantCode(t, err, CodeBoundaryWrite)
	if got := f.read(t, "work/root/a/own.md"); got != "mine\n" {
		t.Errorf("target changed: %q", got)
	}
	res, err := call(t, ReadFile(), f.env, args("path", "work/root/a/alias.md"))
	if err != nil || res.Content != "mine\n" {
		t.Errorf("read through inside symlink: %q %v", res.Content, err)
	}
	// A folder symlink inside the boundary may be written under.
	if err := os.Mkdir(filepath.Join(f.run, "work/root/a/real"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.symlink(t, "real", "work/root/a/dir")
	if _, err := call(t, WriteFile(), f.env, args("path", "work/root/a/dir/n.md", "content", "ok")); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "work/root/a/real/n.md"); got != "ok" {
		t.Errorf("got %q", got)
	}
	// An absolute symlink is never followed, even when it points inside.
	f.symlink(t, filepath.Join(f.run, "work/root/a/own.md"), "work/root/a/abs.md")
	_, err = call(t, ReadFile(), f.env, args("path", "work/root/a/abs.md"))
	wantCode(t, err, CodeBoundaryRead)
}

// A symlink may be read through when one allowed folder holds both the
// link and its target; each folder is checked on its own, so a link from
// the boundary into inputs is refused even though both are readable.
func TestSymlinkWithinReadableFolder(t *testing.T) {
	f := newFixture(t)
	f.symlink(t, "../b/x.md", "work/root/a/sib.md")
	f.symlink(t, "../../../inputs/sales.csv", "work/root/a/sales.csv")
	env := f.env
	env.Readable = []string{"inputs", "work"}
	res, err := call(t, ReadFile(), env, args("path", "work/root/a/sib.md"))
	if err != nil || res.Content != "sibling\n" {
		t.Errorf("%q %v", res.Content, err)
	}
	// Without "work" readable, the same link leads out of the boundary.
	_, err = call(t, ReadFile(), f.env, args("path", "work/root/a/sib.md"))
	wantCode(t, err, CodeBoundaryRead)
	_, err = call(t, ReadFile(), env, args("path", "work/root/a/sales.csv"))
	wantCode(t, err, CodeBoundaryRead)
}

func TestWriteCreatesFoldersAtomicallyAndAppends(t *testing.T) {
	f := newFixture(t)
	env := f.env
	env.Boundary = "work/root/new" // does not exist yet
	p := "work/root/new/sub/deeper/notes.md"
	if _, err := call(t, WriteFile(), env, args("path", p, "content", "one\n")); err != nil {
		t.Fatal(err)
	}
	res, err := call(t, WriteFile(), env, args("path", p, "content", "two\n", "append", true))
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "appended 4 bytes to "+p || res.Writes[0] != p {
		t.Errorf("append result %+v", res)
	}
	if got := f.read(t, p); got != "one\ntwo\n" {
		t.Errorf("after append: %q", got)
	}
	// Append creates a missing file.
	if _, err := call(t, WriteFile(), env, args("path", "work/root/new/log.txt", "content", "a", "append", true)); err != nil {
		t.Fatal(err)
	}
	// Replace keeps the file's mode and leaves no temporary file behind.
	full := filepath.Join(f.run, p)
	if err := os.Chmod(full, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, WriteFile(), env, args("path", "./"+p, "content", "")); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, p); got != "" {
		t.Errorf("after replace: %q", got)
	}
	if fi, _ := os.Stat(full); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(full))
	if len(entries) != 1 {
		t.Errorf("leftover files: %v", entries)
	}
	// A file on the way where a folder is needed.
	_, err = call(t, WriteFile(), env, args("path", p+"/x", "content", "a"))
	wantCode(t, err, CodeNotDir)
}

func TestWritePaths(t *testing.T) {
	wp, ok := WriteFile().(tool.WritePaths)
	if !ok {
		t.Fatal("write_file does not implement tool.WritePaths")
	}
	got, err := wp.WritePaths(json.RawMessage(args("path", "./work/root/a//x.md", "content", "x")))
	if err != nil || len(got) != 1 || got[0] != "work/root/a/x.md" {
		t.Errorf("WritePaths = %v, %v", got, err)
	}
	_, err = wp.WritePaths(json.RawMessage(`{"path": "work/root/a/x.md"}`))
	wantCode(t, err, CodeArgs)
	_, err = wp.WritePaths(json.RawMessage(args("path", "../x", "content", "")))
	wantCode(t, err, CodePath)
	_, err = wp.WritePaths(json.RawMessage(`{"path": `))
	wantCode(t, err, CodeArgs)
}

func TestBadArgs(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		tl   tool.Tool
		args string
		want string // regexp on the message
	}{
		{ReadFile(), ``, `^no arguments`},
		{ReadFile(), `{"path": `, `^arguments are not valid JSON`},
		{ReadFile(), `{"path": "inputs/sales.csv",}`, `^arguments are not valid JSON: invalid character`},
		{ReadFile(), `[]`, `^arguments must be a JSON object, not array$`},
		{ReadFile(), `{}`, `^missing "path"$`},
		{ReadFile(), `null`, `^missing "path"$`},
		{ReadFile(), `{"path": 3}`, `^"path" must be a string, not number$`},
		{ReadFile(), `{"path": "inputs/sales.csv", "offset": 1.5}`, `^"offset" must be an integer, not number 1.5$`},
		{ReadFile(), `{"path": "inputs/sales.csv", "offset": -1}`, `^"offset" must be 1 or more`},
		{ReadFile(), `{"path": "inputs/sales.csv", "limit": -1}`, `^"limit" must be 1 or more`},
		{ReadFile(), `{"path": "inputs/sales.csv", "start_line": 1}`, `^unknown argument "start_line"$`},
		{ReadFile(), `{"path": "inputs/sales.csv"} {}`, `^unexpected text after the arguments object$`},
		{WriteFile(), `{"path": "work/root/a/x"}`, `^missing "content"$`},
		{WriteFile(), `{"path": "work/root/a/x", "content": "a", "append": "yes"}`, `^"append" must be true or false, not string$`},
		{ListDir(), `{"dir": "inputs"}`, `^unknown argument "dir"$`},
	}
	for _, tc := range tests {
		t.Run(tc.tl.Spec().Name+" "+tc.args, func(t *testing.T) {
			_, err := call(t, tc.tl, f.env, tc.args)
			te := wantCode(t, err, CodeArgs)
			if !regexp.MustCompile(tc.want).MatchString(te.Msg) {
				t.Errorf("message %q, want %q", te.Msg, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(f.run, "work/root/a/x")); err == nil {
		t.Error("file written despite bad arguments")
	}
}

func TestReadOffsetLimit(t *testing.T) {
	f := newFixture(t)
	f.write(t, "work/root/a/ten.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10")
	tests := []struct {
		offset, limit int
		want          string
	}{
		{0, 0, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10"},
		{9, 0, "9\n10"},
		{3, 2, "3\n4\n[showed lines 3-4; the file goes on: read on with offset=5]"},
		{9, 2, "9\n10"},
		{10, 1, "10"},
		{11, 0, "[the file has 10 lines; offset 11 is past its end]"},
		{50, 0, "[the file has 10 lines; offset 50 is past its end]"},
	}
	for _, tc := range tests {
		res, err := call(t, ReadFile(), f.env, args("path", "work/root/a/ten.txt", "offset", tc.offset, "limit", tc.limit))
		if err != nil || res.Content != tc.want {
			t.Errorf("offset %d limit %d: %q %v, want %q", tc.offset, tc.limit, res.Content, err, tc.want)
		}
	}
	f.write(t, "work/root/a/empty.txt", "")
	if res, err := call(t, ReadFile(), f.env, args("path", "work/root/a/empty.txt")); err != nil || res.Content != "" {
		t.Errorf("empty file: %q %v", res.Content, err)
	}
}

// The output cap cuts at whole lines and says how to read on; following
// the note reads the whole file.
func TestReadTruncation(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	for i := 1; b.Len() < 3*MaxOutput; i++ {
		fmt.Fprintf(&b, "line %06d %s\n", i, strings.Repeat("é", 40))
	}
	whole := b.String()
	f.write(t, "work/root/a/big.txt", whole)

	note := regexp.MustCompile(`\n\[truncated at the 256 KiB cap: showed lines (\d+)-(\d+)\. Read on with offset=(\d+) .*\]$`)
	var got strings.Builder
	offset, calls := 1, 0
	for ; calls < 10; calls++ {
		res, err := call(t, ReadFile(), f.env, args("path", "work/root/a/big.txt", "offset", offset))
		if err != nil {
			t.Fatal(err)
		}
		m := note.FindStringSubmatchIndex(res.Content)
		if m == nil {
			got.WriteString(res.Content)
			break
		}
		body := res.Content[:m[0]+1]
		if len(body) > MaxOutput {
			t.Fatalf("body %d bytes over the cap", len(body))
		}
		got.WriteString(body)
		fmt.Sscan(res.Content[m[6]:m[7]], &offset)
	}
	if calls < 2 {
		t.Errorf("no truncation happened")
	}
	if got.String() != whole {
		t.Errorf("reading on with the notes did not give the whole file (%d of %d bytes)", got.Len(), len(whole))
	}

	// One line longer than the cap: its start, cut on a rune boundary.
	f.write(t, "work/root/a/long.txt", strings.Repeat("ü", MaxOutput)+"\nnext\n")
	res, err := call(t, ReadFile(), f.env, args("path", "work/root/a/long.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(res.Content, "[truncated: line 1 is longer than the 256 KiB cap; only its start is shown. The next line is offset=2]") {
		t.Errorf("note missing: %q", res.Content[len(res.Content)-200:])
	}
	if n := strings.Index(res.Content, "\n["); n > MaxOutput || n < MaxOutput-4 {
		t.Errorf("cut at %d", n)
	}
}

func TestReadRefusals(t *testing.T) {
	f := newFixture(t)
	f.write(t, "work/root/a/bin.dat", "\xff\xfe\x00\x01")
	f.write(t, "work/root/a/nul.txt", "a\x00b")
	for _, p := range []string{"work/root/a/bin.dat", "work/root/a/nul.txt"} {
		_, err := call(t, ReadFile(), f.env, args("path", p))
		wantCode(t, err, CodeBinary)
	}
	// A FIFO would block an open for reading; it is refused unopened.
	if err := syscall.Mkfifo(filepath.Join(f.run, "work/root/a/pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := call(t, ReadFile(), f.env, args("path", "work/root/a/pipe"))
	wantCode(t, err, CodeNotFile)
	_, err = call(t, WriteFile(), f.env, args("path", "work/root/a/pipe", "content", "x"))
	wantCode(t, err, CodeNotFile)
	_, err = call(t, ReadFile(), f.env, args("path", "work/root/a/missing.md"))
	wantCode(t, err, CodeNotFound)
	_, err = call(t, ReadFile(), f.env, args("path", "inputs/missing/deeper.csv"))
	wantCode(t, err, CodeNotFound)
	_, err = call(t, ReadFile(), f.env, args("path", "work/root/a"))
	wantCode(t, err, CodeIsDir)
	_, err = call(t, ListDir(), f.env, args("path", "work/root/a/own.md"))
	wantCode(t, err, CodeNotDir)
	_, err = call(t, ListDir(), f.env, args("path", "work/root/a/nope"))
	wantCode(t, err, CodeNotFound)
	// A boundary that does not exist yet reads as not found.
	env := f.env
	env.Boundary = "work/root/fresh"
	_, err = call(t, ListDir(), env, args("path", "work/root/fresh"))
	wantCode(t, err, CodeNotFound)
}

func TestListDir(t *testing.T) {
	f := newFixture(t)
	f.write(t, "work/root/a/b.csv", "12345")
	f.write(t, "work/root/a/sub/x", "")
	f.symlink(t, "../../../inputs/sales.csv", "work/root/a/link.csv")
	res, err := call(t, ListDir(), f.env, args("path", "work/root/a/"))
	if err != nil {
		t.Fatal(err)
	}
	want := "b.csv  5 bytes\nlink.csv -> ../../../inputs/sales.csv (symlink)\nown.md  5 bytes\nsub/\n"
	if res.Content != want {
		t.Errorf("got\n%s\nwant\n%s", res.Content, want)
	}
	if err := os.Mkdir(filepath.Join(f.run, "work/root/a/empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err = call(t, ListDir(), f.env, args("path", "work/root/a/empty"))
	if err != nil || res.Content != "(empty folder)" {
		t.Errorf("empty: %q %v", res.Content, err)
	}
	res, err = call(t, ListDir(), f.env, args("path", "inputs"))
	if err != nil || res.Content != "sales.csv  31 bytes\n" {
		t.Errorf("inputs: %q %v", res.Content, err)
	}
}

func TestHostFaults(t *testing.T) {
	f := newFixture(t)
	for _, env := range []tool.Env{
		{RunRoot: "relative/run", Boundary: "work/root/a"},
		{RunRoot: f.run, Boundary: "../escape"},
		{RunRoot: f.run, Boundary: "work/root/a", Readable: []string{"/etc"}},
	} {
		_, err := call(t, ReadFile(), env, args("path", "work/root/a/own.md"))
		if _, isTool := tool.AsError(err); err == nil || isTool {
			t.Errorf("env %+v: err = %v, want a host fault", env, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadFile().Call(ctx, f.env, json.RawMessage(args("path", "inputs/sales.csv"))); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

func TestSpecs(t *testing.T) {
	reg, err := tool.NewRegistry(All()...)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range reg.Specs() {
		names = append(names, s.Name)
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(s.Schema, &schema); err != nil {
			t.Errorf("%s: schema: %v", s.Name, err)
		}
		if schema.Type != "object" || schema.Properties["path"] == nil || schema.Required[0] != "path" || s.Description == "" {
			t.Errorf("%s: spec %+v", s.Name, schema)
		}
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "list_dir,read_file,write_file" {
		t.Errorf("names %v", names)
	}
}
