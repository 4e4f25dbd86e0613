package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/fractal-harness/fractal/tool"
)

// MaxFileBytes bounds one harness file. The harness is instructions a
// model reads in full; a file past this size is a mistake (a pasted input,
// a runaway loop), and it would crowd out the work in every context.
const MaxFileBytes = 256 << 10

// LargeFraction is the share of changed lines past which a change to an
// existing file is large.
const LargeFraction = 0.30

// Write is one request to change a harness file.
type Write struct {
	Path    string // relative to the harness folder, e.g. "sop/draft.md"
	Reason  string // why, in a sentence; required, it is what the audit is for
	Author  string // the role or instance that asks, e.g. "meta"
	Content []byte // the whole new content
}

// AuditRecord is what the audit log keeps of one write, recorded before the
// file is written (DA-A5).
type AuditRecord struct {
	Path   string    `json:"path"`
	Size   int       `json:"size"`
	SHA256 string    `json:"sha256"` // hex digest of the new content
	Prev   string    `json:"prev_sha256,omitempty"`
	Reason string    `json:"reason"`
	Author string    `json:"author"`
	At     time.Time `json:"at"`
	// Large is set for a change that needs a harness revision review: a
	// new SOP, any change to done_criteria.yaml, or more than
	// LargeFraction of the lines of a file changed (a new file counts as
	// all lines changed). LargeWhy says which.
	Large    bool   `json:"large,omitempty"`
	LargeWhy string `json:"large_why,omitempty"`
}

// Writer is the only way to change harness files. It refuses what is not
// whitelisted, validates structured files, has the change audited before
// it touches the disk, and replaces files atomically. Writes are
// serialised, so a change is always measured against the file it replaces.
type Writer struct {
	root  string
	audit func(AuditRecord) error
	now   func() time.Time
	mu    sync.Mutex
}

// NewWriter returns a Writer for the harness folder root (an absolute
// path; it is created on the first write). audit is called with each
// record before the file is written; when it fails, nothing is written,
// so no change happens that the log does not hold. The engine's audit
// appends a harness_write event to the journal.
func NewWriter(root string, audit func(AuditRecord) error) *Writer {
	return &Writer{root: root, audit: audit, now: time.Now}
}

// WithClock sets the clock that stamps records, for tests and replay.
func (w *Writer) WithClock(now func() time.Time) *Writer {
	w.now = now
	return w
}

