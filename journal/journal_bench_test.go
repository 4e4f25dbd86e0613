package journal

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// Benchmarks use the default Sync (real fdatasync) and b.TempDir(), so the
// figures depend on the disk under the temporary directory.

// BenchmarkAppendSerial: one appender, one ~200-byte record per durable
// Append (one write and one fdatasync each).
func BenchmarkAppendSerial(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "events.jsonl"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	buf := benchRecord(nil, 0, 0)
	b.SetBytes(int64(len(buf) + 1))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		buf = benchRecord(buf, 0, i)
		if err := l.Append(ctx, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkAppendConcurrent32: per op, 32 goroutines each durably append one
// ~200-byte record; group commit lets them share writes and syncs.
func BenchmarkAppendConcurrent32(b *testing.B) {
	const appenders = 32
	var syncs atomic.Int64
	l, err := Open(filepath.Join(b.TempDir(), "events.jsonl"), Options{Sync: func(f *os.File) error {
		syncs.Add(1)
		return Fdatasync(f)
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	bufs := make([][]byte, appenders)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		var wg sync.WaitGroup
		for a := range appenders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bufs[a] = benchRecord(bufs[a], a, i)
				if err := l.Append(ctx, bufs[a]); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(appenders*b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(syncs.Load())/float64(b.N), "syncs/op")
}

// BenchmarkReplay: replay a journal of 1,000,000 records of ~200 bytes.
func BenchmarkReplay(b *testing.B) {
	const records = 1_000_000
	path := filepath.Join(b.TempDir(), "events.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var buf []byte
	for i := range records {
		buf = benchRecord(buf, i%32, i)
		w.Write(buf)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	l, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.SetBytes(l.End())
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		n := 0
		if err := l.Replay(ctx, 0, func(rec []byte, next int64) error {
			n++
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if n != records {
			b.Fatalf("replayed %d records", n)
		}
	}
	b.ReportMetric(float64(records*b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchAppend is what `fractal bench` runs; check that it works and counts
// syncs (a small run, real fdatasync).
func TestBenchAppend(t *testing.T) {
	dir := t.TempDir()
	eps, syncs, err := BenchAppend(dir, 8, 200)
	if err != nil {
		t.Fatal(err)
	}
	if eps <= 0 || syncs < 1 || syncs > 200 {
		t.Errorf("BenchAppend = %.0f events/s, %d syncs", eps, syncs)
	}
	t.Logf("%.0f events/s, %d syncs for 200 records", eps, syncs)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("BenchAppend left %d files", len(entries))
	}
	if _, _, err := BenchAppend(dir, 0, 10); err == nil {
		t.Error("BenchAppend accepted 0 appenders")
	}
}
