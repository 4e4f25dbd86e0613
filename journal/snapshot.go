package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

// snapshotFormat is the format number written into every snapshot file.
const snapshotFormat = 1

var (
	// ErrNoSnapshot is returned (wrapped) by ReadSnapshot when there is no
	// snapshot file.
	ErrNoSnapshot = errors.New("journal: no snapshot")
	// ErrBadSnapshot is returned (wrapped) by ReadSnapshot when the snapshot
	// file is malformed or its checksum does not match its state.
	ErrBadSnapshot = errors.New("journal: bad snapshot")
)

// Snapshot is a cache of the fold of a journal: State is the folded state of
// the first Lines records, which end at byte Offset. A snapshot is only a
// cache: when it is missing or bad, refold from offset zero; when it is good,
// Replay from Offset (an Offset beyond the journal's End, or not at a record
// boundary, makes Replay fail, and the caller should refold from zero too).
type Snapshot struct {
	Offset int64
	Lines  int
	State  json.RawMessage
}

// snapshotFile is the on-disk form, one JSON object.
type snapshotFile struct {
	Format int             `json:"format"`
	Offset int64           `json:"offset"`
	Lines  int             `json:"lines"`
	SHA256 string          `json:"sha256"` // of the compact state, hex
	State  json.RawMessage `json:"state"`
}

// WriteSnapshot atomically replaces the snapshot file at path with s: it is
// written to a temporary file in the same directory, fsynced, renamed into
// place and the directory is fsynced. The file holds the sha256 of the state
// so that ReadSnapshot detects damage.
func WriteSnapshot(path string, s Snapshot) error {
	if s.Offset < 0 || s.Lines < 0 {
		return fmt.Errorf("journal: write snapshot %s: negative offset %d or lines %d", path, s.Offset, s.Lines)
	}
	var state bytes.Buffer
	if err := json.Compact(&state, s.State); err != nil {
		return fmt.Errorf("journal: write snapshot %s: state is not valid JSON: %w", path, err)
	}
	sum := sha256.Sum256(state.Bytes())
	// Written by hand so that the state bytes on disk are exactly the ones
	// hashed (json.Marshal would re-escape a RawMessage).
	var b bytes.Buffer
	b.WriteString(`{"format":`)
	b.WriteString(strconv.Itoa(snapshotFormat))
	b.WriteString(`,"offset":`)
	b.WriteString(strconv.FormatInt(s.Offset, 10))
	b.WriteString(`,"lines":`)
	b.WriteString(strconv.Itoa(s.Lines))
	b.WriteString(`,"sha256":"`)
	b.WriteString(hex.EncodeToString(sum[:]))
	b.WriteString(`","state":`)
	b.Write(state.Bytes())
	b.WriteString("}\n")
	if err := writeFileAtomic(path, b.Bytes()); err != nil {
		return fmt.Errorf("journal: write snapshot %s: %w", path, err)
	}
	return nil
}

// ReadSnapshot reads the snapshot file at path. It returns an error wrapping
// ErrNoSnapshot if there is none, and one wrapping ErrBadSnapshot if the file
// is malformed or its checksum does not match: the caller then refolds the
// journal from zero.
func ReadSnapshot(path string) (Snapshot, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Snapshot{}, fmt.Errorf("journal: read snapshot %s: %w", path, ErrNoSnapshot)
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("journal: read snapshot %s: %w", path, err)
	}
	bad := func(format string, args ...any) (Snapshot, error) {
		return Snapshot{}, fmt.Errorf("journal: read snapshot %s: %w: %s", path, ErrBadSnapshot, fmt.Sprintf(format, args...))
	}
	var sf snapshotFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sf); err != nil {
		return bad("%v", err)
	}
	if dec.More() {
		return bad("data after the snapshot object")
	}
	if sf.Format != snapshotFormat {
		return bad("unknown format %d", sf.Format)
	}
	if sf.Offset < 0 || sf.Lines < 0 {
		return bad("negative offset %d or lines %d", sf.Offset, sf.Lines)
	}
	if len(sf.State) == 0 {
		return bad("no state")
	}
	sum := sha256.Sum256(sf.State)
	if got := hex.EncodeToString(sum[:]); got != sf.SHA256 {
		return bad("checksum mismatch: the file says %.12s…, the state hashes to %.12s…", sf.SHA256, got)
	}
	return Snapshot{Offset: sf.Offset, Lines: sf.Lines, State: sf.State}, nil
}
