package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// DefaultMaxBatch is the default maximum number of records per group commit.
const DefaultMaxBatch = 4096

// maxKeptBuffer is the largest batch buffer kept for reuse after a flush.
const maxKeptBuffer = 8 << 20

// ErrClosed is returned by a Log after Close.
var ErrClosed = errors.New("journal: log is closed")

// Options configures a Log. The zero value is ready to use.
type Options struct {
	// Sync makes the written data of f durable. The default is fdatasync(2).
	// Tests inject a counter or a failure here.
	Sync func(f *os.File) error
	// MaxBatch is the maximum number of records written by one group commit
	// (one write and one sync). A single Enqueue larger than MaxBatch is still
	// written whole, alone. Default DefaultMaxBatch.
	MaxBatch int
}

// Fdatasync is the default Options.Sync: fdatasync(2) on f, retried on EINTR.
func Fdatasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}

// Log is an append-only journal file of records, one JSON value per line.
// It is safe for concurrent use. One flusher goroutine, owned by the Log and
// stopped by Close, writes and syncs the records of all pending Enqueue calls
// together (group commit).
type Log struct {
	path     string
	f        *os.File
	sync     func(*os.File) error
	maxBatch int
	repaired int64
	done     chan struct{} // closed when the flusher has exited

	mu      sync.Mutex
	wake    *sync.Cond // signalled when queue grows or closing is set
	queue   []*Pending // enqueued, not yet taken by the flusher
	qbuf    []byte     // the bytes of queue, in order
	spare   []byte     // a buffer for the next batch
	qEnd    int64      // end offset including queued records
	qLines  int        // line count including queued records
	end     int64      // durable end offset
	lines   int        // durable line count
	err     error      // sticky write or sync failure
	closing bool
	changed chan struct{} // closed and replaced when end advances
}

// Pending is the handle of one Enqueue call.
type Pending struct {
	n    int   // records
	size int64 // bytes including newlines
	line int   // line number of the first record
	off  int64 // offset of the first record
	done chan struct{}
	err  error // set before done is closed
}

func failed(err error) *Pending {
	p := &Pending{done: make(chan struct{}), err: err}
	close(p.done)
	return p
}

// Wait returns when the records of p are written and synced, or when writing
// or syncing them failed (the error of that failure), or when ctx is done
// (ctx.Err()). Records whose Wait was abandoned by ctx stay queued and may
// still be written.
func (p *Pending) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done returns a channel closed when Wait would return without blocking
// because the records were written and synced or failed.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Pos returns the 1-based line number and the byte offset of the first record
// of p. It is valid after Wait returned nil. For an Enqueue with no records it
// is the position the next record would take.
func (p *Pending) Pos() (line int, offset int64) { return p.line, p.off }

// Open opens the journal at path for appending, creating it (mode 0644) if it
// is absent. It reads the whole file: every complete line must be a valid
// record, otherwise Open fails with a [*CorruptError] and leaves the file
// unchanged. A partial last line (bytes after the last '\n') is an append that
// was never acknowledged; Open truncates it away and reports the number of
// bytes dropped through Repaired.
//
// The Log holds an exclusive flock on the file while it is open, so a second
// writer (in this or another process) fails with an error wrapping
// [ErrRunInUse].
func Open(path string, opt Options) (*Log, error) {
	if opt.Sync == nil {
		opt.Sync = Fdatasync
	}
	if opt.MaxBatch <= 0 {
		opt.MaxBatch = DefaultMaxBatch
	}
	created := false
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		created = true
	} else if errors.Is(err, os.ErrExist) {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("journal: open %s: %w", path, err)
	}
	l, err := open(path, f, created, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

func open(path string, f *os.File, created bool, opt Options) (*Log, error) {
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("journal: open %s: the journal is already open for writing by another Log or process: %w", path, ErrRunInUse)
		}
		return nil, fmt.Errorf("journal: open %s: lock: %w", path, err)
	}
	if created {
		if err := syncDir(path); err != nil {
			return nil, fmt.Errorf("journal: open %s: %w", path, err)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("journal: open %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("journal: open %s: not a regular file", path)
	}
	l := &Log{path: path, f: f, sync: opt.Sync, maxBatch: opt.MaxBatch,
		done: make(chan struct{}), changed: make(chan struct{})}
	l.wake = sync.NewCond(&l.mu)

	// Scan: count lines, validate each, find the end of the last complete one.
	r := io.NewSectionReader(f, 0, fi.Size())
	s := newScanner(r, 0)
	for {
		line, start, err := s.next()
		if err == io.EOF {
			break
		}
		if err == errTorn {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("journal: open %s: %w", path, err)
		}
		if reason := checkRecord(line); reason != "" {
			return nil, &CorruptError{Path: path, Line: l.lines + 1, Offset: start, Reason: reason}
		}
		l.lines++
	}
	l.end = s.off
	if torn := fi.Size() - l.end; torn > 0 {
		if err := f.Truncate(l.end); err != nil {
			return nil, fmt.Errorf("journal: repair %s: %w", path, err)
		}
		if err := opt.Sync(f); err != nil {
			return nil, fmt.Errorf("journal: repair %s: sync: %w", path, err)
		}
		l.repaired = torn
	}
	l.qEnd, l.qLines = l.end, l.lines
	go l.flusher()
	return l, nil
}

// Path returns the path of the journal file.
func (l *Log) Path() string { return l.path }

// Repaired returns the number of bytes of a torn last line that Open dropped
// (0 if the file ended with a complete line).
func (l *Log) Repaired() int64 { return l.repaired }

// End returns the byte offset just past the last durable record.
func (l *Log) End() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end
}

