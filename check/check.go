// Package check evaluates a contract's checks against a real folder and
// produces the evidence for it (F-D2), which contract.Sat then judges
// mechanically (F-D3).
//
// Every result is decided or it is an error: a check that cannot be decided
// (a missing or unreadable file, a path that leads outside the folder, a
// script that timed out) has Err set and Pass false, so nothing undecidable
// ever counts as passed. Paths are checked again here, not only when the
// contract was made, and resolved through symbolic links so that a link
// cannot make a file outside the folder count.
package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/fractal-harness/fractal/contract"
)

// Defaults for Options.
const (
	DefaultScriptTimeout = 1800 * time.Second
	MaxScriptTimeout     = time.Duration(contract.MaxTimeoutSec) * time.Second
	DefaultMaxReadBytes  = 32 << 20
)

// Options configures Evaluate. The zero value is usable.
type Options struct {
	// Interpreters a script check may use here, by name; empty means
	// contract.AllowedInterpreters. It can narrow that list, not widen it:
	// a contract naming anything else does not validate.
	Interpreters []string
	// DefaultScriptTimeout applies to a script check without timeout_sec;
	// 0 means 1800s.
	DefaultScriptTimeout time.Duration
	// MaxScriptTimeout caps every script's timeout; 0 means 3600s.
	MaxScriptTimeout time.Duration
	// Env names environment variables passed to scripts in addition to
	// PATH, HOME, LANG, LC_ALL, TZ and TMPDIR. Nothing else of the
	// harness's environment (API keys, tokens) reaches a script.
	Env []string
	// Rubric grades a rubric check (the Reviewer role). Without it, rubric
	// checks are undecided. An error fails the check closed.
	Rubric func(ctx context.Context, index int, ch contract.Check) (pass bool, rationale string, err error)
	// MaxReadBytes bounds the files contains, matches and
	// yaml_field_present read; 0 means 32 MiB. A larger file is an error.
	MaxReadBytes int64
}

func (o Options) withDefaults() Options {
	if len(o.Interpreters) == 0 {
		o.Interpreters = contract.AllowedInterpreters
	}
	if o.MaxScriptTimeout <= 0 {
		o.MaxScriptTimeout = MaxScriptTimeout
	}
	if o.DefaultScriptTimeout <= 0 {
		o.DefaultScriptTimeout = DefaultScriptTimeout
	}
	if o.MaxReadBytes <= 0 {
		o.MaxReadBytes = DefaultMaxReadBytes
	}
	return o
}

// Evaluate checks c against the folder dir and returns the evidence: one
// result per check, in order, bound to c.ID, with the folder's files as
// artifacts (listed before any script runs, so they are what was handed
// in). It never panics. A contract whose id does not match its content was
// changed after it was made (or never had an id); none of its checks is
// evaluated and every result is an error, so its evidence cannot satisfy
// it.
func Evaluate(ctx context.Context, c contract.Contract, dir string, opt Options) contract.Evidence {
	opt = opt.withDefaults()
	e := contract.Evidence{
		ContractID: c.ID,
		Results:    make([]contract.Result, len(c.Checks)),
		Artifacts:  Artifacts(dir),
	}
	var refused string
	switch {
	case c.ID == "":
		refused = "the contract has no id; make contracts with contract.New or contract.Parse"
	case !c.IDValid():
		refused = "the contract's id does not match its content: it was changed after it was made, so its checks are not evaluated"
	}
	f, ferr := openFolder(dir)
	if f != nil {
		defer f.root.Close()
	}
	for i, ch := range c.Checks {
		var r contract.Result
		switch {
		case refused != "":
			r.Err = refused
		case ctx.Err() != nil:
			r.Err = "not evaluated: " + context.Cause(ctx).Error()
		default:
			r = evaluate(ctx, i, ch, f, ferr, opt)
		}
		r.Check = i
		if r.Err != "" {
			r.Pass = false
		}
		e.Results[i] = r
	}
	return e
}

// Structural returns the indexes of c's checks that are decided from the
// folder alone, that is every check but rubric ones.
func Structural(c contract.Contract) []int {
	var out []int
	for i, ch := range c.Checks {
		if ch.Kind != contract.Rubric {
			out = append(out, i)
		}
	}
	return out
}

// Artifacts lists the regular files under dir as sorted slash-separated
// paths relative to it. Symbolic links are not followed or listed. It
// returns nil when dir cannot be walked completely.
func Artifacts(dir string) []string {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return nil
	}
	var out []string
	err = filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(real, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil
	}
	slices.Sort(out)
	return out
}

func failed(format string, args ...any) contract.Result {
	return contract.Result{Err: fmt.Sprintf(format, args...)}
}

