package check

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/fractal-harness/fractal/contract"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// fixture builds a folder to check and, next to it, a folder outside it
// that symbolic links try to reach.
func fixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir, outside := filepath.Join(root, "work"), filepath.Join(root, "outside")
	write(t, filepath.Join(outside, "secret.txt"), strings.Repeat("secret line\n", 100))
	write(t, filepath.Join(outside, "meta.yaml"), "report:\n  owner: Mallory\n")
	write(t, filepath.Join(dir, "report.md"), "# Title\nline2\n"+strings.Repeat("more\n", 10))
	write(t, filepath.Join(dir, "empty.txt"), "")
	write(t, filepath.Join(dir, "noeol.txt"), "a\nb")
	write(t, filepath.Join(dir, "data.bin"), "\xff\xfe\x00\x01")
	write(t, filepath.Join(dir, "meta.yaml"), "report:\n  owner: Ada\n  draft:\n")
	write(t, filepath.Join(dir, "bad.yaml"), "a: 'unclosed\n")
	write(t, filepath.Join(dir, "charts", "a.png"), "png")
	write(t, filepath.Join(dir, "charts", "b.png"), "png")
	write(t, filepath.Join(dir, "charts", "c.txt"), "txt")
	write(t, filepath.Join(dir, "charts", "d.png", "inner.png"), "a folder named like a file")
	symlink(t, "a.png", filepath.Join(dir, "charts", "link.png"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(dir, "charts", "far.png"))
	symlink(t, "report.md", filepath.Join(dir, "inlink.md"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(dir, "escape.txt"))
	symlink(t, "../outside/meta.yaml", filepath.Join(dir, "escape.yaml"))
	symlink(t, outside, filepath.Join(dir, "escdir"))
	symlink(t, "charts", filepath.Join(dir, "chartlink"))
	symlink(t, "nowhere.txt", filepath.Join(dir, "dangling.txt"))
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

type outcome int

const (
	pass outcome = iota
	fail
	undecided // Err set
)

func (o outcome) String() string { return [...]string{"pass", "fail", "error"}[o] }

func outcomeOf(r contract.Result) outcome {
	switch {
	case r.Err != "":
		return undecided
	case r.Pass:
		return pass
	}
	return fail
}

// F-D2, F-D3: every kind passes, fails, and is undecided (never passed)
// when the file is missing, unreadable as required, or reached through a
// symbolic link that leaves the folder.
func TestEvaluateKinds(t *testing.T) {
	dir := fixture(t)
	for _, tc := range []struct {
		name string
		ch   contract.Check
		want outcome
		say  string // substring of Detail (pass, fail) or Err (error)
	}{
		{"exists", contract.Check{Kind: contract.FileExists, Path: "report.md"}, pass, "report.md exists (64 bytes)"},
		{"exists via ./", contract.Check{Kind: contract.FileExists, Path: "./charts/a.png"}, pass, "exists"},
		{"exists symlink inside", contract.Check{Kind: contract.FileExists, Path: "inlink.md"}, fail, "inlink.md is a symbolic link; file_exists needs a regular file"},
		{"exists folder", contract.Check{Kind: contract.FileExists, Path: "charts"}, fail, "charts is a folder"},
		{"exists pipe", contract.Check{Kind: contract.FileExists, Path: "pipe"}, fail, "named pipe"},
		{"exists through linked folder", contract.Check{Kind: contract.FileExists, Path: "chartlink/a.png"}, pass, "exists"},
		{"exists missing", contract.Check{Kind: contract.FileExists, Path: "missing.md"}, undecided, "missing.md does not exist"},
		{"exists dangling", contract.Check{Kind: contract.FileExists, Path: "dangling.txt"}, undecided, "symbolic link to something that does not exist"},
		{"exists escaping", contract.Check{Kind: contract.FileExists, Path: "escape.txt"}, undecided, "leads outside the folder"},
		{"exists escaping folder", contract.Check{Kind: contract.FileExists, Path: "escdir/secret.txt"}, undecided, "leads outside the folder"},

		{"lines", contract.Check{Kind: contract.FileMinLines, Path: "report.md", Min: 12}, pass, "12 lines, needs 12"},
		{"lines short", contract.Check{Kind: contract.FileMinLines, Path: "report.md", Min: 13}, fail, "12 lines, needs 13"},
		{"lines no final newline", contract.Check{Kind: contract.FileMinLines, Path: "noeol.txt", Min: 2}, pass, "2 lines"},
		{"lines empty file", contract.Check{Kind: contract.FileMinLines, Path: "empty.txt", Min: 1}, fail, "0 lines, needs 1"},
		{"lines through inner link", contract.Check{Kind: contract.FileMinLines, Path: "inlink.md", Min: 12}, pass, "12 lines"},
		{"lines missing", contract.Check{Kind: contract.FileMinLines, Path: "missing.md", Min: 1}, undecided, "does not exist"},
		{"lines folder", contract.Check{Kind: contract.FileMinLines, Path: "charts", Min: 1}, undecided, "charts is a folder, not a file"},
		{"lines pipe", contract.Check{Kind: contract.FileMinLines, Path: "pipe", Min: 1}, undecided, "named pipe"},
		{"lines escaping", contract.Check{Kind: contract.FileMinLines, Path: "escape.txt", Min: 1}, undecided, "leads outside the folder"},

		{"bytes", contract.Check{Kind: contract.FileMinBytes, Path: "report.md", Min: 64}, pass, "64 bytes, needs 64"},
		{"bytes short", contract.Check{Kind: contract.FileMinBytes, Path: "report.md", Min: 65}, fail, "64 bytes, needs 65"},
		{"bytes empty", contract.Check{Kind: contract.FileMinBytes, Path: "empty.txt", Min: 1}, fail, "0 bytes"},
		{"bytes missing", contract.Check{Kind: contract.FileMinBytes, Path: "missing.md", Min: 1}, undecided, "does not exist"},
		{"bytes escaping", contract.Check{Kind: contract.FileMinBytes, Path: "escape.txt", Min: 1}, undecided, "leads outside the folder"},

		{"yaml", contract.Check{Kind: contract.YAMLFieldPresent, Path: "meta.yaml", Field: "report.owner"}, pass, "report.owner is present"},
		{"yaml null", contract.Check{Kind: contract.YAMLFieldPresent, Path: "meta.yaml", Field: "report.draft"}, fail, "report.draft is empty (null)"},
		{"yaml absent", contract.Check{Kind: contract.YAMLFieldPresent, Path: "meta.yaml", Field: "report.title"}, fail, "report has no key title"},
		{"yaml invalid", contract.Check{Kind: contract.YAMLFieldPresent, Path: "bad.yaml", Field: "a"}, undecided, "bad.yaml is not valid YAML: 1:4"},
		{"yaml binary", contract.Check{Kind: contract.YAMLFieldPresent, Path: "data.bin", Field: "a"}, undecided, "not valid YAML"},
		{"yaml missing", contract.Check{Kind: contract.YAMLFieldPresent, Path: "missing.yaml", Field: "a"}, undecided, "does not exist"},
		{"yaml escaping", contract.Check{Kind: contract.YAMLFieldPresent, Path: "escape.yaml", Field: "report.owner"}, undecided, "leads outside the folder"},

		{"dir", contract.Check{Kind: contract.DirMinFiles, Path: "charts", Min: 2, Glob: "*.png"}, pass, `2 files matching "*.png" in charts, needs 2`},
		// link.png (a link), far.png (a link out) and d.png (a folder) do not count.
		{"dir short", contract.Check{Kind: contract.DirMinFiles, Path: "charts", Min: 3, Glob: "*.png"}, fail, `2 files matching "*.png" in charts, needs 3`},
		{"dir default glob", contract.Check{Kind: contract.DirMinFiles, Path: "charts", Min: 3}, pass, `3 files matching "*"`},
		{"dir whole folder", contract.Check{Kind: contract.DirMinFiles, Path: ".", Min: 6}, pass, "in the folder"},
		{"dir through inner link", contract.Check{Kind: contract.DirMinFiles, Path: "chartlink", Min: 2, Glob: "?.png"}, pass, "2 files"},
		{"dir missing", contract.Check{Kind: contract.DirMinFiles, Path: "plots", Min: 1}, undecided, "plots does not exist"},
		{"dir is a file", contract.Check{Kind: contract.DirMinFiles, Path: "report.md", Min: 1}, undecided, "report.md is a file, not a folder"},
		{"dir escaping", contract.Check{Kind: contract.DirMinFiles, Path: "escdir", Min: 1}, undecided, "leads outside the folder"},

		{"contains", contract.Check{Kind: contract.Contains, Path: "report.md", Text: "line2"}, pass, `found "line2" at line 2`},
		{"contains absent", contract.Check{Kind: contract.Contains, Path: "report.md", Text: "Risks"}, fail, `report.md does not contain "Risks"`},
		{"contains binary", contract.Check{Kind: contract.Contains, Path: "data.bin", Text: "x"}, undecided, "not a text file"},
		{"contains pipe", contract.Check{Kind: contract.Contains, Path: "pipe", Text: "x"}, undecided, "named pipe"},
		{"contains missing", contract.Check{Kind: contract.Contains, Path: "missing.md", Text: "x"}, undecided, "does not exist"},
		{"contains escaping", contract.Check{Kind: contract.Contains, Path: "escape.txt", Text: "secret"}, undecided, "leads outside the folder"},

		{"matches", contract.Check{Kind: contract.Matches, Path: "report.md", Text: `(?m)^# \w+$`}, pass, `matched "# Title" at line 1`},
		{"matches absent", contract.Check{Kind: contract.Matches, Path: "report.md", Text: `^## `}, fail, "nothing in report.md matches"},
		{"matches binary", contract.Check{Kind: contract.Matches, Path: "data.bin", Text: "."}, undecided, "not a text file"},
		{"matches missing", contract.Check{Kind: contract.Matches, Path: "missing.md", Text: "."}, undecided, "does not exist"},
		{"matches escaping", contract.Check{Kind: contract.Matches, Path: "escape.txt", Text: "secret"}, undecided, "leads outside the folder"},

		// F-D3: a check that is invalid when evaluated is undecided, even
		// if someone built the contract by hand around Validate.
		{"invalid path", contract.Check{Kind: contract.FileExists, Path: "../outside/secret.txt"}, undecided, `".."`},
		{"absolute path", contract.Check{Kind: contract.FileMinBytes, Path: "/etc/passwd", Min: 1}, undecided, "absolute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := contract.New("test", []contract.Check{tc.ch})
			e := Evaluate(context.Background(), c, dir, Options{})
			if len(e.Results) != 1 {
				t.Fatalf("%d results", len(e.Results))
			}
			r := e.Results[0]
			if got := outcomeOf(r); got != tc.want {
				t.Fatalf("outcome %v, want %v: %+v", got, tc.want, r)
			}
			text := r.Detail
			if tc.want == undecided {
				text = r.Err
			}
			if !strings.Contains(text, tc.say) {
				t.Fatalf("result %+v does not say %q", r, tc.say)
			}
			if tc.want != undecided && r.Detail == "" {
				t.Fatal("no detail")
			}
		})
	}
}

func TestEvaluateReadLimit(t *testing.T) {
	dir := fixture(t)
	c := contract.New("limit", []contract.Check{{Kind: contract.Contains, Path: "report.md", Text: "Title"}})
	r := Evaluate(context.Background(), c, dir, Options{MaxReadBytes: 10}).Results[0]
	if outcomeOf(r) != undecided || !strings.Contains(r.Err, "64 bytes, more than the 10") {
		t.Fatalf("%+v", r)
	}
}

// F-D2, F-D3: evidence is bound to the contract, and sat follows from it
// mechanically: all checks true, then one made false by changing the folder.
func TestEvaluateThenSat(t *testing.T) {
	dir := fixture(t)
	c := contract.New("a report with charts", []contract.Check{
		{Kind: contract.FileExists, Path: "report.md"},
		{Kind: contract.FileMinLines, Path: "report.md", Min: 10},
		{Kind: contract.DirMinFiles, Path: "charts", Min: 2, Glob: "*.png"},
		{Kind: contract.Contains, Path: "report.md", Text: "# Title"},
		{Kind: contract.Rubric, Text: "The report is clear."},
	})
	opt := Options{Rubric: func(ctx context.Context, i int, ch contract.Check) (bool, string, error) {
		return true, "clear enough", nil
	}}
	e := Evaluate(context.Background(), c, dir, opt)
	if err := contract.Bound(c, e); err != nil {
		t.Fatalf("evidence not bound: %v", err)
	}
	if !contract.Sat(c, e) {
		t.Fatalf("not satisfied: %+v", e.Results)
	}
	if e.Results[4].Rationale != "clear enough" {
		t.Fatalf("rationale lost: %+v", e.Results[4])
	}
	if !reflect.DeepEqual(e.Artifacts, Artifacts(dir)) || len(e.Artifacts) == 0 {
		t.Fatalf("artifacts = %v", e.Artifacts)
	}

	write(t, filepath.Join(dir, "report.md"), "# Title\n")
	e = Evaluate(context.Background(), c, dir, opt)
	if contract.Sat(c, e) {
		t.Fatal("satisfied after the report was cut to one line")
	}
	if got := contract.Failed(e); !reflect.DeepEqual(got, []int{1}) {
		t.Fatalf("failed = %v, want [1]", got)
	}

	// F-D3: the evidence proves this contract only.
	other := contract.New("another", c.Checks)
	if contract.Sat(other, Evaluate(context.Background(), c, dir, opt)) {
		t.Fatal("evidence for one contract satisfied another")
	}
}

// F-T4: a contract changed after it was made is not evaluated at all.
func TestEvaluateTamperedContract(t *testing.T) {
	dir := fixture(t)
	c := contract.New("x", []contract.Check{{Kind: contract.FileMinLines, Path: "report.md", Min: 1000}})
	c.Checks[0].Min = 1
	e := Evaluate(context.Background(), c, dir, Options{})
	if e.ContractID != c.ID || outcomeOf(e.Results[0]) != undecided || !strings.Contains(e.Results[0].Err, "changed after it was made") {
		t.Fatalf("%+v", e)
	}
	if contract.Sat(c, e) {
		t.Fatal("a tampered contract was satisfied")
	}
	unaddressed := contract.Contract{Intent: "x", Checks: c.Checks}
	if r := Evaluate(context.Background(), unaddressed, dir, Options{}).Results[0]; !strings.Contains(r.Err, "has no id") {
		t.Fatalf("%+v", r)
	}
}

func TestEvaluateRubric(t *testing.T) {
	dir := fixture(t)
	c := contract.New("x", []contract.Check{{Kind: contract.FileExists, Path: "report.md"}, {Kind: contract.Rubric, Text: "Good."}})
	for _, tc := range []struct {
		name   string
		rubric func(context.Context, int, contract.Check) (bool, string, error)
		want   outcome
		say    string
	}{
		{"no reviewer", nil, undecided, "rubric checks are graded by the Reviewer; no reviewer was given"},
		{"passed", func(_ context.Context, i int, ch contract.Check) (bool, string, error) {
			if i != 1 || ch.Text != "Good." {
				return false, "", errors.New("wrong check")
			}
			return true, "it is good", nil
		}, pass, "passed by the reviewer"},
		{"failed", func(context.Context, int, contract.Check) (bool, string, error) { return false, "too vague", nil }, fail, "failed by the reviewer"},
		// Fails closed: an error is never a pass, whatever pass says.
		{"reviewer error", func(context.Context, int, contract.Check) (bool, string, error) {
			return true, "", errors.New("model unavailable")
		}, undecided, "the reviewer could not grade it: model unavailable"},
		{"reviewer panics", func(context.Context, int, contract.Check) (bool, string, error) { panic("boom") }, undecided, "internal error while checking: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Evaluate(context.Background(), c, dir, Options{Rubric: tc.rubric})
			r := e.Results[1]
			text := r.Detail
			if tc.want == undecided {
				text = r.Err
			}
			if outcomeOf(r) != tc.want || !strings.Contains(text, tc.say) {
				t.Fatalf("%+v, want %v saying %q", r, tc.want, tc.say)
			}
			if outcomeOf(e.Results[0]) != pass {
				t.Fatalf("the structural check was affected: %+v", e.Results[0])
			}
		})
	}
}

