package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DA-A1, issue #5 performance: the starting context of a relay session is
// bounded — with 20 completed sessions it is no larger than with 3.
func TestRelayContextBounded(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ProgressFile)
	sizes := map[int]int{}
	for n := 1; n <= 21; n++ {
		entry := fmt.Sprintf("\n## Session %d (attempt 1)\n- %s\nHandoff: %s\n", n, strings.Repeat("worked on the table; ", 20), strings.Repeat("next: more rows; ", 10))
		if err := appendFile(p, entry); err != nil {
			t.Fatal(err)
		}
		sizes[n+1] = len(relayContext(p, n+1, []string{"Continue where session " + fmt.Sprint(n) + " stopped."}))
	}
	if sizes[21] > sizes[5]+200 || sizes[21] > 8000 {
		t.Fatalf("relay context grows: session 5 starts with %d bytes, session 21 with %d", sizes[5], sizes[21])
	}
	data, _ := os.ReadFile(p)
	t.Logf("relay context: session 3 %d B, session 21 %d B (progress.md %d B)", sizes[3], sizes[21], len(data))
}
