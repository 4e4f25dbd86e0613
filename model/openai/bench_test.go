package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/fake"
	"github.com/fractal-harness/fractal/model/openai"
)

// benchTurn is a typical turn: ~200 tokens of text in 50 chunks, then one
// tool call whose arguments arrive in 5 pieces, the usage chunk, [DONE].
func benchTurn() []fake.Event {
	evs := []fake.Event{role()}
	for i := range 50 {
		evs = append(evs, content(fmt.Sprintf("word%02d and more ", i)))
	}
	evs = append(evs, callStart(0, "call_bench", "write_file"))
	for _, p := range []string{`{"path": `, `"out/report.md", `, `"text": "# Q3 `, `summary\n"`, `}`} {
		evs = append(evs, callArgs(0, p))
	}
	return append(evs, finish("tool_calls"), usage([]any{}, 3000, 210, 2500), done())
}

// bigAnswer is size bytes of text in 64-byte chunks.
func bigAnswer(size int) []fake.Event {
	piece := strings.Repeat("x", 63) + " "
	evs := []fake.Event{role()}
	for range size / len(piece) {
		evs = append(evs, content(piece))
	}
	return append(evs, finish("stop"), usage([]any{}, 100, size/4, 0), done())
}

func benchClient(b *testing.B, srv *fake.Server) *openai.Client {
	c, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "gpt-bench"})
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
		resp, err := hc.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"gpt-bench","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkLargeAnswer streams answers of 256 KiB to 4 MiB. B/op grows
// linearly with the answer, and "peak-heap/answer" (live heap at its
// highest during one call, over the answer's size) stays a small
// constant: nothing holds the SSE body.
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
