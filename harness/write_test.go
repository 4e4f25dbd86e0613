package harness

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fractal-harness/fractal/tool"
)

func wantToolCode(t *testing.T, err error, code string) {
	t.Helper()
	te, ok := tool.AsError(err)
	if !ok || te.Code != code {
		t.Fatalf("err = %v, want a tool error %s", err, code)
	}
}

// DA-B3: the whitelist of writable harness paths.
func TestAllowed(t *testing.T) {
	for _, p := range []string{
		"methodology.md", "done_criteria.yaml", "worker_prompt_taskpart.md",
		"sop/draft.md", "sop/01-collect_data.md", "tools/scripts/count.py", "tools/scripts/fetch-2.sh",
	} {
		if err := Allowed(p); err != nil {
			t.Errorf("%s refused: %v", p, err)
		}
	}
	for _, p := range []string{
		"", "notes.md", "harness/methodology.md", "./methodology.md", "Methodology.md",
		"sop/Draft.md", "sop/draft.txt", "sop/.md", "sop/a/b.md", "sop/-x.md", "sop/a b.md", "sop//a.md", "sop/../x.md",
		"tools/scripts/x.js", "tools/x.py", "tools/scripts/-rf.sh", "tools/scripts/a.py/b.py",
		"sop/" + strings.Repeat("a", 65) + ".md", "/methodology.md", "done_criteria.yml",
	} {
		err := Allowed(p)
		if err == nil {
			t.Errorf("%q allowed", p)
			continue
		}
		wantToolCode(t, err, CodePath)
	}
	if err := Allowed("harness/sop/a.md"); !strings.Contains(err.Error(), "drop the leading") {
		t.Errorf("no hint: %v", err)
	}
}

// DA-A5: the pre-tool hook refuses every write under harness/ by an
// ordinary tool, however the path is spelled.
func TestGuardRefusesDirectHarnessWrites(t *testing.T) {
	for _, p := range []string{
		"harness", "harness/", "harness/methodology.md", "harness/sop/new.md", "./harness/x",
		"work/../harness/done_criteria.yaml", "Harness/methodology.md", `harness\methodology.md`, "harness//x", "/harness/x",
	} {
		err := Guard(p)
		if err == nil {
			t.Errorf("%q not refused", p)
			continue
		}
		wantToolCode(t, err, CodeDirect)
	}
	for _, p := range []string{"work/root/harness/x.md", "work/root/notes.md", "inputs/harness.md", "harnesses/x", "deliverable/harness"} {
		if err := Guard(p); err != nil {
			t.Errorf("%q refused: %v", p, err)
		}
	}
}

type auditLog struct {
	recs []AuditRecord
	fail error
	// seen is the file's content as the audit saw it, to show the audit
	// runs before the write.
	seen []string
	dir  string
}

func (a *auditLog) record(r AuditRecord) error {
	b, err := os.ReadFile(filepath.Join(a.dir, r.Path))
	if err != nil {
		a.seen = append(a.seen, "<absent>")
	} else {
		a.seen = append(a.seen, string(b))
	}
	if a.fail != nil {
		return a.fail
	}
	a.recs = append(a.recs, r)
	return nil
}

func newWriter(t *testing.T) (*Writer, *auditLog) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "harness")
	log := &auditLog{dir: dir}
	at := time.Date(2025, 7, 1, 9, 0, 0, 0, time.UTC)
	w := NewWriter(dir, log.record).WithClock(func() time.Time { at = at.Add(time.Minute); return at })
	return w, log
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Lstat(p)
	return err == nil
}

