package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/anthropic"
	"github.com/fractal-harness/fractal/model/fake"
)

// benchTurn is a typical turn: ~200 tokens of text in 50 deltas, then one
// tool call whose input arrives in 5 pieces.
func benchTurn() []fake.Event {
	evs := []fake.Event{messageStart(3000, 2500, 0), textStart(0)}
	for i := range 50 {
		evs = append(evs, textDelta(0, fmt.Sprintf("word%02d and more ", i)))
		if i == 25 {
			evs = append(evs, ping())
		}
	}
	evs = append(evs, blockStop(0), toolStart(1, "toolu_bench", "write_file"))
	for _, p := range []string{`{"path": `, `"out/report.md", `, `"text": "# Q3 `, `summary\n"`, `}`} {
		evs = append(evs, jsonDelta(1, p))
	}
	return append(evs, blockStop(1), messageDelta("tool_use", 210), messageStop())
}

// bigAnswer is one text block of size bytes in 64-byte deltas.
func bigAnswer(size int) []fake.Event {
	piece := strings.Repeat("x", 63) + " "
	evs := []fake.Event{messageStart(100, 0, 0), textStart(0)}
	for range size / len(piece) {
		evs = append(evs, textDelta(0, piece))
	}
	return append(evs, blockStop(0), messageDelta("end_turn", size/4), messageStop())
}

func benchClient(b *testing.B, srv *fake.Server) *anthropic.Client {
	c, err := anthropic.New(anthropic.Config{APIKey: "sk-bench", BaseURL: srv.URL, Model: "claude-bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.CloseIdleConnections)
	return c
}

func benchRequest() model.Request {
	r := request()
	r.Messages = r.Messages[:1]
	return r
}

// BenchmarkTurn is the per-call cost of a streamed turn through the SDK
// against a zero-latency in-process server (whose own cost is included;
// BenchmarkBaselineHTTP measures that part alone).
func BenchmarkTurn(b *testing.B) {
	srv := fake.Repeat(fake.Raw(benchTurn()...))
	defer srv.Close()
	c := benchClient(b, srv)
	ctx := context.Background()
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Generate(ctx, req)
		if err != nil || len(resp.ToolCalls) != 1 {
			b.Fatal(resp, err)
		}
	}
}

// BenchmarkBaselineHTTP posts to the same server with a bare http.Client
// and discards the same body: the floor under BenchmarkTurn.
func BenchmarkBaselineHTTP(b *testing.B) {
	srv := fake.Repeat(fake.Raw(benchTurn()...))
	defer srv.Close()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := hc.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-bench","max_tokens":8192,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkLargeAnswer streams answers of 256 KiB to 4 MiB. B/op grows
// linearly with the answer (the ratio "B/op/answer" stays flat), and
// "peak-heap/answer" (live heap at its highest during one call, over the
// answer's size) stays a small constant: nothing holds the SSE body.
func BenchmarkLargeAnswer(b *testing.B) {
	for _, size := range []int{256 << 10, 1 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			srv := fake.Repeat(fake.Raw(bigAnswer(size)...))
			defer srv.Close()
			c := benchClient(b, srv)
			ctx := context.Background()
			req := benchRequest()
			var got int
			peak := fake.PeakHeap(func() {
				resp, err := c.Generate(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				got = len(resp.Text)
			})
			if got < size-64 {
				b.Fatalf("answer %d bytes", got)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Generate(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak)/float64(got), "peak-heap/answer")
		})
	}
}
