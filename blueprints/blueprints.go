// Package blueprints ships the harness's built-in kinds of sub-agent as
// blueprint YAML files (DC9), embedded in the binary: researcher, analyst,
// writer and reviewer. Each is a scope.Request against whatever parent
// spawns it; every one clones cleanly from scope.Root().
//
// The files live next to this one; docs/delegation.md describes the format.
package blueprints

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/fractal-harness/fractal/scope"
)

//go:embed *.yaml
var files embed.FS

// All parses every shipped blueprint and returns them by id. A blueprint
// whose id is not its file name is an error, so that "researcher" always
// means researcher.yaml.
func All() (map[string]scope.Blueprint, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("blueprints: %w", err)
	}
	sort.Strings(names)
	out := make(map[string]scope.Blueprint, len(names))
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("blueprints: %w", err)
		}
		b, err := scope.ParseBlueprint(data, "blueprints/"+name)
		if err != nil {
			return nil, fmt.Errorf("blueprints: %w", err)
		}
		if want := strings.TrimSuffix(path.Base(name), ".yaml"); b.ID != want {
			return nil, fmt.Errorf("blueprints: %s has id %q; a blueprint's id is its file name (%q)", name, b.ID, want)
		}
		out[b.ID] = b
	}
	return out, nil
}
