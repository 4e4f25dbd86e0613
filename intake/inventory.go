package intake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fractal-harness/fractal/tool/inventory"
)

// Inventory lists every input file under Dir/inputs with what it really
// holds (DA-B2), writes the page to inputs/inventory.md and records an
// "inventory" step first, with the warnings as its Problems. Item paths
// are run-relative ("inputs/sales.csv"), as the inventory tool gives them,
// so the page and the prompts name files the way every tool does.
//
// The files intake writes itself — inputs/task.md, inputs/inventory.md and
// inputs/clarify/ — are not inputs and are left out. A missing inputs
// folder is created: a task may come with no files, and the page then
// says so, which is itself worth knowing before planning.
func Inventory(ctx context.Context, cfg Config) ([]inventory.Item, error) {
	cfg, err := cfg.normalize(false)
	if err != nil {
		return nil, err
	}
	return runInventory(ctx, &cfg)
}

func runInventory(ctx context.Context, cfg *Config) ([]inventory.Item, error) {
	dir := filepath.Join(cfg.Dir, inputsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("intake: %w", err)
	}
	all, err := inventory.Folder(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("intake: %w", err)
	}
	items := make([]inventory.Item, 0, len(all))
	for _, it := range all {
		if own(it.Path) || isTemp(it.Path) {
			continue
		}
		it.Path = inputsDir + "/" + it.Path
		items = append(items, it)
	}
	var warnings []string
	for _, it := range items {
		if it.Problem != "" {
			warnings = append(warnings, it.Path+": "+it.Problem)
		}
		for _, r := range it.Risks() {
			warnings = append(warnings, it.Path+": "+r)
		}
	}
	page := inventory.Markdown(items)
	step := Step{Kind: StepInventory, Author: "host", Problems: warnings,
		Detail: fmt.Sprintf("%d input file(s) inventoried, %d warning(s)", len(items), len(warnings))}
	if err := cfg.recordAndWrite(step, InventoryFile, []byte(page)); err != nil {
		return nil, err
	}
	return items, nil
}

// own reports the inputs-relative paths intake writes itself.
func own(rel string) bool {
	return rel == "task.md" || rel == "inventory.md" || rel == "clarify" || strings.HasPrefix(rel, "clarify/")
}

// ensureInventory returns the text of inputs/inventory.md, making it
// first when it is absent.
func ensureInventory(ctx context.Context, cfg *Config) (string, error) {
	text, ok, err := readFile(cfg.Dir, InventoryFile)
	if err != nil || ok {
		return text, err
	}
	if _, err := runInventory(ctx, cfg); err != nil {
		return "", err
	}
	text, _, err = readFile(cfg.Dir, InventoryFile)
	return text, err
}
