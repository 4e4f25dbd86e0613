// Package fake serves scripted HTTP answers in-process, for the tests and
// benchmarks of the provider packages: a Server answers its n-th request
// with its n-th Step, and records every request it received.
//
// Steps speak Server-Sent Events exactly as the providers document them
// (an optional "event:" line, "data:" lines, a blank line; each event
// flushed at once), and can fail the ways real servers fail: an HTTP error
// status with headers, a connection cut in the middle of a stream, a stream
// that stalls until the client gives up.
//
// The package has no knowledge of either protocol's payloads: the
// provider tests build the events they need.
package fake

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Event is one Server-Sent Event. An empty Name writes no "event:" line
// (the OpenAI framing); Data is written as one "data:" line per line of it.
type Event struct {
	Name string
	Data string
}

// Write writes e in SSE framing.
func (e Event) Write(w io.Writer) error {
	var b strings.Builder
	if e.Name != "" {
		b.WriteString("event: ")
		b.WriteString(e.Name)
		b.WriteByte('\n')
	}
	for _, line := range strings.Split(e.Data, "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// Step answers one request.
type Step func(w http.ResponseWriter, r *http.Request)

// Request is what the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Server is an httptest.Server answering requests with its steps in order.
// A request beyond the last step gets a 500 that names the problem, so a
// test that retries more than it expected fails visibly.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	steps    []Step
	requests []Request
	stop     chan struct{}
	once     sync.Once
}

// NewServer starts a server answering with steps.
func NewServer(steps ...Step) *Server {
	s := &Server{steps: steps, stop: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Repeat starts a server answering every request with step; benchmarks
// use it.
func Repeat(step Step) *Server {
	s := &Server{stop: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		step(w, r)
	}))
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	var step Step
	if n < len(s.steps) {
		step = s.steps[n]
	}
	s.mu.Unlock()
	if step == nil {
		http.Error(w, fmt.Sprintf(`{"error":"fake: no step for request %d"}`, n+1), http.StatusInternalServerError)
		return
	}
	step(w, r.WithContext(withStop(r, s.stop)))
}

// Close releases stalled steps, then shuts the server down.
func (s *Server) Close() {
	s.once.Do(func() { close(s.stop) })
	s.Server.Close()
}

// Requests returns a copy of the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count is the number of requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// SSE answers 200 with events, each flushed as it is written.
func SSE(events ...Event) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		writeEvents(w, events)
	}
}

// Raw answers 200 with events rendered once, up front, and written in one
// piece: benchmarks use it so that the server's own cost per request stays
// small and constant, and what is measured is the client.
func Raw(events ...Event) Step {
	var b strings.Builder
	for _, e := range events {
		_ = e.Write(&b)
	}
	body := b.String()
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
	}
}

// Status answers with an error status, headers and a body (JSON).
func Status(code int, header map[string]string, body string) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// Cut writes events, then hijacks the connection and closes it without
// ending the chunked body: the client sees the stream break mid-way, as
// when a proxy or the server resets the connection.
func Cut(events ...Event) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		writeEvents(w, events)
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic(http.ErrAbortHandler)
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		_ = buf.Flush()
		_ = conn.Close()
	}
}

// Stall writes events, signals reached (if not nil), then sends nothing
// more until the client goes away or the server closes.
func Stall(reached chan<- struct{}, events ...Event) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		writeEvents(w, events)
		if reached != nil {
			select {
			case reached <- struct{}{}:
			default:
			}
		}
		<-r.Context().Done()
	}
}

func writeEvents(w http.ResponseWriter, events []Event) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	bw := bufio.NewWriter(w)
	for _, e := range events {
		if e.Write(bw) != nil {
			return
		}
		if bw.Flush() != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
	}
}

// withStop returns r's context, also ended when stop closes, so a stalled
// step never holds up Server.Close. The goroutine ends with the request.
func withStop(r *http.Request, stop <-chan struct{}) context.Context {
	ctx, cancel := context.WithCancel(r.Context())
	go func() {
		defer cancel()
		select {
		case <-stop:
		case <-ctx.Done():
		}
	}()
	return ctx
}
