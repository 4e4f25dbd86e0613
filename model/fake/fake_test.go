package fake_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fractal-harness/fractal/model/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEventFraming(t *testing.T) {
	var b strings.Builder
	_ = fake.Event{Name: "message_stop", Data: `{"type":"message_stop"}`}.Write(&b)
	_ = fake.Event{Data: "line1\nline2"}.Write(&b)
	want := "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\ndata: line1\ndata: line2\n\n"
	if b.String() != want {
		t.Fatalf("%q", b.String())
	}
}

func TestSteps(t *testing.T) {
	reached := make(chan struct{}, 1)
	srv := fake.NewServer(
		fake.SSE(fake.Event{Data: "a"}),
		fake.Status(429, map[string]string{"Retry-After": "3"}, `{}`),
		fake.Cut(fake.Event{Data: "b"}),
		fake.Stall(reached, fake.Event{Data: "c"}),
	)
	defer srv.Close()
	hc := srv.Client()

	res, err := hc.Post(srv.URL+"/x", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.Header.Get("Content-Type") != "text/event-stream" || string(body) != "data: a\n\n" {
		t.Errorf("sse %q %v", body, res.Header)
	}

	res, err = hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "3" {
		t.Errorf("status %d %v", res.StatusCode, res.Header)
	}

	res, err = hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(res.Body)
	res.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut stream read error %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	res, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(res.Body).ReadString('\n')
	<-reached
	_, err = io.ReadAll(res.Body)
	res.Body.Close()
	if line != "data: c\n" || err == nil {
		t.Errorf("stall: %q %v", line, err)
	}

	res, err = hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 500 || srv.Count() != 5 || srv.Requests()[0].Path != "/x" || string(srv.Requests()[0].Body) != "{}" {
		t.Errorf("beyond the steps: %d, %d requests", res.StatusCode, srv.Count())
	}
}
