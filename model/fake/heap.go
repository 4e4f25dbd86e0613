package fake

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// PeakHeap runs fn and returns the largest amount of live heap, above what
// was live before, seen while it ran: it samples the heap every 100µs with
// the collector set to run often (GOGC=10), so that the figure tracks what
// fn holds rather than garbage waiting for a collection. Benchmarks use it
// to show that a streamed answer does not hold the whole stream.
func PeakHeap(fn func()) uint64 {
	old := debug.SetGCPercent(10)
	defer debug.SetGCPercent(old)
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	peak := base
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			if v := read(); v > peak {
				peak = v
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	if v := read(); v > peak {
		peak = v
	}
	return peak - base
}
