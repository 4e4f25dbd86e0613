package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// benchRecord returns a record of about 200 bytes, like a small event.
func benchRecord(buf []byte, appender, seq int) []byte {
	buf = append(buf[:0], `{"type":"bench_event","appender":`...)
	buf = strconv.AppendInt(buf, int64(appender), 10)
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendInt(buf, int64(seq), 10)
	buf = append(buf, `,"pad":"`...)
	for len(buf) < 198 {
		buf = append(buf, 'x')
	}
	return append(buf, `"}`...)
}

// BenchAppend measures durable appends with the default fdatasync: it creates
// a new journal in dir, runs appenders goroutines that each Append one record
// (about 200 bytes) at a time until total records are durable, and returns
// the throughput in records per second and the number of syncs performed.
// The journal file is removed afterwards. It is what `fractal bench` runs.
func BenchAppend(dir string, appenders, total int) (eventsPerSec float64, syncs int, err error) {
	if appenders < 1 || total < 1 {
		return 0, 0, fmt.Errorf("journal: bench: appenders (%d) and total (%d) must be positive", appenders, total)
	}
	f, err := os.CreateTemp(dir, "bench-*.jsonl")
	if err != nil {
		return 0, 0, fmt.Errorf("journal: bench: %w", err)
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)

	var nsync atomic.Int64
	l, err := Open(path, Options{Sync: func(f *os.File) error {
		nsync.Add(1)
		return Fdatasync(f)
	}})
	if err != nil {
		return 0, 0, err
	}
	nsync.Store(0)

	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, appenders)
	start := time.Now()
	for a := range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				seq := int(next.Add(1))
				if seq > total {
					return
				}
				buf = benchRecord(buf, a, seq)
				if err := l.Append(ctx, buf); err != nil {
					errs[a] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	syncs = int(nsync.Load())
	if err := errors.Join(append(errs, l.Close())...); err != nil {
		return 0, syncs, err
	}
	if l.Lines() != total {
		return 0, syncs, fmt.Errorf("journal: bench: %d records durable, want %d", l.Lines(), total)
	}
	return float64(total) / elapsed.Seconds(), syncs, nil
}
