package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DA-A4 (snapshot.json is a deletable fold cache): a snapshot round-trips;
// a missing one is ErrNoSnapshot; a damaged one is ErrBadSnapshot.
func TestSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "snapshot.json")
	if _, err := ReadSnapshot(path); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("ReadSnapshot of a missing file = %v; want ErrNoSnapshot", err)
	}
	cases := []struct {
		name  string
		state string
		want  string // compact form
	}{
		{"object", `{"stage":"build","instances":{"root":{"depth":0}}}`, `{"stage":"build","instances":{"root":{"depth":0}}}`},
		{"whitespace is compacted", "{ \"a\" : [1, 2,\n 3] }", `{"a":[1,2,3]}`},
		{"html characters kept", `{"s":"<a&b>"}`, `{"s":"<a&b>"}`},
		{"null", `null`, `null`},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := Snapshot{Offset: int64(1000 * i), Lines: 10 * i, State: []byte(c.state)}
			if err := WriteSnapshot(path, in); err != nil {
				t.Fatal(err)
			}
			got, err := ReadSnapshot(path)
			if err != nil {
				t.Fatal(err)
			}
			if got.Offset != in.Offset || got.Lines != in.Lines || string(got.State) != c.want {
				t.Errorf("got %+v (state %s); want offset %d lines %d state %s", got, got.State, in.Offset, in.Lines, c.want)
			}
		})
	}
	// Only the snapshot is left in the directory: no temporary files.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries; want only snapshot.json", len(entries))
	}
	if err := WriteSnapshot(path, Snapshot{State: []byte(`{"a":`)}); err == nil {
		t.Error("WriteSnapshot accepted invalid JSON state")
	}
	if err := WriteSnapshot(path, Snapshot{Offset: -1, State: []byte(`{}`)}); err == nil {
		t.Error("WriteSnapshot accepted a negative offset")
	}
}

// DA-A4: a damaged snapshot is refused with ErrBadSnapshot (the caller then
// refolds from zero).
func TestSnapshotCorrupted(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := WriteSnapshot(good, Snapshot{Offset: 42, Lines: 3, State: []byte(`{"stage":"build","n":12345}`)}); err != nil {
		t.Fatal(err)
	}
	orig := readFile(t, good)
	cases := []struct {
		name   string
		mutate func([]byte) []byte
	}{
		{"state byte flipped", func(b []byte) []byte { return bytes.Replace(b, []byte("12345"), []byte("12346"), 1) }},
		{"state whitespace added", func(b []byte) []byte { return bytes.Replace(b, []byte(`"build",`), []byte(`"build", `), 1) }},
		{"checksum changed", func(b []byte) []byte {
			i := bytes.Index(b, []byte(`"sha256":"`)) + len(`"sha256":"`)
			b[i] ^= 1
			return b
		}},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"empty file", func([]byte) []byte { return nil }},
		{"not json", func([]byte) []byte { return []byte("hello") }},
		{"unknown format", func(b []byte) []byte { return bytes.Replace(b, []byte(`"format":1`), []byte(`"format":2`), 1) }},
		{"unknown field", func(b []byte) []byte { return bytes.Replace(b, []byte(`{"format"`), []byte(`{"x":1,"format"`), 1) }},
		{"no state", func([]byte) []byte { return []byte(`{"format":1,"offset":0,"lines":0,"sha256":""}`) }},
		{"data after", func(b []byte) []byte { return append(b, "{}"...) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "snapshot.json")
			writeFile(t, path, c.mutate(append([]byte{}, orig...)))
			_, err := ReadSnapshot(path)
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("ReadSnapshot = %v; want ErrBadSnapshot", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}
