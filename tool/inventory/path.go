package inventory

// Confinement of the inventory tool's path, by the rules of package
// tool/fs (F-A3, I-Boundary), for reading only. tool/fs keeps its helpers
// unexported, so they are repeated here, narrowed to reads; the two must
// refuse the same paths with the same codes, which the tests of both
// packages pin.

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
// model and returns it in canonical form.
func cleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", tool.Errorf(CodePath, "path is empty: give a path relative to the run folder, such as \"inputs\" or \"inputs/sales.xlsx\"")
	case strings.ContainsRune(p, 0):
		return "", tool.Errorf(CodePath, "path %q contains a NUL byte", p)
	case strings.Contains(p, `\`):
		return "", tool.Errorf(CodePath, "path %q contains a backslash: separate folders with \"/\"", p)
	case strings.Contains(p, ":"):
		return "", tool.Errorf(CodePath, "path %q contains \":\"", p)
	case strings.HasPrefix(p, "/"):
		return "", tool.Errorf(CodePath, "path %q is absolute: give it relative to the run folder, such as \"inputs\"", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", tool.Errorf(CodePath, "path %q contains \"..\": give the path from the run folder down", p)
		}
	}
	return path.Clean(p), nil
}

// within reports whether the clean run-relative path p is root or lies
// under it, segment by segment. The root "." is the whole run folder.
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

// place is a checked target: the readable folder opened as an os.Root, and
// the target's name inside it.
type place struct {
	rel  string   // run-relative path, clean
	base string   // run-relative readable folder that holds it
	root *os.Root // opened at base
	name string   // rel inside base; "." is base itself
}

func (p *place) close() { p.root.Close() }

// locate checks the read rules for rel (already clean) and opens the
// readable folder that holds it: the boundary or one of env.Readable.
func locate(env tool.Env, rel string) (*place, error) {
	if !filepath.IsAbs(env.RunRoot) {
		return nil, fmt.Errorf("inventory: env: run root %q is not an absolute path", env.RunRoot)
	}
	boundary, err := envRoot("boundary", env.Boundary)
	if err != nil {
		return nil, err
	}
	roots := []string{boundary}
	for _, r := range env.Readable {
		c, err := envRoot("readable folder", r)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(roots, c) {
			roots = append(roots, c)
		}
	}
	var candidates []string
	for _, r := range roots {
		if r != "" && within(rel, r) {
			candidates = append(candidates, r)
		}
	}
	if len(candidates) == 0 {
		return nil, outside(roots, rel)
	}
	// The widest folder first: a symlink from one readable folder into
	// another is fine as long as some readable folder holds both ends.
	sort.SliceStable(candidates, func(i, j int) bool { return len(candidates[i]) < len(candidates[j]) })

	runReal, err := filepath.EvalSymlinks(env.RunRoot)
	if err != nil {
		return nil, fmt.Errorf("inventory: env: run root: %w", err)
	}
	var refusal error
	for _, base := range candidates {
		if err := contained(runReal, base, rel); err != nil {
			if _, ok := tool.AsError(err); !ok {
				return nil, err
			}
			refusal = err
			continue
		}
		root, err := openBase(runReal, base)
		if err != nil {
			return nil, ioError(rel, base, err)
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
// bad one is a host fault. "" is kept: it grants nothing.
func envRoot(what, r string) (string, error) {
	if r == "" {
		return "", nil
	}
	c, err := cleanPath(r)
	if err != nil {
		return "", fmt.Errorf("inventory: env: bad %s: %v", what, err)
	}
	return c, nil
}

func outside(roots []string, rel string) error {
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
// symlink and that the real path of rel stays inside it.
func contained(runReal, base, rel string) error {
	baseAbs := filepath.Join(runReal, filepath.FromSlash(base))
	real, err := realpath(baseAbs)
	if err != nil {
		return ioError(rel, base, err)
	}
	if real != baseAbs {
		return tool.Errorf(CodeBoundaryRead, "cannot use %q: it is a symlink or lies under one, and a readable folder must be a real folder of the run", base)
	}
	real, err = realpath(filepath.Join(runReal, filepath.FromSlash(rel)))
	if err != nil {
		return ioError(rel, base, err)
	}
	if !withinOS(real, baseAbs) {
		return tool.Errorf(CodeBoundaryRead, "%q leads outside %q through a symlink", rel, base)
	}
	return nil
}

// errUnresolved marks a symlink whose real path cannot be known (its
// target is missing, or links loop).
type errUnresolved struct{ why string }

func (e *errUnresolved) Error() string { return e.why }

// realpath resolves every symlink in the absolute path abs; a path that
// does not exist resolves through its deepest existing ancestor.
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
			if strings.Contains(err.Error(), "too many links") {
				return "", &errUnresolved{"goes through symlinks that loop"}
			}
			return "", err
		}
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

// openBase opens the readable folder base as an os.Root, through an
// os.Root at the run folder, so a swapped-in symlink cannot take it out of
// the run.
func openBase(runReal, base string) (*os.Root, error) {
	run, err := os.OpenRoot(runReal)
	if err != nil {
		return nil, err
	}
	if base == "." {
		return run, nil
	}
	defer run.Close()
	return run.OpenRoot(base)
}

// ioError turns a file system error into a refusal the model can act on,
// or a host fault.
func ioError(rel, base string, err error) error {
	var unresolved *errUnresolved
	switch {
	case err == nil:
		return nil
	case errors.As(err, &unresolved):
		return tool.Errorf(CodeBoundaryRead, "%q %s, so it cannot be shown to stay inside %q", rel, unresolved.why, base)
	case errors.Is(err, syscall.ELOOP), escapes(err):
		return tool.Errorf(CodeBoundaryRead, "%q leads outside %q through a symlink (absolute symlinks are never followed)", rel, base)
	case errors.Is(err, iofs.ErrNotExist):
		return tool.Errorf(CodeNotFound, "%q does not exist", rel)
	case errors.Is(err, syscall.ENOTDIR):
		return tool.Errorf(CodeNotDir, "a part of %q is a file, not a folder", rel)
	case errors.Is(err, iofs.ErrPermission):
		return tool.Errorf(CodePermission, "%q: permission denied", rel)
	}
	return fmt.Errorf("inventory: %s: %w", rel, err)
}

// escapes reports an os.Root refusal; the os package does not export its
// sentinel, so the message is matched.
func escapes(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}
