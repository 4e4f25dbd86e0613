package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fractal-harness/fractal/model"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const sample = `version: 1
sessions:
  - role: worker
    instance: root/special
    turns:
      - text: special instance
  - role: worker
    match: market
    attempt: 2
    turns:
      - text: market retry
  - role: worker
    match: market
    turns:
      - text: I will read the inputs first.
        tool_calls:
          - name: read_file
            args: {path: inputs/sales.csv}
          - name: write_file
            args_json: '{"path": '
        usage: {input: 1200, output: 80}
        stop_reason: custom
      - text: done
  - role: worker
    turns:
      - text: generic worker
  - role: meta
    turns:
      - text: meta speaking
`

func mustParse(t *testing.T, src string) *Script {
	t.Helper()
	s, err := Parse([]byte(src), "test.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

// history builds a conversation that already holds n assistant turns.
func history(n int) []model.Message {
	msgs := []model.Message{{Role: "user", Text: "go"}}
	for i := 0; i < n; i++ {
		msgs = append(msgs,
			model.Message{Role: "assistant", Text: "a", ToolCalls: []model.ToolCall{{ID: "x", Name: "t", Args: json.RawMessage(`{}`)}}},
			model.Message{Role: "user", ToolResults: []model.ToolResult{{CallID: "x", Content: "ok"}}})
	}
	return msgs
}

func TestSelection(t *testing.T) {
	s := mustParse(t, sample)
	tests := []struct {
		name string
		req  model.Request
		want string
	}{
		{"instance filter wins because it comes first", model.Request{Role: model.Worker, Instance: "root/special", Intent: "market study", Attempt: 2}, "special instance"},
		{"match and attempt", model.Request{Role: model.Worker, Instance: "root/a", Intent: "a market study", Attempt: 2}, "market retry"},
		{"match without attempt filter", model.Request{Role: model.Worker, Instance: "root/a", Intent: "a market study", Attempt: 1}, "I will read the inputs first."},
		{"match is a substring, case-sensitive", model.Request{Role: model.Worker, Intent: "Market study", Attempt: 1}, "generic worker"},
		{"role only", model.Request{Role: model.Worker, Intent: "other"}, "generic worker"},
		{"other role", model.Request{Role: model.Meta, Intent: "market"}, "meta speaking"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Messages = history(0)
			resp, err := s.Generate(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != tc.want {
				t.Errorf("text = %q, want %q", resp.Text, tc.want)
			}
			if resp.Model != "script" {
				t.Errorf("model = %q", resp.Model)
			}
		})
	}
}

func TestTurnFromHistory(t *testing.T) {
	s := mustParse(t, sample)
	req := model.Request{Role: model.Worker, Intent: "market", Attempt: 1, Messages: history(0)}
	first, err := s.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.ToolCalls) != 2 {
		t.Fatalf("tool calls = %+v", first.ToolCalls)
	}
	if got := first.ToolCalls[0]; got.ID != "call_0_0" || got.Name != "read_file" || string(got.Args) != `{"path":"inputs/sales.csv"}` {
		t.Errorf("first call = %+v (args %s)", got, got.Args)
	}
	// args_json is sent verbatim, even when it is not valid JSON, so a
	// script can test how the harness handles malformed arguments.
	if got := first.ToolCalls[1]; got.ID != "call_0_1" || string(got.Args) != `{"path": ` {
		t.Errorf("second call = %+v (args %q)", got, got.Args)
	}
	if first.Usage != (model.Usage{Input: 1200, Output: 80}) || first.StopReason != "custom" {
		t.Errorf("usage %+v stop %q", first.Usage, first.StopReason)
	}

	req.Messages = history(1)
	second, err := s.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if second.Text != "done" || second.StopReason != "end_turn" || len(second.ToolCalls) != 0 {
		t.Errorf("second = %+v", second)
	}

	// Determinism: the same request gets the same answer, whatever was
	// asked before.
	again, err := s.Generate(context.Background(), model.Request{Role: model.Worker, Intent: "market", Attempt: 1, Messages: history(0)})
	if err != nil {
		t.Fatal(err)
	}
	if again.Text != first.Text || string(again.ToolCalls[0].Args) != string(first.ToolCalls[0].Args) {
		t.Errorf("replay differs: %+v", again)
	}
}

func TestStopReasonAndEstimatedUsage(t *testing.T) {
	s := &Script{Version: 1, Sessions: []Session{{Role: model.Worker, Turns: []Turn{
		{Text: "abcdefgh", ToolCalls: []Call{{Name: "list_dir", Args: map[string]any{"path": "in"}}}},
	}}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	req := model.Request{Role: model.Worker, System: strings.Repeat("s", 40), Messages: []model.Message{
		{Role: "user", Text: strings.Repeat("u", 20), ToolResults: []model.ToolResult{{Content: strings.Repeat("r", 20)}}},
	}}
	resp, err := s.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != "tool_use" {
		t.Errorf("stop = %q", resp.StopReason)
	}
	// input: 40+20+20 bytes = 20 tokens; output: 8 + len(`{"path":"in"}`)=13 → 21 bytes → 6.
	if resp.Usage != (model.Usage{Input: 20, Output: 6}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

func TestExhausted(t *testing.T) {
	s := mustParse(t, sample)
	_, err := s.Generate(context.Background(), model.Request{Role: model.Worker, Intent: "market", Attempt: 1, Messages: history(2)})
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted", err)
	}
	for _, want := range []string{"test.yaml", "sessions[2]", `match "market"`, "2 turn(s)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestNoSession(t *testing.T) {
	s := mustParse(t, sample)
	long := strings.Repeat("x", 500)
	_, err := s.Generate(context.Background(), model.Request{Role: model.Reviewer, Instance: "root/r", Intent: long})
	if !errors.Is(err, ErrNoSession) {
		t.Fatalf("err = %v, want ErrNoSession", err)
	}
	msg := err.Error()
	for _, want := range []string{`role "reviewer"`, `instance "root/r"`, "xxxx…"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if len(msg) > 300 {
		t.Errorf("long intent not truncated: %d bytes", len(msg))
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // regexp on the whole message
	}{
		{"malformed yaml", "version: 1\nsessions:\n  - role: worker\n    turns: [\n", `^t\.yaml:4:\d+: `},
		{"unknown key", "version: 1\nsessions:\n  - role: worker\n    turns:\n      - text: hi\n        txet: ho\n", `^t\.yaml:6:9: sessions\[0\]\.turns\[0\]: unknown key "txet" \(known: text, tool_calls, usage, latency, stop_reason\)$`},
		{"unknown top key", "version: 1\nsesions: []\n", `^t\.yaml:2:1: unknown key "sesions"`},
		{"float for int", "version: 1.5\nsessions: []\n", `^t\.yaml:1:10: version: want an integer, got the number 1\.5$`},
		{"string for int", "version: 1\nsessions:\n  - role: worker\n    attempt: \"2\"\n    turns: [{text: a}]\n", `^t\.yaml:4:14: sessions\[0\]\.attempt: want an integer, got text "2"$`},
		{"mapping for text", "version: 1\nsessions:\n  - role: worker\n    turns:\n      - text: {a: 1}\n", `^t\.yaml:5:\d+: sessions\[0\]\.turns\[0\]\.text: want a text value, got a mapping$`},
		{"list for args", "version: 1\nsessions:\n  - role: worker\n    turns:\n      - tool_calls:\n          - name: x\n            args: [1]\n", `^t\.yaml:7:19: sessions\[0\]\.turns\[0\]\.tool_calls\[0\]\.args: want a mapping`},
		{"bad duration", "version: 1\nlatency: 5x\nsessions: []\n", `^t\.yaml:2:10: latency: bad duration "5x"`},
		{"duration without unit", "version: 1\nlatency: 200\nsessions: []\n", `^t\.yaml:2:10: latency: bad duration 200: give a unit`},
		{"wrong version", "version: 2\nsessions: []\n", `^t\.yaml:1:10: version: unsupported version 2`},
		{"missing version", "sessions:\n  - role: worker\n    turns: [{text: a}]\n", `^t\.yaml:1:1: version: missing version`},
		{"no sessions", "version: 1\n", `^t\.yaml:1:1: sessions: no sessions`},
		{"unknown role", "version: 1\nsessions:\n  - role: boss\n    turns: [{text: a}]\n", `^t\.yaml:3:11: sessions\[0\]\.role: unknown role "boss": want one of meta, worker, reviewer, watcher$`},
		{"missing role", "version: 1\nsessions:\n  - match: x\n    turns: [{text: a}]\n", `^t\.yaml:3:5: sessions\[0\]\.role: missing role`},
		{"no turns", "version: 1\nsessions:\n  - role: worker\n  - role: meta\n    turns: []\n", `^t\.yaml:3:5: sessions\[0\]\.turns: no turns`},
		{"empty tool name", "version: 1\nsessions:\n  - role: worker\n    turns:\n      - tool_calls:\n          - args: {a: 1}\n", `^t\.yaml:6:13: sessions\[0\]\.turns\[0\]\.tool_calls\[0\]\.name: missing tool name$`},
		{"args and args_json", "version: 1\nsessions:\n  - role: worker\n    turns:\n      - tool_calls:\n          - name: x\n            args: {a: 1}\n            args_json: '{}'\n", `^t\.yaml:6:13: sessions\[0\]\.turns\[0\]\.tool_calls\[0\]: both args and args_json`},
		{"args not JSON", "version: 1\nsessions:\n  - role: worker\n    turns:\n      - tool_calls:\n          - name: x\n            args: {a: .inf}\n", `^t\.yaml:7:\d+: sessions\[0\]\.turns\[0\]\.tool_calls\[0\]\.args: arguments do not encode as JSON`},
		{"negative usage", "version: 1\nsessions:\n  - role: worker\n    turns:\n      - usage: {input: -1}\n", `^t\.yaml:5:\d+: sessions\[0\]\.turns\[0\]\.usage: negative token count$`},
		{"unknown usage key", "version: 1\nsessions:\n  - role: worker\n    turns:\n      - usage: {inptu: 1}\n", `^t\.yaml:5:\d+: sessions\[0\]\.turns\[0\]\.usage: unknown key "inptu"`},
		{"duplicate key", "version: 1\nversion: 1\n", `^t\.yaml:2:1: .*version`},
		{"two documents", "version: 1\nsessions: []\n---\nversion: 1\n", `^t\.yaml:4:1: a script is one YAML document`},
		{"empty", "  \n# only a comment\n", `^t\.yaml: empty script`},
		{"not a mapping", "- a\n", `^t\.yaml:1:1: want a mapping, got a list$`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "t.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			if !regexp.MustCompile(tc.want).MatchString(msg) {
				t.Errorf("error = %q, want match %q", msg, tc.want)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	src := `version: 1
latency: 1.5s
sessions:
  - role: worker
    attempt: 0
    match: 2024          # a number where text is expected is its text
    turns:
      - &greet
        text: |
          multi
          line
        latency: 0
        tool_calls:
          - name: x
            args: {n: 1, list: [a, 2, true, null], nested: {k: v}}
          - name: y
      - *greet
`
	s := mustParse(t, src)
	if s.Latency != Duration(1500*time.Millisecond) || s.Sessions[0].Match != "2024" {
		t.Errorf("parsed %+v", s)
	}
	if got := s.Sessions[0].Turns; len(got) != 2 || got[1].Text != "multi\nline\n" {
		t.Errorf("turns %+v", got)
	}
	resp, err := s.WithLatency(0).Generate(context.Background(), model.Request{Role: model.Worker, Intent: "x 2024"})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.ToolCalls[0].Args) != `{"list":["a",2,true,null],"n":1,"nested":{"k":"v"}}` || string(resp.ToolCalls[1].Args) != `{}` {
		t.Errorf("args %s %s", resp.ToolCalls[0].Args, resp.ToolCalls[1].Args)
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.yaml")
	if err := os.WriteFile(path, []byte("version: 1\nsessions:\n  - role: meta\n    turns:\n      - txt: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":5:9: ") {
		t.Errorf("err = %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestValidateGoScript(t *testing.T) {
	s := &Script{Version: 1, Sessions: []Session{{Role: model.Worker, Turns: []Turn{{}, {ToolCalls: []Call{{Name: ""}}}}}}}
	err := s.Validate()
	if err == nil || err.Error() != "script: sessions[0].turns[1].tool_calls[0].name: missing tool name" {
		t.Errorf("err = %v", err)
	}
}

func TestLatencyHonoursContext(t *testing.T) {
	s := &Script{Version: 1, Latency: Duration(time.Hour), Sessions: []Session{{Role: model.Worker, Turns: []Turn{{Text: "slow"}}}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Generate(ctx, model.Request{Role: model.Worker})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}

	// An already cancelled context is refused before any waiting.
	if _, err := s.Generate(ctx, model.Request{Role: model.Worker}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestLatencyApplied(t *testing.T) {
	s := &Script{Version: 1, Latency: Duration(time.Hour), Sessions: []Session{{Role: model.Worker, Turns: []Turn{
		{Text: "turn latency", Latency: Duration(20 * time.Millisecond)},
	}}}}
	if got := s.delay(&s.Sessions[0].Turns[0]); got != 20*time.Millisecond {
		t.Errorf("turn latency: delay = %v", got)
	}
	fast := s.WithLatency(0)
	if got := fast.delay(&fast.Sessions[0].Turns[0]); got != 0 {
		t.Errorf("WithLatency(0): delay = %v", got)
	}
	if s.overridden {
		t.Error("WithLatency changed the original")
	}
	// The wait happens: a deadline shorter than the turn's latency expires.
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := s.WithLatency(time.Hour).Generate(ctx, model.Request{Role: model.Worker}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want deadline exceeded", err)
	}
	if _, err := fast.Generate(ctx, model.Request{Role: model.Worker}); err == nil {
		t.Error("expired context accepted")
	}
	resp, err := s.Generate(context.Background(), model.Request{Role: model.Worker})
	if err != nil || resp.Text != "turn latency" {
		t.Errorf("resp %+v err %v", resp, err)
	}
}

// Parallel instances share one Script; answers depend on each request only.
func TestConcurrent(t *testing.T) {
	s := mustParse(t, sample).WithLatency(0)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				turn := (g + i) % 2
				resp, err := s.Generate(context.Background(), model.Request{Role: model.Worker, Intent: "market", Attempt: 1, Messages: history(turn)})
				if err != nil {
					errs <- err
					return
				}
				want := []string{"I will read the inputs first.", "done"}[turn]
				if resp.Text != want {
					errs <- fmt.Errorf("turn %d: got %q", turn, resp.Text)
					return
				}
				if turn == 0 {
					resp.ToolCalls[0].Args[0] = 'X' // must not leak into the script
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// The complete example in the user reference must stay a valid script that
// behaves as the reference says.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/script-format.md")
	if err != nil {
		t.Skip("docs not present:", err)
	}
	m := regexp.MustCompile("(?s)## A complete example\n\n```yaml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("example not found in docs/script-format.md")
	}
	s, err := Parse(m[1], "script-format.md")
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithLatency(0)
	ask := func(req model.Request) model.Response {
		t.Helper()
		resp, err := s.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	market := model.Request{Role: model.Worker, Instance: "root/market", Intent: "market analysis of sales.csv", Attempt: 1}
	if got := ask(market).Text; got != "I will read the inputs first." {
		t.Errorf("attempt 1: %q", got)
	}
	market.Attempt = 2
	if got := ask(market).Text; got != "Retrying with the corrected column names." {
		t.Errorf("attempt 2: %q", got)
	}
	market.Attempt, market.Messages = 1, history(1)
	if got := ask(market).ToolCalls[0]; string(got.Args) != `{"path": ` || got.ID != "call_1_0" {
		t.Errorf("malformed call: %+v", got)
	}
	if got := ask(model.Request{Role: model.Worker, Instance: "root/summary", Intent: "one-page summary"}).Text; got != "Summary written." {
		t.Errorf("summary: %q", got)
	}
	if _, err := s.Generate(context.Background(), model.Request{Role: model.Watcher}); !errors.Is(err, ErrNoSession) {
		t.Errorf("watcher: %v", err)
	}
}