func TestEvaluateMissingFolder(t *testing.T) {
	c := contract.New("x", []contract.Check{{Kind: contract.FileExists, Path: "a"}, {Kind: contract.DirMinFiles, Path: ".", Min: 1}})
	e := Evaluate(context.Background(), c, filepath.Join(t.TempDir(), "gone"), Options{})
	for _, r := range e.Results {
		if outcomeOf(r) != undecided || !strings.Contains(r.Err, "does not exist") {
			t.Fatalf("%+v", r)
		}
	}
	if e.Artifacts != nil || len(e.Results) != 2 || e.Results[1].Check != 1 {
		t.Fatalf("%+v", e)
	}
}

// The folder itself may be reached through a link; containment is judged
// against where it really is.
func TestEvaluateFolderThroughLink(t *testing.T) {
	dir := fixture(t)
	link := filepath.Join(t.TempDir(), "link")
	symlink(t, dir, link)
	c := contract.New("x", []contract.Check{{Kind: contract.FileMinLines, Path: "report.md", Min: 12}, {Kind: contract.FileExists, Path: "escape.txt"}})
	e := Evaluate(context.Background(), c, link, Options{})
	if outcomeOf(e.Results[0]) != pass || outcomeOf(e.Results[1]) != undecided {
		t.Fatalf("%+v", e.Results)
	}
	if !reflect.DeepEqual(e.Artifacts, Artifacts(dir)) {
		t.Fatalf("artifacts through the link differ: %v", e.Artifacts)
	}
}

