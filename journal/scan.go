package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// readBufSize is the size of the buffered reader used to scan a journal. A
// record longer than this is still read, through a growing scratch buffer.
const readBufSize = 1 << 20

// ctxCheckEvery is how many records are read between checks of the context.
const ctxCheckEvery = 1024

// CorruptError reports a complete line of a journal that is not a valid
// record. The file is never modified when it is returned.
type CorruptError struct {
	Path   string // the journal file
	Line   int    // 1-based line number
	Offset int64  // byte offset of the start of the line
	Reason string // why the line is not a record
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("journal: %s line %d (byte %d) is not valid JSON: %s; the file was left unchanged",
		e.Path, e.Line, e.Offset, e.Reason)
}

// errTorn is returned by scanner.next for bytes after the last '\n'.
var errTorn = errors.New("journal: partial last line")

// scanner reads '\n'-terminated lines from a reader without allocating per
// line: a returned line aliases the reader's buffer (or the scratch buffer
// for lines longer than it) and is valid until the next call.
type scanner struct {
	r    *bufio.Reader
	off  int64 // offset just past the last complete line returned
	long []byte
}

func newScanner(r io.Reader, off int64) *scanner {
	return &scanner{r: bufio.NewReaderSize(r, readBufSize), off: off}
}

// next returns the next complete line without its '\n' and the offset where
// it starts. At the end it returns io.EOF if the input ended with '\n' (or
// was empty), or errTorn with the partial bytes if it did not.
func (s *scanner) next() (line []byte, start int64, err error) {
	start = s.off
	line, err = s.r.ReadSlice('\n')
	switch err {
	case nil:
		s.off += int64(len(line))
		return line[:len(line)-1], start, nil
	case io.EOF:
		if len(line) == 0 {
			return nil, start, io.EOF
		}
		return line, start, errTorn
	case bufio.ErrBufferFull:
		// A line longer than the buffer: gather it in the scratch buffer.
		s.long = append(s.long[:0], line...)
		for {
			line, err = s.r.ReadSlice('\n')
			s.long = append(s.long, line...)
			switch err {
			case nil:
				s.off += int64(len(s.long))
				return s.long[:len(s.long)-1], start, nil
			case bufio.ErrBufferFull:
				continue
			case io.EOF:
				return s.long, start, errTorn
			default:
				return nil, start, err
			}
		}
	default:
		return nil, start, err
	}
}

// checkRecord reports why line is not a record, or "" if it is one.
func checkRecord(line []byte) string {
	if len(line) == 0 {
		return "empty line"
	}
	if json.Valid(line) {
		return ""
	}
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return err.Error()
	}
	return "invalid JSON" // not reached: json.Valid and json.Unmarshal agree
}

// lineNumber returns the 1-based number of the line starting at off, by
// counting the newlines before it. It is used only to report corruption.
func lineNumber(r io.ReaderAt, off int64) int {
	buf := make([]byte, 64<<10)
	n := 1
	for pos := int64(0); pos < off; {
		chunk := buf
		if rest := off - pos; rest < int64(len(chunk)) {
			chunk = chunk[:rest]
		}
		k, err := r.ReadAt(chunk, pos)
		n += bytes.Count(chunk[:k], []byte{'\n'})
		pos += int64(k)
		if err != nil && k == 0 {
			return 0 // unknown
		}
	}
	return n
}

// checkBoundary verifies that from is 0 or just past a '\n' of f, and not
// beyond end.
func checkBoundary(f io.ReaderAt, path string, from, end int64) error {
	if from < 0 || from > end {
		return fmt.Errorf("journal: read %s: offset %d is outside the journal (0..%d)", path, from, end)
	}
	if from == 0 {
		return nil
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], from-1); err != nil {
		return fmt.Errorf("journal: read %s: %w", path, err)
	}
	if b[0] != '\n' {
		return fmt.Errorf("journal: read %s: offset %d is not the start of a record", path, from)
	}
	return nil
}

// scanRange calls fn with each record of f between from and the end of r,
// where r reads f from offset from. If validate is set each record is checked
// to be valid JSON. A partial last line is ignored when allowTorn is set and is
// an error otherwise.
func scanRange(ctx context.Context, f io.ReaderAt, path string, r io.Reader, from int64,
	validate, allowTorn bool, fn func(rec []byte, next int64) error) error {
	s := newScanner(r, from)
	for n := 1; ; n++ {
		if n%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, start, err := s.next()
		switch err {
		case nil:
		case io.EOF:
			return nil
		case errTorn:
			if allowTorn {
				return nil
			}
			return fmt.Errorf("journal: read %s: partial line at byte %d (the file changed while it was read)", path, start)
		default:
			return fmt.Errorf("journal: read %s: %w", path, err)
		}
		if len(line) == 0 || validate {
			if reason := checkRecord(line); reason != "" {
				return &CorruptError{Path: path, Line: lineNumber(f, start), Offset: start, Reason: reason}
			}
		}
		if err := fn(line, s.off); err != nil {
			return err
		}
	}
}

// ReadFile reads the journal at path from byte offset from (0, or a value
// previously given as next) and calls fn with each record, without its '\n',
// and the offset just past it. It is for readers of a run that another process
// may be writing: it opens the file read-only and never repairs it. A trailing
// partial line is ignored (it may be an append in progress); a complete line
// that is not valid JSON stops the read with a [*CorruptError].
//
// The rec slice is only valid until fn returns: it may be overwritten by the
// next record. fn must copy what it keeps. An error returned by fn stops the
// read and is returned unchanged.
func ReadFile(ctx context.Context, path string, from int64, fn func(rec []byte, next int64) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("journal: read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("journal: read %s: %w", path, err)
	}
	if err := checkBoundary(f, path, from, fi.Size()); err != nil {
		return err
	}
	// Read to the end of the file as it is now (more may be appended).
	r := io.NewSectionReader(f, from, fi.Size()-from)
	return scanRange(ctx, f, path, r, from, true, true, fn)
}
