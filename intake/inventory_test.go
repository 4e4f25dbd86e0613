package intake_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fractal-harness/fractal/intake"
	"github.com/fractal-harness/fractal/tool/inventory"
)

// DA-B2: the inventory of a folder with a CSV writes inputs/inventory.md,
// with run-relative paths and the CSV's warnings, records the step first,
// and leaves out the files intake writes itself.
func TestInventoryWritesPage(t *testing.T) {
	dir := newRun(t)
	write(t, dir, "inputs/ragged.csv", "a,b,c\n1,2\n3,4,5\n")
	write(t, dir, "inputs/task.md", rawTask)
	write(t, dir, "inputs/clarify/round_1_questions.md", "# Questions\n")
	cfg, j := config(t, dir, nil)
	items, err := intake.Inventory(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, it := range items {
		paths = append(paths, it.Path)
	}
	if strings.Join(paths, " ") != "inputs/ragged.csv inputs/sales.csv" || items[1].Kind != inventory.KindCSV {
		t.Fatalf("items %v", paths)
	}
	page := read(t, dir, intake.InventoryFile)
	if !strings.Contains(page, "# Inventory of the input files") || !strings.Contains(page, "inputs/sales.csv") || strings.Contains(page, "task.md") {
		t.Errorf("page:\n%s", page)
	}
	steps := j.of(intake.StepInventory)
	if len(steps) != 1 || steps[0].Path != intake.InventoryFile || !hasProblem(steps[0].Problems, "inputs/ragged.csv") ||
		!strings.Contains(steps[0].Detail, "2 input file(s)") {
		t.Errorf("steps %+v", steps)
	}
	j.verify()
}

// DA-B2: a task with no input files still gets its inventory (and an
// inputs folder), so "there is nothing to read" is known up front.
func TestInventoryEmpty(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := config(t, dir, nil)
	items, err := intake.Inventory(context.Background(), cfg)
	if err != nil || len(items) != 0 {
		t.Fatalf("%v %v", items, err)
	}
	if !strings.Contains(read(t, dir, intake.InventoryFile), "0 files") {
		t.Errorf("page:\n%s", read(t, dir, intake.InventoryFile))
	}
}