// DA-A5: a write is audited before the file changes, and the record says
// what was written.
func TestWriterAuditsBeforeWriting(t *testing.T) {
	w, log := newWriter(t)
	ctx := context.Background()
	content := harnessFiles()["sop/draft.md"]
	rec, err := w.Write(ctx, Write{Path: "sop/draft.md", Reason: "first draft procedure", Author: "meta", Content: []byte(content)})
	if err != nil {
		t.Fatal(err)
	}
	if len(log.recs) != 1 || log.seen[0] != "<absent>" {
		t.Fatalf("audit did not run first: %v %q", log.recs, log.seen)
	}
	if rec != log.recs[0] || rec.Path != "sop/draft.md" || rec.Size != len(content) || len(rec.SHA256) != 64 || rec.Prev != "" ||
		rec.Author != "meta" || rec.Reason != "first draft procedure" || !rec.Large || rec.LargeWhy != "a new SOP" || rec.At.IsZero() {
		t.Errorf("record %+v", rec)
	}
	if b, _ := os.ReadFile(filepath.Join(log.dir, "sop/draft.md")); string(b) != content {
		t.Errorf("file = %q", b)
	}

	// A second write: the audit sees the old content on disk.
	next := content + "3. Proofread.\n"
	rec2, err := w.Write(ctx, Write{Path: "sop/draft.md", Reason: "add proofreading", Author: "meta", Content: []byte(next)})
	if err != nil {
		t.Fatal(err)
	}
	if log.seen[1] != content || rec2.Prev != rec.SHA256 || rec2.Large || !rec2.At.After(rec.At) {
		t.Errorf("second record %+v, audit saw %q", rec2, log.seen[1])
	}
	if entries, _ := os.ReadDir(filepath.Join(log.dir, "sop")); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// DA-A5: when the audit fails, nothing is written.
func TestWriterWritesNothingWhenAuditFails(t *testing.T) {
	w, log := newWriter(t)
	log.fail = errors.New("journal is read-only")
	_, err := w.Write(context.Background(), Write{Path: WorkerPrompt, Reason: "r", Author: "meta", Content: []byte("x [C1]\n")})
	if err == nil || !strings.Contains(err.Error(), "journal is read-only") {
		t.Fatalf("err = %v", err)
	}
	if exists(t, filepath.Join(log.dir, WorkerPrompt)) {
		t.Fatal("file written although the audit failed")
	}
}

// DA-B3: a path outside the whitelist is refused before the audit, and
// nothing is written.
func TestWriterRefusesNonWhitelisted(t *testing.T) {
	w, log := newWriter(t)
	for _, p := range []string{"notes.md", "../escape.md", "tools/run.py", "sop/../methodology.md"} {
		_, err := w.Write(context.Background(), Write{Path: p, Reason: "r", Author: "meta", Content: []byte("x\n")})
		wantToolCode(t, err, CodePath)
	}
	if len(log.seen) != 0 {
		t.Errorf("audit called for refused writes: %v", log.seen)
	}
	if exists(t, log.dir) {
		t.Error("harness folder created by refused writes")
	}
}

// DA-B1 / DA-B3: an invalid done_criteria.yaml, or one with a check that
// can never fail, is refused and nothing is written.
func TestWriterRefusesInvalidCriteria(t *testing.T) {
	w, log := newWriter(t)
	ctx := context.Background()
	good := harnessFiles()[DoneCriteria]
	if _, err := w.Write(ctx, Write{Path: DoneCriteria, Reason: "first criteria", Author: "meta", Content: []byte(good)}); err != nil {
		t.Fatal(err)
	}
	for code, bad := range map[string]string{
		CodeCriteria:     "- kind: file_min_lines\n  path: brief.md\n  mn: 3\n",
		CodeVacuous:      "- {kind: matches, path: brief.md, text: '.*'}\n",
		CodeCriteriaKind: "- {kind: rubric, text: good}\n",
	} {
		_, err := w.Write(ctx, Write{Path: DoneCriteria, Reason: "loosen", Author: "meta", Content: []byte(bad)})
		wantToolCode(t, err, code)
	}
	if len(log.recs) != 1 || len(log.seen) != 1 {
		t.Errorf("audit called for refused writes: %d", len(log.seen))
	}
	if b, _ := os.ReadFile(filepath.Join(log.dir, DoneCriteria)); string(b) != good {
		t.Errorf("criteria changed: %q", b)
	}
}

// DA-A5: the Writer refuses writes without a reason, unusable content, a
// methodology without its table, and writes through a symlink; nothing is
// audited or written.
func TestWriterRefusals(t *testing.T) {
	w, log := newWriter(t)
	ctx := context.Background()
	_, err := w.Write(ctx, Write{Path: WorkerPrompt, Author: "meta", Content: []byte("x")})
	wantToolCode(t, err, CodeReason)
	for _, c := range []string{"", " \n", "a\x00b", "\xff", strings.Repeat("a", MaxFileBytes+1)} {
		_, err = w.Write(ctx, Write{Path: WorkerPrompt, Reason: "r", Author: "meta", Content: []byte(c)})
		wantToolCode(t, err, CodeContent)
	}
	_, err = w.Write(ctx, Write{Path: Methodology, Reason: "r", Author: "meta", Content: []byte("# Method\n\nNo table here.\n")})
	wantToolCode(t, err, CodeTable)
	if _, err = w.Write(ctx, Write{Path: WorkerPrompt, Reason: "r", Content: []byte("x")}); err == nil {
		t.Error("a write without an author was accepted")
	}
	if len(log.seen) != 0 {
		t.Error("audit called for refused writes")
	}
	// A symlink is never written through.
	if err := os.MkdirAll(log.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(log.dir, WorkerPrompt)); err != nil {
		t.Fatal(err)
	}
	_, err = w.Write(ctx, Write{Path: WorkerPrompt, Reason: "r", Author: "meta", Content: []byte("pwned")})
	wantToolCode(t, err, CodePath)
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Errorf("wrote through a symlink: %q", b)
	}
	ctxDone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.Write(ctxDone, Write{Path: WorkerPrompt, Reason: "r", Author: "meta", Content: []byte("x")}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// DA-A5: which changes are large.
func TestLargeChanges(t *testing.T) {
	base := strings.Repeat("line\n", 7) + "a\nb\nc\n"
	for _, tc := range []struct {
		name, rel   string
		old         *string
		content     string
		large       bool
		whyContains string
	}{
		{"new SOP", "sop/x.md", nil, "x\n", true, "new SOP"},
		{"new prompt", WorkerPrompt, nil, "x\n", true, "new file"},
		{"criteria changed", DoneCriteria, ptr("a\n"), "b\n", true, "done criteria"},
		{"criteria unchanged", DoneCriteria, ptr("a\n"), "a\n", false, ""},
		{"three of ten lines", Methodology, &base, strings.Repeat("line\n", 7) + "x\ny\nz\n", false, ""},
		{"four of ten lines", Methodology, &base, strings.Repeat("line\n", 6) + "w\nx\ny\nz\n", true, "40%"},
		{"appended half", Methodology, ptr("a\nb\n"), "a\nb\nc\n", true, "33%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var old []byte
			if tc.old != nil {
				old = []byte(*tc.old)
			}
			why := largeWhy(tc.rel, old, tc.old != nil, []byte(tc.content))
			if (why != "") != tc.large || !strings.Contains(why, tc.whyContains) {
				t.Errorf("largeWhy = %q", why)
			}
			if NeedsRevisionReview(AuditRecord{Large: why != ""}) != tc.large {
				t.Error("NeedsRevisionReview disagrees")
			}
		})
	}
	// Large files fall back to counting lines as a multiset.
	a := make([]string, 3000)
	b := make([]string, 3000)
	for i := range a {
		a[i] = strings.Repeat("x", i%7) + string(rune('a'+i%26))
	}
	for i := range b {
		b[i] = a[len(a)-1-i] // every line moved
	}
	b[0] = "changed"
	if f := changedFraction(a, b); f > 0.01 {
		t.Errorf("multiset fallback: %v", f)
	}
}

func ptr(s string) *string { return &s }

// DA-A5: the harness_write tool is the audited path for Meta.
func TestWriteTool(t *testing.T) {
	w, log := newWriter(t)
	tl := w.Tool("meta")
	if tl.Spec().Name != ToolName || !json.Valid(tl.Spec().Schema) {
		t.Fatalf("spec %+v", tl.Spec())
	}
	args, _ := json.Marshal(map[string]string{"path": "sop/draft.md", "content": "1. Draft. [C1]\n", "reason": "draft steps"})
	res, err := tl.Call(context.Background(), tool.Env{}, args)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "harness/sop/draft.md") || !strings.Contains(res.Content, "large change") ||
		!strings.Contains(res.Content, "Tell the worker") || len(res.Writes) != 0 {
		t.Errorf("result %+v", res)
	}
	if len(log.recs) != 1 || log.recs[0].Author != "meta" {
		t.Errorf("audit %+v", log.recs)
	}
	for _, bad := range []string{`{"path": "sop/x.md", "content": "x"}`, `{"path": "sop/x.md", "content": "x", "reason": "r", "append": true}`, `[]`, `{"path":"sop/x.md","content":"x","reason":"r"} {}`} {
		_, err := tl.Call(context.Background(), tool.Env{}, json.RawMessage(bad))
		wantToolCode(t, err, CodeArgs)
	}
	args, _ = json.Marshal(map[string]string{"path": "../x.md", "content": "x", "reason": "r"})
	_, err = tl.Call(context.Background(), tool.Env{}, args)
	wantToolCode(t, err, CodePath)
}
