package blueprints

import (
	"slices"
	"strings"
	"testing"

	"github.com/fractal-harness/fractal/scope"
)

// DC9: every shipped blueprint parses strictly, and clones cleanly from the
// root contract a run starts with (DC3); the child passes the Guard's check.
func TestShippedBlueprints(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for id := range all {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if want := []string{"analyst", "researcher", "reviewer", "writer"}; !slices.Equal(ids, want) {
		t.Fatalf("shipped %v, want %v", ids, want)
	}
	root := scope.Root()
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			b := all[id]
			if err := scope.CheckBlueprint(b, root); err != nil {
				t.Fatal(err)
			}
			child, err := scope.Clone(root, b.Request())
			if err != nil {
				t.Fatal(err)
			}
			if err := scope.ValidateDelegation(root, child); err != nil {
				t.Fatal(err)
			}
			if b.Description == "" || len(child.SOP) < 4 {
				t.Fatalf("%s needs a description and an SOP of concrete steps", id)
			}
			for _, tool := range child.Tools() {
				if !slices.Contains(scope.DefaultTools(), tool) {
					t.Errorf("%s gets %s, which the harness does not have", id, tool)
				}
			}
			if !strings.Contains(scope.Render(child), "1. ") {
				t.Errorf("%s: the rendered contract has no numbered SOP", id)
			}
		})
	}
}

// The reviewer judges and changes nothing: read-only, no spawning, no
// writing tool, no network (DA-A2: the Reviewer is independent).
func TestReviewerIsReadOnly(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	c, err := scope.Clone(scope.Root(), all["reviewer"].Request())
	if err != nil {
		t.Fatal(err)
	}
	if !c.Constraints.ReadOnly || !c.Constraints.NoSpawn || !c.Constraints.NoNetwork {
		t.Fatalf("reviewer constraints = %+v", c.Constraints)
	}
	if len(c.Scope.Write) > 0 || slices.Contains(c.Tools(), "write_file") || slices.Contains(c.Tools(), "web_fetch") || len(c.DispatchTargets) > 0 {
		t.Fatalf("reviewer can change or reach out: tools %v, scope %+v, targets %v", c.Tools(), c.Scope, c.DispatchTargets)
	}
}

// DC3: a chain of shipped kinds: root starts a writer, the writer starts a
// reviewer. The writer may not start a researcher, and the reviewer may
// start nobody.
func TestShippedChain(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	root := scope.Root()
	writer, err := scope.Clone(root, all["writer"].Request())
	if err != nil {
		t.Fatal(err)
	}
	if err := scope.CheckBlueprint(all["reviewer"], writer); err != nil {
		t.Fatal(err)
	}
	reviewer, err := scope.Clone(writer, all["reviewer"].Request())
	if err != nil {
		t.Fatal(err)
	}
	if err := scope.ValidateDelegation(writer, reviewer); err != nil {
		t.Fatal(err)
	}
	err = scope.CheckBlueprint(all["researcher"], writer)
	if err == nil || !strings.HasPrefix(err.Error(), "blueprints/researcher.yaml:") {
		t.Fatalf("a writer may start a researcher: %v", err)
	}
	for _, id := range []string{"analyst", "researcher", "reviewer", "writer"} {
		if scope.CheckBlueprint(all[id], reviewer) == nil {
			t.Errorf("a reviewer may start a %s", id)
		}
	}
}