// Write validates wr, has it audited and writes it. A refusal the author
// can act on is a *tool.Error (codes E-HARNESS-PATH, E-HARNESS-REASON,
// E-HARNESS-CONTENT, E-CRITERIA-*, E-METHODOLOGY-TABLE); an audit failure
// or an IO fault is any other error. Either way, a refused write leaves
// the harness as it was.
//
// When the audit succeeded and the disk write then failed, the log holds a
// record of a change that did not happen; its SHA256 does not match the
// file, which is how a reader tells.
func (w *Writer) Write(ctx context.Context, wr Write) (AuditRecord, error) {
	if err := ctx.Err(); err != nil {
		return AuditRecord{}, err
	}
	if !filepath.IsAbs(w.root) {
		return AuditRecord{}, fmt.Errorf("harness: writer root %q is not an absolute path", w.root)
	}
	if strings.TrimSpace(wr.Author) == "" {
		return AuditRecord{}, errors.New("harness: a write needs an author")
	}
	if err := Allowed(wr.Path); err != nil {
		return AuditRecord{}, err
	}
	if strings.TrimSpace(wr.Reason) == "" {
		return AuditRecord{}, tool.Errorf(CodeReason, "say why you change %s in \"reason\": the change is audited and reviewed", wr.Path)
	}
	if err := ValidateFile(wr.Path, wr.Content); err != nil {
		return AuditRecord{}, err
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	root, err := openRoot(w.root)
	if err != nil {
		return AuditRecord{}, err
	}
	defer root.Close()
	old, existed, err := readOld(root, wr.Path)
	if err != nil {
		return AuditRecord{}, err
	}
	sum := sha256.Sum256(wr.Content)
	rec := AuditRecord{
		Path:   wr.Path,
		Size:   len(wr.Content),
		SHA256: hex.EncodeToString(sum[:]),
		Reason: wr.Reason,
		Author: wr.Author,
		At:     w.now(),
	}
	if existed {
		prev := sha256.Sum256(old)
		rec.Prev = hex.EncodeToString(prev[:])
	}
	rec.LargeWhy = largeWhy(wr.Path, old, existed, wr.Content)
	rec.Large = rec.LargeWhy != ""
	if w.audit != nil {
		if err := w.audit(rec); err != nil {
			return AuditRecord{}, fmt.Errorf("harness: audit of %s failed, nothing written: %w", wr.Path, err)
		}
	}
	if err := replace(root, wr.Path, wr.Content); err != nil {
		return rec, fmt.Errorf("harness: write %s: %w", wr.Path, err)
	}
	return rec, nil
}

// ValidateFile checks the content of a write to the harness file rel (already
// allowed): usable text of bounded size, and for structured files their
// structure. done_criteria.yaml must parse and pass CheckCriteria;
// methodology.md must open with a well-formed constraint table (whether
// the table agrees with the other files is for Precheck, since those
// files may not be written yet).
func ValidateFile(rel string, content []byte) error {
	switch {
	case len(content) > MaxFileBytes:
		return tool.Errorf(CodeContent, "%s is %d bytes; a harness file is at most %d bytes: keep instructions short and leave data in the inputs", rel, len(content), MaxFileBytes)
	case !utf8.Valid(content):
		return tool.Errorf(CodeContent, "%s is not valid UTF-8 text", rel)
	case bytes.IndexByte(content, 0) >= 0:
		return tool.Errorf(CodeContent, "%s contains a NUL byte; harness files are text", rel)
	case len(bytes.TrimSpace(content)) == 0:
		return tool.Errorf(CodeContent, "%s would be empty; write what it should say", rel)
	}
	var ps []Problem
	switch rel {
	case DoneCriteria:
		ps = criteriaProblems(content)
	case Methodology:
		_, _, ps = parseTable(string(content))
	}
	if len(ps) > 0 {
		msgs := make([]string, len(ps))
		for i, p := range ps {
			msgs[i] = p.Error()
		}
		return tool.Errorf(ps[0].Code, "%s was not written: %s", rel, strings.Join(msgs, "; "))
	}
	return nil
}

// largeWhy says why a change is large, or "" when it is not.
func largeWhy(rel string, old []byte, existed bool, content []byte) string {
	switch {
	case existed && bytes.Equal(old, content):
		return "" // a rewrite with the same content changes nothing
	case rel == DoneCriteria:
		return "the done criteria changed"
	case !existed && isSOP(rel):
		return "a new SOP"
	case !existed:
		return "a new file"
	}
	if f := changedFraction(lines(old), lines(content)); f > LargeFraction {
		return fmt.Sprintf("%.0f%% of the lines changed", f*100)
	}
	return ""
}

func lines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// maxDiffCells bounds the longest-common-subsequence table; past it the
// changed lines are counted as a multiset difference, which ignores moves.
const maxDiffCells = 1 << 22

// changedFraction is the share of lines changed between a and b: lines not
// in their longest common subsequence, a replaced line counting once, over
// the longer of the two.
func changedFraction(a, b []string) float64 {
	n := max(len(a), len(b))
	if n == 0 {
		return 0
	}
	// Common prefix and suffix are unchanged; most edits are local.
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	common := p + s
	if len(ma)*len(mb) <= maxDiffCells {
		common += lcs(ma, mb)
	} else {
		count := map[string]int{}
		for _, l := range ma {
			count[l]++
		}
		for _, l := range mb {
			if count[l] > 0 {
				count[l]--
				common++
			}
		}
	}
	return float64(n-common) / float64(n)
}

func lcs(a, b []string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// openRoot creates the harness folder if needed and opens it as an
// os.Root, so no path, symlink or race can carry a write out of it.
func openRoot(dir string) (*os.Root, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	return r, nil
}

// readOld returns the current content of rel, if it exists. A symlink or
// anything but a regular file is refused: a harness file is written in
// place, never through a link.
func readOld(root *os.Root, rel string) ([]byte, bool, error) {
	fi, err := root.Lstat(rel)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return nil, false, nil
	case errors.Is(err, syscall.ENOTDIR):
		return nil, false, tool.Errorf(CodePath, "a part of %q is a file, not a folder", rel)
	case err != nil:
		return nil, false, fmt.Errorf("harness: %s: %w", rel, err)
	case !fi.Mode().IsRegular():
		return nil, false, tool.Errorf(CodePath, "%q is not a regular file (a symlink or a folder); the harness is written only in place", rel)
	}
	b, err := root.ReadFile(rel)
	if err != nil {
		return nil, false, fmt.Errorf("harness: %s: %w", rel, err)
	}
	return b, true, nil
}

// replace writes content beside rel and renames it over rel, synced, so a
// crash or a concurrent reader sees the old file or the new one, never a
// mix; harness writes are rare, so the fsync costs nothing that matters.
func replace(root *os.Root, rel string, content []byte) error {
	dir, base := path.Split(rel)
	if dir != "" {
		if err := root.MkdirAll(strings.TrimSuffix(dir, "/"), 0o755); err != nil {
			return err
		}
	}
	tmp := dir + "." + base + ".tmp-" + rand.Text()[:10]
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, rel)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}
