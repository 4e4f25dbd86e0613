package engine

import (
	"context"
	"testing"
	"time"
)

// Engine overhead (issue #2 performance): depth 2, branching 10, 5 worker
// turns per leaf, zero-latency scripted model.
func BenchmarkTreeZeroLatency(b *testing.B) {
	for b.Loop() {
		r, err := BenchTree(context.Background(), b.TempDir(), TreeBench{Branching: 10, Turns: 5, Pool: 16})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(r.PerTurn.Microseconds()), "µs/turn")
		b.ReportMetric(r.AllocsPerTurn, "allocs/turn")
	}
}

// Efficiency with 50 ms per model turn and a pool of 16: ideal makespan /
// wall time.
func BenchmarkTreeLatency50ms(b *testing.B) {
	for b.Loop() {
		r, err := BenchTree(context.Background(), b.TempDir(), TreeBench{Branching: 10, Turns: 5, Pool: 16, Latency: 50 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.Efficiency, "efficiency")
	}
}

// Fold speed through the Guard and resume time from a snapshot.
func BenchmarkFold(b *testing.B) {
	for b.Loop() {
		r, err := BenchFold(context.Background(), b.TempDir(), 200_000)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.EventsPerSec, "events/s")
		b.ReportMetric(float64(r.Resume.Milliseconds()), "resume-ms")
	}
}