// Lines returns the number of durable records.
func (l *Log) Lines() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines
}

// Changed returns a channel that is closed when more records become durable
// (End advances), or when the Log breaks or closes. Live readers wait on it
// and then Replay from the offset they reached.
func (l *Log) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// Err returns the failure that broke the Log, or nil.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// validRecord reports why rec cannot be appended, or nil.
func validRecord(rec []byte) error {
	switch {
	case len(rec) == 0:
		return errors.New("empty record")
	case bytes.IndexByte(rec, '\n') >= 0:
		return errors.New("record contains a newline")
	case !json.Valid(rec):
		return errors.New("record is not valid JSON")
	}
	return nil
}

// Enqueue places recs at the end of the journal, in order and contiguous, and
// returns at once. The records are written by the Log's flusher together with
// those of other pending calls, in one write and one sync; Wait on the result
// to know they are durable. Enqueue order is file order.
//
// Each record must be non-empty, contain no '\n' and be valid JSON; otherwise
// nothing of this call is written and the Pending carries the error. The
// records are copied: the caller may reuse recs when Enqueue returns. After a
// write or sync failure the Pending carries that failure; after Close it
// carries ErrClosed.
func (l *Log) Enqueue(recs ...[]byte) *Pending {
	size := 0
	for i, rec := range recs {
		if err := validRecord(rec); err != nil {
			return failed(fmt.Errorf("journal: append %s: record %d of %d: %w; nothing was written", l.path, i+1, len(recs), err))
		}
		size += len(rec) + 1
	}
	p := &Pending{n: len(recs), size: int64(size), done: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		p.err = l.err
		close(p.done)
		return p
	}
	if l.closing {
		p.err = fmt.Errorf("journal: append %s: %w", l.path, ErrClosed)
		close(p.done)
		return p
	}
	p.line, p.off = l.qLines+1, l.qEnd
	l.qLines += p.n
	l.qEnd += p.size
	for _, rec := range recs {
		l.qbuf = append(l.qbuf, rec...)
		l.qbuf = append(l.qbuf, '\n')
	}
	l.queue = append(l.queue, p)
	if len(l.queue) == 1 {
		l.wake.Signal()
	}
	return p
}

// Append writes recs at the end of the journal and returns when they are
// durable (written and synced): it is Enqueue followed by Wait. If ctx ends
// first Append returns ctx.Err() and the records may still be written.
func (l *Log) Append(ctx context.Context, recs ...[]byte) error {
	return l.Enqueue(recs...).Wait(ctx)
}