func evaluate(ctx context.Context, i int, ch contract.Check, f *folder, ferr error, opt Options) (r contract.Result) {
	defer func() {
		// A bug here, or in a Rubric callback, must cost one check, not
		// the evaluation.
		if p := recover(); p != nil {
			r = failed("internal error while checking: %v", p)
		}
	}()
	if err := ch.Validate(); err != nil {
		return failed("invalid check: %v", err)
	}
	if ch.Kind == contract.Rubric {
		return rubric(ctx, i, ch, opt)
	}
	if ferr != nil {
		return failed("%v", ferr)
	}
	switch ch.Kind {
	case contract.FileExists:
		return fileExists(f, ch)
	case contract.FileMinLines:
		return fileMinLines(ctx, f, ch)
	case contract.FileMinBytes:
		return fileMinBytes(f, ch)
	case contract.YAMLFieldPresent:
		return yamlFieldPresent(f, ch, opt)
	case contract.DirMinFiles:
		return dirMinFiles(f, ch)
	case contract.Contains, contract.Matches:
		return text(f, ch, opt)
	case contract.Script:
		return script(ctx, f, ch, opt)
	}
	return failed("unknown kind %q", ch.Kind)
}

func rubric(ctx context.Context, i int, ch contract.Check, opt Options) contract.Result {
	if opt.Rubric == nil {
		return failed("rubric checks are graded by the Reviewer; no reviewer was given")
	}
	pass, rationale, err := opt.Rubric(ctx, i, ch)
	if err != nil {
		return contract.Result{Err: "the reviewer could not grade it: " + err.Error(), Rationale: rationale}
	}
	r := contract.Result{Pass: pass, Rationale: rationale, Detail: "failed by the reviewer"}
	if pass {
		r.Detail = "passed by the reviewer"
	}
	return r
}

// folder is the folder a contract is evaluated in, with its real location
// (symbolic links resolved) and an os.Root that refuses, at open time, to
// leave it: the EvalSymlinks check explains an escape, the Root makes
// sure a link swapped in between cannot cause one.
type folder struct {
	real string
	root *os.Root
}

func openFolder(dir string) (*folder, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("the folder %s cannot be located: %v", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("the folder %s does not exist", dir)
		}
		return nil, fmt.Errorf("the folder %s cannot be opened: %v", dir, reason(err))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("the folder %s cannot be opened: %v", dir, reason(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("the folder %s cannot be opened: %v", dir, reason(err))
	}
	return &folder{real: real, root: root}, nil
}

// reason is the cause of a file-system error without the operation and
// absolute path Go puts in front of it; messages name the path themselves.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// resolve re-validates the check path p and resolves it through symbolic
// links, returning it relative to the folder. A missing target or one
// outside the folder is an error: neither can be decided by looking inside.
func (f *folder) resolve(p string, isDir bool) (string, error) {
	validate := contract.ValidatePath
	if isDir {
		validate = contract.ValidateDirPath
	}
	if err := validate(p); err != nil {
		return "", err
	}
	target := filepath.Join(f.real, filepath.FromSlash(p))
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if fi, lerr := os.Lstat(target); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return "", fmt.Errorf("%s is a symbolic link to something that does not exist", p)
			}
			return "", fmt.Errorf("%s does not exist", p)
		}
		return "", fmt.Errorf("%s cannot be read: %v", p, reason(err))
	}
	rel, err := filepath.Rel(f.real, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s leads outside the folder (to %s) through a symbolic link; only what is inside the folder counts", p, real)
	}
	return rel, nil
}

// describeMode names a file type for people.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a file"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// open opens the regular file p for reading, refusing anything else
// before opening it (opening a named pipe would block, a device could do
// anything) and again after (in case it was swapped in between).
func (f *folder) open(p string) (*os.File, fs.FileInfo, error) {
	rel, err := f.resolve(p, false)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.root.Lstat(rel)
	if err != nil {
		return nil, nil, fmt.Errorf("%s cannot be read: %v", p, reason(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is %s, not a file", p, describeMode(fi.Mode()))
	}
	fh, err := f.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s cannot be read: %v", p, reason(err))
	}
	fi, err = fh.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		fh.Close()
		return nil, nil, fmt.Errorf("%s changed while it was being checked", p)
	}
	return fh, fi, nil
}

// read returns the content of the regular file p, up to limit bytes.
func (f *folder) read(p string, limit int64) ([]byte, error) {
	fh, fi, err := f.open(p)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d this check reads", p, fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s cannot be read: %v", p, reason(err))
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s grew past %d bytes while it was being read", p, limit)
	}
	return data, nil
}

func fileExists(f *folder, ch contract.Check) contract.Result {
	if _, err := f.resolve(ch.Path, false); err != nil {
		return failed("%v", err)
	}
	// Lstat of the path as written: a symbolic link is not the file the
	// contract asks for, even when it points at one inside the folder.
	fi, err := f.root.Lstat(filepath.FromSlash(ch.Path))
	if err != nil {
		return failed("%s cannot be read: %v", ch.Path, reason(err))
	}
	if !fi.Mode().IsRegular() {
		return contract.Result{Detail: fmt.Sprintf("%s is %s; file_exists needs a regular file", ch.Path, describeMode(fi.Mode()))}
	}
	return contract.Result{Pass: true, Detail: fmt.Sprintf("%s exists (%s)", ch.Path, plural(fi.Size(), "byte"))}
}

