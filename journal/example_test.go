package journal_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/fractal-harness/fractal/journal"
)

// A journal is opened (repairing a torn tail), appended to durably, and
// replayed from the start or from an offset a reader reached.
func Example() {
	dir, err := os.MkdirTemp("", "run-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "events.jsonl")

	// A crash left half a record after the last newline.
	os.WriteFile(path, []byte(`{"type":"run_started"}`+"\n"+`{"type":"tool_ca`), 0o644)

	l, err := journal.Open(path, journal.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	fmt.Println("repaired bytes:", l.Repaired())

	ctx := context.Background()
	if err := l.Append(ctx, []byte(`{"type":"stage","to":"plan"}`), []byte(`{"type":"stage","to":"build"}`)); err != nil {
		log.Fatal(err) // not durable: the log is now broken
	}
	err = l.Replay(ctx, 0, func(rec []byte, next int64) error {
		fmt.Printf("%s (next %d)\n", rec, next)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// repaired bytes: 16
	// {"type":"run_started"} (next 23)
	// {"type":"stage","to":"plan"} (next 52)
	// {"type":"stage","to":"build"} (next 82)
}
