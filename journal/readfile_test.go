package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// DA-A4: ReadFile (status, verify) ignores a partial tail, which may be an
// append in progress, without modifying the file; it reads from any offset it
// gave as next.
func TestReadFileIgnoresPartialTail(t *testing.T) {
	head := joinLines(rec(1), rec(2), rec(3))
	cases := []struct {
		name string
		tail string
	}{
		{"no tail", ""},
		{"partial record", `{"type":"te`},
		{"complete json without newline", `{"a":1}`},
		{"garbage without newline", "\x00\x01"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := tempJournal(t)
			content := append(append([]byte{}, head...), c.tail...)
			writeFile(t, path, content)
			var got []string
			var nexts []int64
			err := ReadFile(context.Background(), path, 0, func(r []byte, next int64) error {
				got = append(got, string(r))
				nexts = append(nexts, next)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{string(rec(1)), string(rec(2)), string(rec(3))}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("records %q; want %q", got, want)
			}
			if !bytes.Equal(readFile(t, path), content) {
				t.Error("ReadFile modified the file")
			}
			// From a mid offset.
			got = nil
			if err := ReadFile(context.Background(), path, nexts[0], func(r []byte, _ int64) error {
				got = append(got, string(r))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0] != string(rec(2)) {
				t.Errorf("from %d: %q", nexts[0], got)
			}
		})
	}
}

// DA-A4: ReadFile refuses a corrupt complete line, naming its absolute line
// number even when reading from a mid offset, and refuses a bad offset.
func TestReadFileCorrupt(t *testing.T) {
	path := tempJournal(t)
	content := []byte(string(joinLines(rec(1), rec(2), rec(3))) + "{bad\n" + string(joinLines(rec(5))))
	writeFile(t, path, content)
	from := int64(2 * (len(rec(1)) + 1))
	n := 0
	err := ReadFile(context.Background(), path, from, func([]byte, int64) error { n++; return nil })
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Line != 4 || ce.Offset != int64(3*(len(rec(1))+1)) {
		t.Fatalf("ReadFile = %v; want line 4", err)
	}
	if n != 1 {
		t.Errorf("%d records before the corrupt line; want 1", n)
	}
	if !bytes.Equal(readFile(t, path), content) {
		t.Error("file modified")
	}
	for _, bad := range []int64{-1, 3, int64(len(content)) + 1} {
		if err := ReadFile(context.Background(), path, bad, func([]byte, int64) error { return nil }); err == nil {
			t.Errorf("ReadFile from %d succeeded", bad)
		}
	}
	if err := ReadFile(context.Background(), path+".missing", 0, nil); err == nil || !strings.Contains(err.Error(), ".missing") {
		t.Errorf("missing file: %v", err)
	}
}

// DA-A4: a reader in another "process" following a journal that is being
// appended to always sees a prefix of whole records.
func TestReadFileWhileAppending(t *testing.T) {
	path := tempJournal(t)
	l := openT(t, path, Options{})
	const total = 2000
	var wg sync.WaitGroup
	wg.Add(1)
	writerDone := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(writerDone)
		for i := 0; i < total; i += 10 {
			var recs [][]byte
			for j := range 10 {
				recs = append(recs, rec(i+j))
			}
			if err := l.Append(context.Background(), recs...); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	from, seen := int64(0), 0
	for finished := false; seen < total; {
		if finished {
			t.Fatalf("writer finished; read %d of %d records", seen, total)
		}
		select {
		case <-writerDone:
			finished = true // one last read
		default:
		}
		err := ReadFile(context.Background(), path, from, func(r []byte, next int64) error {
			if string(r) != string(rec(seen)) {
				return fmt.Errorf("record %d = %q", seen, r)
			}
			seen++
			from = next
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}