func fileMinLines(ctx context.Context, f *folder, ch contract.Check) contract.Result {
	fh, _, err := f.open(ch.Path)
	if err != nil {
		return failed("%v", err)
	}
	defer fh.Close()
	// Counted in chunks rather than read whole: a line count needs no
	// size limit.
	var lines int64
	last := byte('\n')
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return failed("not finished: %v", context.Cause(ctx))
		}
		n, err := fh.Read(buf)
		if n > 0 {
			lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
			last = buf[n-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return failed("%s cannot be read: %v", ch.Path, reason(err))
		}
	}
	if last != '\n' {
		lines++ // a last line without a newline is still a line
	}
	return minResult(lines, int64(ch.Min), "line")
}

func fileMinBytes(f *folder, ch contract.Check) contract.Result {
	fh, fi, err := f.open(ch.Path)
	if err != nil {
		return failed("%v", err)
	}
	fh.Close()
	return minResult(fi.Size(), int64(ch.Min), "byte")
}

func minResult(have, need int64, unit string) contract.Result {
	return contract.Result{Pass: have >= need, Detail: fmt.Sprintf("%s, needs %d", plural(have, unit), need)}
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

func yamlFieldPresent(f *folder, ch contract.Check, opt Options) contract.Result {
	data, err := f.read(ch.Path, opt.MaxReadBytes)
	if err != nil {
		return failed("%v", err)
	}
	ok, why, err := contract.LookupField(data, ch.Field)
	if err != nil {
		return failed("%s is not valid YAML: %v", ch.Path, err)
	}
	if !ok {
		return contract.Result{Detail: why}
	}
	return contract.Result{Pass: true, Detail: ch.Field + " is present"}
}

func dirMinFiles(f *folder, ch contract.Check) contract.Result {
	rel, err := f.resolve(ch.Path, true)
	if err != nil {
		return failed("%v", err)
	}
	fi, err := f.root.Lstat(rel)
	if err != nil {
		return failed("%s cannot be read: %v", ch.Path, reason(err))
	}
	if !fi.IsDir() {
		return failed("%s is %s, not a folder", ch.Path, describeMode(fi.Mode()))
	}
	d, err := f.root.Open(rel)
	if err != nil {
		return failed("%s cannot be read: %v", ch.Path, reason(err))
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return failed("%s cannot be listed: %v", ch.Path, reason(err))
	}
	glob := ch.Glob
	if glob == "" {
		glob = "*"
	}
	var n int64
	for _, e := range entries {
		// Only regular files directly inside count: a link or a folder
		// named like a deliverable is not one.
		if !e.Type().IsRegular() {
			continue
		}
		if ok, _ := filepath.Match(glob, e.Name()); ok {
			n++
		}
	}
	where := ch.Path
	if where == "." {
		where = "the folder"
	}
	return contract.Result{Pass: n >= int64(ch.Min), Detail: fmt.Sprintf("%s matching %q in %s, needs %d", plural(n, "file"), glob, where, ch.Min)}
}

// text decides contains and matches, which both need the file to be text.
func text(f *folder, ch contract.Check, opt Options) contract.Result {
	data, err := f.read(ch.Path, opt.MaxReadBytes)
	if err != nil {
		return failed("%v", err)
	}
	if !utf8.Valid(data) {
		return failed("%s is not a text file (it is not valid UTF-8)", ch.Path)
	}
	s := string(data)
	if ch.Kind == contract.Contains {
		i := strings.Index(s, ch.Text)
		if i < 0 {
			return contract.Result{Detail: fmt.Sprintf("%s does not contain %s", ch.Path, excerpt(ch.Text))}
		}
		return contract.Result{Pass: true, Detail: fmt.Sprintf("found %s at line %d", excerpt(ch.Text), 1+strings.Count(s[:i], "\n"))}
	}
	re, err := regexp.Compile(ch.Text)
	if err != nil {
		return failed("invalid regular expression: %v", err)
	}
	loc := re.FindStringIndex(s)
	if loc == nil {
		return contract.Result{Detail: fmt.Sprintf("nothing in %s matches %s", ch.Path, excerpt(ch.Text))}
	}
	return contract.Result{Pass: true, Detail: fmt.Sprintf("matched %s at line %d", excerpt(s[loc[0]:loc[1]]), 1+strings.Count(s[:loc[0]], "\n"))}
}

// excerpt quotes s for a detail line, shortened to keep details short.
func excerpt(s string) string {
	const max = 60
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
