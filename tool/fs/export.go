package fs

import (
	"os"

	"github.com/fractal-harness/fractal/tool"
)

// Place is a checked read target, for sibling tools that read the run's
// files (inventory): the allowed folder that holds it, opened as an
// os.Root, and the target's name inside it. One implementation of the
// confinement rules serves every tool.
type Place struct {
	Rel  string   // run-relative path, clean
	Base string   // run-relative allowed folder that holds it
	Root *os.Root // opened at Base
	Name string   // Rel inside Base; "." is Base itself
}

// Close releases the opened folder.
func (p *Place) Close() error { return p.Root.Close() }

// LocateRead checks a path argument against the read rules of read_file —
// syntax, the instance's boundary and readable folders, symlinks — and
// opens the allowed folder that holds it. Refusals are *tool.Error values
// with the same codes as read_file's.
func LocateRead(env tool.Env, path string) (*Place, error) {
	rel, err := cleanPath(path)
	if err != nil {
		return nil, err
	}
	pl, err := locate(env, rel, forRead)
	if err != nil {
		return nil, err
	}
	return &Place{Rel: pl.rel, Base: pl.base, Root: pl.root, Name: pl.name}, nil
}

// ReadError turns a file system error met while reading a located place
// into a refusal the model can act on, or a host fault.
func ReadError(rel, base string, err error) error { return ioError(rel, base, CodeBoundaryRead, err) }