// flusher is the Log's single writer goroutine.
func (l *Log) flusher() {
	defer close(l.done)
	var batch []*Pending
	for {
		l.mu.Lock()
		for len(l.queue) == 0 && !l.closing {
			l.wake.Wait()
		}
		if len(l.queue) == 0 { // closing and drained
			l.mu.Unlock()
			return
		}
		// Take whole Enqueue calls, up to maxBatch records (at least one call).
		k, recs, size := 0, 0, int64(0)
		for k < len(l.queue) && (k == 0 || recs+l.queue[k].n <= l.maxBatch) {
			recs += l.queue[k].n
			size += l.queue[k].size
			k++
		}
		batch = append(batch[:0], l.queue[:k]...)
		var data []byte
		if k == len(l.queue) {
			data, l.qbuf = l.qbuf, l.spare[:0]
			clear(l.queue)
			l.queue = l.queue[:0]
		} else {
			data = append(l.spare[:0], l.qbuf[:size]...)
			l.qbuf = l.qbuf[:copy(l.qbuf, l.qbuf[size:])]
			l.queue = l.queue[:copy(l.queue, l.queue[k:])]
			clear(l.queue[len(l.queue) : k+len(l.queue)])
		}
		l.spare = nil
		base := l.end
		l.mu.Unlock()

		err := l.write(data)

		l.mu.Lock()
		if cap(data) <= maxKeptBuffer {
			l.spare = data[:0]
		}
		if err != nil {
			l.err = err
			// Nothing after a failure is written: fail everything queued.
			batch = append(batch, l.queue...)
			clear(l.queue)
			l.queue, l.qbuf = l.queue[:0], l.qbuf[:0]
			// Best effort: cut off what was written but not made durable.
			_ = l.f.Truncate(base)
		} else {
			l.end += size
			l.lines += recs
		}
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
		for i, p := range batch {
			p.err = err
			close(p.done)
			batch[i] = nil
		}
	}
}

// write writes data at the end of the file and syncs it.
func (l *Log) write(data []byte) error {
	if len(data) == 0 {
		return nil // only empty Enqueue calls: a barrier, nothing to write
	}
	if _, err := l.f.Write(data); err != nil {
		return fmt.Errorf("journal: append %s: write: %w; the journal is broken, reopen it to continue", l.path, err)
	}
	if err := l.sync(l.f); err != nil {
		return fmt.Errorf("journal: append %s: sync: %w; the journal is broken, reopen it to continue", l.path, err)
	}
	return nil
}

// Close writes and syncs all pending records, stops the flusher and closes
// the file (which releases its lock). It returns the failure that broke the
// Log, if any. Close after Close returns an error wrapping ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		<-l.done
		return fmt.Errorf("journal: close %s: %w", l.path, ErrClosed)
	}
	l.closing = true
	l.wake.Signal()
	l.mu.Unlock()
	<-l.done

	l.mu.Lock()
	defer l.mu.Unlock()
	cerr := l.f.Close()
	if l.err != nil {
		return l.err
	}
	if cerr != nil {
		return fmt.Errorf("journal: close %s: %w", l.path, cerr)
	}
	return nil
}

// Replay reads the records from byte offset from (0 or a value previously
// given as next) up to the durable end at the time of the call, and calls fn
// with each record (without its '\n') and the offset just past it. Records
// appended during the Replay are not read; call Replay again from the last
// next to read them.
//
// The rec slice is only valid until fn returns: it aliases a read buffer that
// the next record overwrites, so fn must copy what it keeps. Replay allocates
// nothing per record. An error returned by fn stops Replay and is returned
// unchanged; Replay also stops when ctx is done.
//
// Replay reads through its own file descriptor, so it may run concurrently
// with appends and fn may call Append (the new records are not read).
func (l *Log) Replay(ctx context.Context, from int64, fn func(rec []byte, next int64) error) error {
	l.mu.Lock()
	end, closed := l.end, l.closing
	l.mu.Unlock()
	if closed {
		return fmt.Errorf("journal: replay %s: %w", l.path, ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.Open(l.path)
	if err != nil {
		return fmt.Errorf("journal: replay %s: %w", l.path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return fmt.Errorf("journal: replay %s: %w", l.path, err)
	} else if wfi, err := l.f.Stat(); err == nil && !os.SameFile(fi, wfi) {
		return fmt.Errorf("journal: replay %s: the file was replaced since it was opened", l.path)
	}
	if err := checkBoundary(f, l.path, from, end); err != nil {
		return err
	}
	r := io.NewSectionReader(f, from, end-from)
	return scanRange(ctx, f, l.path, r, from, false, false, fn)
}
