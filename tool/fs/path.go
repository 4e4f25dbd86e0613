package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/fractal-harness/fractal/tool"
)

// cleanPath applies the path rules (E-PATH) to a run-relative path from a
// model and returns it in canonical form. It is pure, so WritePaths and
// every tool refuse the same paths before any IO.
func cleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", tool.Errorf(CodePath, "path is empty: give a path relative to the run folder, such as \"inputs/sales.csv\"")
	case strings.ContainsRune(p, 0):
		return "", tool.Errorf(CodePath, "path %q contains a NUL byte", p)
	case strings.Contains(p, `\`):
		return "", tool.Errorf(CodePath, "path %q contains a backslash: separate folders with \"/\"", p)
	case strings.Contains(p, ":"):
		// A colon is a drive letter or a URL scheme, never part of a path
		// a run folder needs; refusing it avoids both readings.
		return "", tool.Errorf(CodePath, "path %q contains \":\"", p)
	case strings.HasPrefix(p, "/"):
		return "", tool.Errorf(CodePath, "path %q is absolute: give it relative to the run folder, such as \"inputs/sales.csv\"", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", tool.Errorf(CodePath, "path %q contains \"..\": give the path from the run folder down", p)
		}
	}
	return path.Clean(p), nil
}

// within reports whether the clean run-relative path p is root or lies
// under it. Comparing with root+"/" compares whole segments: "work/root/ab"
// is not inside "work/root/a". The root "." is the whole run folder.
func within(p, root string) bool {
	return root == "." || p == root || strings.HasPrefix(p, root+"/")
}

// withinOS is within for absolute OS paths.
func withinOS(p, root string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

type access int

const (
	forRead access = iota
	forWrite
)

// place is a checked target: the allowed folder opened as an os.Root, and
// the target's name inside it.
type place struct {
	rel  string   // run-relative path, clean
	base string   // run-relative allowed folder that holds it
	root *os.Root // opened at base
	name string   // rel inside base; "." is base itself
}

func (p *place) close() { p.root.Close() }

// locate checks the boundary rules for rel (already clean) and opens the
// allowed folder that holds it. For a write, the boundary folder is created
// if it does not exist yet.
func locate(env tool.Env, rel string, acc access) (*place, error) {
	if !filepath.IsAbs(env.RunRoot) {
		return nil, fmt.Errorf("fs: env: run root %q is not an absolute path", env.RunRoot)
	}
	boundary, err := envRoot("boundary", env.Boundary)
	if err != nil {
		return nil, err
	}
	code := CodeBoundaryWrite
	roots := []string{boundary}
	if acc == forRead {
		code = CodeBoundaryRead
		for _, r := range env.Readable {
			c, err := envRoot("readable folder", r)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(roots, c) {
				roots = append(roots, c)
			}
		}
	}

	var candidates []string
	for _, r := range roots {
		if r != "" && within(rel, r) {
			candidates = append(candidates, r)
		}
	}
	if len(candidates) == 0 {
		return nil, outside(boundary, roots, rel, acc)
	}
	// Try the widest folder first: a symlink from one readable folder into
	// another is fine as long as some allowed folder holds both ends.
	sort.SliceStable(candidates, func(i, j int) bool { return len(candidates[i]) < len(candidates[j]) })

	runReal, err := filepath.EvalSymlinks(env.RunRoot)
	if err != nil {
		return nil, fmt.Errorf("fs: env: run root: %w", err)
	}
	var refusal error
	for _, base := range candidates {
		if err := contained(runReal, base, rel, code); err != nil {
			if _, ok := tool.AsError(err); !ok {
				return nil, err
			}
			// Report the narrowest folder's refusal: usually the boundary,
			// the folder the model thinks in.
			refusal = err
			continue
		}
		root, err := openBase(runReal, base, acc)
		if err != nil {
			return nil, ioError(rel, base, code, err)
		}
		name := "."
		switch {
		case base == ".":
			name = rel
		case rel != base:
			name = rel[len(base)+1:]
		}
		return &place{rel: rel, base: base, root: root, name: name}, nil
	}
	return nil, refusal
}

// envRoot checks a folder of the Env by the rules for a model's paths: a
// bad one is a host fault, not the model's. "" is kept: it grants nothing.
func envRoot(what, r string) (string, error) {
	if r == "" {
		return "", nil
	}
	c, err := cleanPath(r)
	if err != nil {
		return "", fmt.Errorf("fs: env: bad %s: %v", what, err)
	}
	return c, nil
}

func outside(boundary string, roots []string, rel string, acc access) error {
	if acc == forWrite {
		if boundary == "" {
			return tool.Errorf(CodeBoundaryWrite, "cannot write %q: this instance may not write files", rel)
		}
		return tool.Errorf(CodeBoundaryWrite, "%q is outside your boundary %q: you may write only inside it", rel, boundary)
	}
	var can []string
	for i, r := range roots {
		switch {
		case r == "":
		case i == 0:
			can = append(can, r+" (your boundary)")
		default:
			can = append(can, r)
		}
	}
	if len(can) == 0 {
		return tool.Errorf(CodeBoundaryRead, "cannot read %q: this instance may not read files", rel)
	}
	return tool.Errorf(CodeBoundaryRead, "%q is outside what you may read: %s", rel, strings.Join(can, ", "))
}

// contained checks on disk that base is not itself reached through a
// symlink and that the real path of rel stays inside it. Without the first
// check a boundary replaced by a symlink (to /etc, or to a sibling's
// folder) would carry every write with it.
func contained(runReal, base, rel, code string) error {
	baseAbs := filepath.Join(runReal, filepath.FromSlash(base))
	real, err := realpath(baseAbs)
	if err != nil {
		return ioError(rel, base, code, err)
	}
	if real != baseAbs {
		return tool.Errorf(code, "cannot use %q: it is a symlink or lies under one, and an allowed folder must be a real folder of the run", base)
	}
	real, err = realpath(filepath.Join(runReal, filepath.FromSlash(rel)))
	if err != nil {
		return ioError(rel, base, code, err)
	}
	if !withinOS(real, baseAbs) {
		return tool.Errorf(code, "%q leads outside %q through a symlink", rel, base)
	}
	return nil
}

// errUnresolved marks a symlink whose real path cannot be known (its
// target is missing, or links loop), so it cannot be shown to stay inside.
type errUnresolved struct{ why string }

func (e *errUnresolved) Error() string { return e.why }

// realpath resolves every symlink in the absolute path abs. A path that
// does not exist yet resolves through its deepest existing ancestor, with
// the missing names appended as written: a new file has no real path of
// its own.
func realpath(abs string) (string, error) {
	var missing []string
	p := abs
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			for i := len(missing) - 1; i >= 0; i-- {
				r = filepath.Join(r, missing[i])
			}
			return r, nil
		}
		if !errors.Is(err, iofs.ErrNotExist) {
			// filepath reports a loop with an untyped error.
			if strings.Contains(err.Error(), "too many links") {
				return "", &errUnresolved{"goes through symlinks that loop"}
			}
			return "", err
		}
		// p does not resolve. If it exists all the same, it is a symlink
		// whose target is missing.
		if _, lerr := os.Lstat(p); lerr == nil {
			return "", &errUnresolved{"goes through a symlink whose target does not exist"}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		missing = append(missing, filepath.Base(p))
		p = parent
	}
}

// openBase opens the allowed folder base as an os.Root, through an os.Root
// at the run folder so that even a swapped-in symlink cannot take it out of
// the run. A write creates the folder first.
func openBase(runReal, base string, acc access) (*os.Root, error) {
	run, err := os.OpenRoot(runReal)
	if err != nil {
		return nil, err
	}
	if base == "." {
		return run, nil
	}
	defer run.Close()
	if acc == forWrite {
		if err := run.MkdirAll(base, 0o755); err != nil {
			return nil, err
		}
	}
	return run.OpenRoot(base)
}

// ioError turns a file system error into a refusal the model can act on,
// or a host fault. code is the boundary code for the access.
func ioError(rel, base, code string, err error) error {
	var unresolved *errUnresolved
	switch {
	case err == nil:
		return nil
	case errors.As(err, &unresolved):
		return tool.Errorf(code, "%q %s, so it cannot be shown to stay inside %q", rel, unresolved.why, base)
	case errors.Is(err, syscall.ELOOP), escapes(err):
		return tool.Errorf(code, "%q leads outside %q through a symlink (absolute symlinks are never followed)", rel, base)
	case errors.Is(err, iofs.ErrNotExist):
		return tool.Errorf(CodeNotFound, "%q does not exist", rel)
	case errors.Is(err, syscall.ENOTDIR):
		return tool.Errorf(CodeNotDir, "a part of %q is a file, not a folder", rel)
	case errors.Is(err, iofs.ErrPermission):
		return tool.Errorf(CodePermission, "%q: permission denied", rel)
	}
	return fmt.Errorf("fs: %s: %w", rel, err)
}

// escapes reports an os.Root refusal. The os package does not export its
// sentinel, so the message is matched; the tests pin the behaviour.
func escapes(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}