func TestEvaluateCancelled(t *testing.T) {
	dir := fixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := contract.New("x", []contract.Check{{Kind: contract.FileExists, Path: "report.md"}})
	r := Evaluate(ctx, c, dir, Options{}).Results[0]
	if outcomeOf(r) != undecided || !strings.Contains(r.Err, "not evaluated: context canceled") {
		t.Fatalf("%+v", r)
	}
}

func TestArtifacts(t *testing.T) {
	dir := fixture(t)
	want := []string{
		"bad.yaml", "charts/a.png", "charts/b.png", "charts/c.txt", "charts/d.png/inner.png",
		"data.bin", "empty.txt", "meta.yaml", "noeol.txt", "report.md",
	}
	if got := Artifacts(dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("Artifacts = %v\nwant %v", got, want)
	}
	if got := Artifacts(filepath.Join(dir, "nope")); got != nil {
		t.Fatalf("Artifacts of a missing folder = %v", got)
	}
	if got := Artifacts(filepath.Join(dir, "report.md")); got != nil {
		t.Fatalf("Artifacts of a file = %v", got)
	}
}

func TestStructural(t *testing.T) {
	c := contract.New("x", []contract.Check{
		{Kind: contract.Rubric, Text: "a"},
		{Kind: contract.FileExists, Path: "a"},
		{Kind: contract.Rubric, Text: "b"},
		{Kind: contract.Script, Path: "t.sh", Interpreter: "sh"},
	})
	if got := Structural(c); !reflect.DeepEqual(got, []int{1, 3}) {
		t.Fatalf("Structural = %v", got)
	}
}
