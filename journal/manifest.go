package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/goccy/go-yaml"
)

// ManifestFile and ManifestLock are the names, inside a run directory, of the
// manifest and of the lock file that serializes its changes.
const (
	ManifestFile = "manifest.yaml"
	ManifestLock = "manifest.lock"
)

// ErrConflict is wrapped by the error of SwapStage when the manifest is not
// at the stage and version the caller expected.
var ErrConflict = errors.New("journal: manifest changed by someone else")

// Manifest is the content of a run's manifest.yaml: the run's identity and
// its stage, with a version that every change increments (DA-A4).
type Manifest struct {
	RunID   string    `yaml:"run_id"`
	Stage   string    `yaml:"stage"`
	Version int64     `yaml:"version"`
	Model   string    `yaml:"model"`
	Task    string    `yaml:"task"`
	Created time.Time `yaml:"created"`
	Updated time.Time `yaml:"updated"`
}

func manifestPath(dir string) string { return filepath.Join(dir, ManifestFile) }

// encodeManifest returns the YAML text of m. It prefers plain and literal
// block scalars, which read best; if a string would not survive them intact
// (e.g. trailing white space), every string is written double-quoted with
// escapes instead. Either way the text is decoded again and compared, so what
// is written is exactly what ReadManifest will return.
func encodeManifest(m Manifest) ([]byte, error) {
	const header = "# fractal run manifest. Changed by fractal with compare-and-swap on stage and version;\n" +
		"# do not edit while the run is in use.\n"
	body, err := yaml.MarshalWithOptions(m, yaml.UseLiteralStyleIfMultiline(true))
	if err == nil && decodesTo(body, m) {
		return append([]byte(header), body...), nil
	}
	var b bytes.Buffer
	b.WriteString(header)
	fmt.Fprintf(&b, "run_id: %s\nstage: %s\nversion: %d\nmodel: %s\ntask: %s\ncreated: %s\nupdated: %s\n",
		yamlQuote(m.RunID), yamlQuote(m.Stage), m.Version, yamlQuote(m.Model), yamlQuote(m.Task),
		m.Created.Format(time.RFC3339Nano), m.Updated.Format(time.RFC3339Nano))
	if !decodesTo(b.Bytes(), m) {
		return nil, errors.New("a field cannot be stored in YAML unchanged (is it valid UTF-8?)")
	}
	return b.Bytes(), nil
}

// yamlQuote returns s as a double-quoted scalar; JSON string escapes are
// valid YAML double-quoted escapes.
func yamlQuote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// decodesTo reports whether data decodes to exactly m.
func decodesTo(data []byte, m Manifest) bool {
	var got Manifest
	if err := yaml.UnmarshalWithOptions(data, &got, yaml.Strict()); err != nil {
		return false
	}
	return got.RunID == m.RunID && got.Stage == m.Stage && got.Version == m.Version &&
		got.Model == m.Model && got.Task == m.Task &&
		got.Created.Equal(m.Created) && got.Updated.Equal(m.Updated)
}

func (m Manifest) check() error {
	switch {
	case m.RunID == "":
		return errors.New("run_id is empty")
	case m.Stage == "":
		return errors.New("stage is empty")
	case m.Version < 1:
		return fmt.Errorf("version %d is not positive", m.Version)
	case m.Created.IsZero():
		return errors.New("created is missing or not a time")
	case m.Updated.IsZero():
		return errors.New("updated is missing or not a time")
	}
	return nil
}

// CreateManifest writes a new manifest.yaml into dir, which must exist. It
// fails with an error wrapping fs.ErrExist if the run already has one. The
// Version is set to 1; a zero Created is set to the current time and a zero
// Updated to Created.
func CreateManifest(dir string, m Manifest) error {
	path := manifestPath(dir)
	m.Version = 1
	if m.Created.IsZero() {
		m.Created = time.Now().UTC()
	}
	if m.Updated.IsZero() {
		m.Updated = m.Created
	}
	if err := m.check(); err != nil {
		return fmt.Errorf("journal: create manifest %s: %w", path, err)
	}
	data, err := encodeManifest(m)
	if err != nil {
		return fmt.Errorf("journal: create manifest %s: %w", path, err)
	}
	if err := createFileAtomic(path, data); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("journal: create manifest %s: the run already has a manifest: %w", path, fs.ErrExist)
		}
		return fmt.Errorf("journal: create manifest %s: %w", path, err)
	}
	return nil
}

// ReadManifest reads dir/manifest.yaml. A missing file gives an error
// wrapping fs.ErrNotExist; a malformed one (bad YAML, unknown keys, missing
// run_id or stage, version < 1) an error naming the file and the fault.
func ReadManifest(dir string) (Manifest, error) {
	path := manifestPath(dir)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, fmt.Errorf("journal: read manifest: %s does not exist (is %s a fractal run?): %w", path, dir, fs.ErrNotExist)
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("journal: read manifest %s: %w", path, err)
	}
	var m Manifest
	if err := yaml.UnmarshalWithOptions(data, &m, yaml.Strict()); err != nil {
		return Manifest{}, fmt.Errorf("journal: read manifest %s: malformed YAML: %w", path, err)
	}
	if err := m.check(); err != nil {
		return Manifest{}, fmt.Errorf("journal: read manifest %s: malformed: %w", path, err)
	}
	return m, nil
}

// SwapStage moves the run in dir from stage fromStage at version fromVersion
// to stage toStage, as one compare-and-swap: under an exclusive flock on
// dir/manifest.lock it re-reads the manifest; if its stage or version differ
// from the expected ones it returns an error wrapping ErrConflict that says
// what it found; otherwise it writes Stage=toStage, Version+1 and Updated=now
// atomically and returns the new manifest. Of several processes swapping from
// the same version exactly one wins.
func SwapStage(dir string, fromStage string, fromVersion int64, toStage string, now time.Time) (Manifest, error) {
	path := manifestPath(dir)
	if toStage == "" {
		return Manifest{}, fmt.Errorf("journal: swap stage %s: the new stage is empty", path)
	}
	if now.IsZero() {
		return Manifest{}, fmt.Errorf("journal: swap stage %s: the time of the change is zero", path)
	}
	unlock, err := lockFile(filepath.Join(dir, ManifestLock))
	if err != nil {
		return Manifest{}, fmt.Errorf("journal: swap stage %s: %w", path, err)
	}
	defer unlock()
	m, err := ReadManifest(dir)
	if err != nil {
		return Manifest{}, err
	}
	if m.Stage != fromStage || m.Version != fromVersion {
		return Manifest{}, fmt.Errorf("journal: swap stage %s to %q: %w: expected stage %q version %d, found stage %q version %d",
			path, toStage, ErrConflict, fromStage, fromVersion, m.Stage, m.Version)
	}
	m.Stage = toStage
	m.Version++
	m.Updated = now
	data, err := encodeManifest(m)
	if err != nil {
		return Manifest{}, fmt.Errorf("journal: swap stage %s: %w", path, err)
	}
	if err := writeFileAtomic(path, data); err != nil {
		return Manifest{}, fmt.Errorf("journal: swap stage %s: %w", path, err)
	}
	return m, nil
}

// lockFile takes a blocking exclusive flock on path (created if absent) and
// returns the function that releases it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := flock(f, syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}
