package watchdog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// DA-A5: the five thresholds' defaults.
func TestDefault(t *testing.T) {
	want := Limits{30 * time.Minute, 5, 30 * time.Minute, 60 * time.Minute, 30 * time.Second, 60 * time.Minute}
	if Default() != want {
		t.Fatalf("Default() = %+v", Default())
	}
	if New(want).Limits() != want {
		t.Fatal("Limits not kept")
	}
}

var args = Canonical(json.RawMessage(`{"path":"progress.md"}`))

// DA-A5: twenty identical calls trip once, at the fifth; a different call
// ends the run and a new run of five trips again.
func TestToolLoopOncePerRun(t *testing.T) {
	w := New(Default())
	var trips []int
	for i := 1; i <= 20; i++ {
		if tr := w.ToolCall("w1", "read_file", args, at(time.Duration(i)*time.Second), false); tr != nil {
			trips = append(trips, i)
			if tr.Kind != ToolLoop || tr.ID != "w1" || !tr.Since.Equal(at(time.Second)) || !strings.Contains(tr.Detail, "read_file 5 times") {
				t.Errorf("trip = %+v", tr)
			}
		}
	}
	if !slices.Equal(trips, []int{5}) {
		t.Fatalf("trips at calls %v, want [5]", trips)
	}
	if w.ToolCall("w1", "list_dir", args, at(time.Minute), false) != nil {
		t.Fatal("a different call tripped")
	}
	trips = nil
	for i := 1; i <= 6; i++ {
		if w.ToolCall("w1", "read_file", args, at(time.Hour), false) != nil {
			trips = append(trips, i)
		}
	}
	if !slices.Equal(trips, []int{5}) {
		t.Fatalf("after a break: trips at %v, want [5]", trips)
	}
}

// DA-A5, NOTES ("loop detectors that count a provider outage as a stuck
// agent"): calls whose result was a provider error neither count nor break
// the run.
func TestToolLoopProviderErrors(t *testing.T) {
	w := New(Default())
	for i := range 4 {
		if w.ToolCall("w1", "fetch", args, at(time.Duration(i)), false) != nil {
			t.Fatal("tripped early")
		}
	}
	for i := range 50 { // an outage: the same call, and others, failing upstream
		if w.ToolCall("w1", "fetch", args, at(time.Minute), true) != nil ||
			w.ToolCall("w1", "search", []byte(`{}`), at(time.Minute), true) != nil {
			t.Fatalf("provider error %d counted", i)
		}
	}
	if w.ToolCall("w1", "fetch", args, at(time.Hour), false) == nil {
		t.Fatal("the fifth real call did not trip")
	}
}

// DA-A5: the run is per instance, per tool, per canonical arguments.
func TestToolLoopIdentity(t *testing.T) {
	w := New(Default())
	a := Canonical(json.RawMessage(`{"b":1,"a":2}`))
	b := Canonical(json.RawMessage(` { "a" : 2 , "b" : 1 } `))
	for i := range 4 {
		w.ToolCall("w1", "t", a, at(time.Duration(i)), false)
		w.ToolCall("w2", "t", a, at(time.Duration(i)), false) // another instance's run
	}
	if w.ToolCall("w1", "t", b, at(time.Second), false) == nil {
		t.Fatal("reordered keys counted as a different call")
	}
	w2 := New(Default())
	for i := range 10 {
		name := "t"
		if i%2 == 1 {
			name = "u"
		}
		if w2.ToolCall("w1", name, a, at(0), false) != nil {
			t.Fatal("alternating calls tripped")
		}
	}
	w3 := New(Default())
	for i := range 10 {
		if w3.ToolCall("w1", "t", []byte(fmt.Sprintf(`{"n":%d}`, i%2)), at(0), false) != nil {
			t.Fatal("different arguments tripped")
		}
	}
	// The tool name and the arguments cannot blur into each other.
	w4 := New(Default())
	for range 4 {
		w4.ToolCall("w1", "ab", []byte("c"), at(0), false)
	}
	if w4.ToolCall("w1", "a", []byte("bc"), at(0), false) != nil {
		t.Fatal("name/argument boundary ignored")
	}
}

// DA-A5: a silent stall trips no_progress once; reads are not progress; a
// write re-arms it; a new relay session does not reset the clock.
func TestNoProgress(t *testing.T) {
	w := New(Default())
	w.Started(WorkerSession, "w1", at(0))
	for i := range 29 { // reading away, writing nothing
		w.ToolCall("w1", "read_file", []byte(fmt.Sprintf(`{"i":%d}`, i)), at(time.Duration(i)*time.Minute), false)
	}
	if tr := w.Check(at(30*time.Minute - time.Nanosecond)); tr != nil {
		t.Fatalf("tripped early: %v", tr)
	}
	tr := w.Check(at(30 * time.Minute))
	if len(tr) != 1 || tr[0].Kind != NoProgress || tr[0].ID != "w1" || !tr[0].Since.Equal(t0) || !tr[0].At.Equal(at(30*time.Minute)) {
		t.Fatalf("trip = %+v", tr)
	}
	if tr := w.Check(at(3 * time.Hour)); tr != nil {
		t.Fatalf("tripped twice for one stall: %v", tr)
	}
	w.Progress("w1", at(3*time.Hour))
	if tr := w.Check(at(3*time.Hour + 29*time.Minute)); tr != nil {
		t.Fatalf("tripped right after progress: %v", tr)
	}
	// The session hands off and a new one starts without writing: the
	// clock runs on from the last progress.
	w.Finished(WorkerSession, "w1", at(3*time.Hour+10*time.Minute))
	w.Started(WorkerSession, "w1", at(3*time.Hour+11*time.Minute))
	tr = w.Check(at(3*time.Hour + 30*time.Minute))
	if len(tr) != 1 || !tr[0].Since.Equal(at(3*time.Hour)) {
		t.Fatalf("a new session reset the clock: %+v", tr)
	}
}

// DA-A5: only a worker inside a session is watched for progress; a worker
// that keeps writing is never tripped, however long it works (no arbitrary
// caps, DA-A3).
func TestNoProgressScope(t *testing.T) {
	w := New(Default())
	w.Started(WorkerSession, "idle", at(0))
	w.Finished(WorkerSession, "idle", at(time.Minute))
	w.Progress("never-started", at(0))
	w.Started(WorkerSession, "busy", at(0))
	for m := time.Duration(0); m < 10*time.Hour; m += 20 * time.Minute {
		w.Progress("busy", at(m))
		if tr := w.Check(at(m + 19*time.Minute)); tr != nil {
			t.Fatalf("at %s: %v", m, tr)
		}
	}
	// Progress reported out of order does not move the clock back.
	w.Progress("busy", at(0))
	if tr := w.Check(at(9*time.Hour + 40*time.Minute + 29*time.Minute)); tr != nil {
		t.Fatalf("late progress moved the clock back: %v", tr)
	}
	w.Forget("busy")
	if tr := w.Check(at(100 * time.Hour)); tr != nil {
		t.Fatalf("forgotten instance tripped: %v", tr)
	}
}

// DA-A5: each timed activity trips once at its limit, and not at all when
// it finishes in time.
func TestTimers(t *testing.T) {
	l := Default()
	for _, c := range []struct {
		kind  Kind
		limit time.Duration
	}{
		{ReviewerSession, l.ReviewerSession}, {MetaTurn, l.MetaTurn}, {ToolCall, l.ToolCall}, {ModelCall, l.ModelCall},
	} {
		w := New(l)
		w.Started(c.kind, "slow", at(0))
		w.Started(c.kind, "quick", at(0))
		w.Finished(c.kind, "quick", at(c.limit-time.Nanosecond))
		if tr := w.Check(at(c.limit - time.Nanosecond)); tr != nil {
			t.Errorf("%s: tripped early: %v", c.kind, tr)
		}
		tr := w.Check(at(c.limit))
		if len(tr) != 1 || tr[0].Kind != c.kind || tr[0].ID != "slow" || !tr[0].Since.Equal(t0) {
			t.Errorf("%s: trips = %+v", c.kind, tr)
		}
		if tr := w.Check(at(10 * c.limit)); tr != nil {
			t.Errorf("%s: tripped twice: %v", c.kind, tr)
		}
		// Starting the same id again restarts its clock and re-arms it.
		w.Started(c.kind, "slow", at(10*c.limit))
		if tr := w.Check(at(11 * c.limit)); len(tr) != 1 {
			t.Errorf("%s: restarted activity: %v", c.kind, tr)
		}
		w.Finished(c.kind, "never-started", at(0)) // a no-op
	}
}

// Zero limits disable a condition; Check orders trips; an unknown kind is
// a caller's bug and panics.
func TestLimitsAndOrder(t *testing.T) {
	w := New(Limits{})
	w.Started(WorkerSession, "w", at(0))
	w.Started(ModelCall, "m", at(0))
	for range 100 {
		if w.ToolCall("w", "t", nil, at(0), false) != nil {
			t.Fatal("disabled tool loop tripped")
		}
	}
	if tr := w.Check(at(1000 * time.Hour)); tr != nil {
		t.Fatalf("disabled limits tripped: %v", tr)
	}
	w = New(Default())
	for _, id := range []string{"b", "a"} {
		w.Started(ModelCall, id, at(0))
		w.Started(MetaTurn, id, at(0))
		w.Started(WorkerSession, id, at(0))
	}
	var got []string
	for _, tr := range w.Check(at(24 * time.Hour)) {
		got = append(got, string(tr.Kind)+"/"+tr.ID)
	}
	want := []string{"meta_turn/a", "meta_turn/b", "model_call/a", "model_call/b", "no_progress/a", "no_progress/b"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("unknown kind accepted")
		}
	}()
	w.Started(NoProgress, "x", at(0))
}

// The engine calls from many goroutines.
func TestConcurrent(t *testing.T) {
	w := New(Default())
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint("w", g)
			for i := range 200 {
				w.Started(WorkerSession, id, at(0))
				w.Started(ToolCall, id, at(time.Duration(i)))
				w.ToolCall(id, "t", args, at(time.Duration(i)), i%3 == 0)
				w.Progress(id, at(time.Duration(i)))
				w.Finished(ToolCall, id, at(time.Duration(i)))
				w.Check(at(time.Duration(i) * time.Minute))
			}
		}()
	}
	wg.Wait()
}

func TestCanonicalCases(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":1,"a":2}`: `{"a":2,"b":1}`,
		" {\n \"a\" : [ 1 , {\"d\":null,\"c\":true} ] }": `{"a":[1,{"c":true,"d":null}]}`,
		`{"s":"<a href=\"x\">&amp;</a>"}`:                `{"s":"<a href=\"x\">&amp;</a>"}`,
		`{"s":"\u0041\n"}`:                               `{"s":"A\n"}`,
		`{"n":1.0e3}`:                                    `{"n":1.0e3}`,
		``:                                               `{}`,
		"  ":                                             `{}`,
		`"x"`:                                            `"x"`,
		`{"a":1,"a":2}`:                                  `{"a":2}`,
		`{"a":`:                                          `{"a":`, // not JSON: unchanged
		`{"a":1} {"b":2}`:                                `{"a":1} {"b":2}`,
	} {
		if got := string(Canonical(json.RawMessage(in))); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

// jsonValue draws a JSON value as decoded by encoding/json (with numbers as
// json.Number).
func jsonValue(depth int) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		kinds := 4
		if depth > 0 {
			kinds = 6
		}
		switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
		case 0:
			return nil
		case 1:
			return rapid.Bool().Draw(t, "bool")
		case 2:
			return json.Number(fmt.Sprint(rapid.IntRange(-1e6, 1e6).Draw(t, "int")))
		case 3:
			return rapid.String().Draw(t, "string")
		case 4:
			return rapid.SliceOfN(jsonValue(depth-1), 0, 4).Draw(t, "array")
		default:
			return rapid.MapOfN(rapid.StringN(0, 6, -1), jsonValue(depth-1), 0, 4).Draw(t, "object")
		}
	})
}

// encodeShuffled writes v as JSON with object keys in a drawn order and
// white space sprinkled between tokens.
func encodeShuffled(t *rapid.T, b *bytes.Buffer, v any) {
	ws := func() { b.WriteString(rapid.SampledFrom([]string{"", " ", "\n", "\t ", "  "}).Draw(t, "ws")) }
	ws()
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		keys = rapid.Permutation(keys).Draw(t, "order")
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			ws()
			b.WriteByte(':')
			encodeShuffled(t, b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeShuffled(t, b, e)
		}
		b.WriteByte(']')
	default:
		vb, _ := json.Marshal(x)
		b.Write(vb)
	}
	ws()
}

// DA-A5: the canonical form does not depend on key order or white space,
// is valid JSON with the same meaning, and is a fixed point.
func TestCanonicalProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := jsonValue(3).Draw(t, "value")
		var a, b bytes.Buffer
		encodeShuffled(t, &a, v)
		encodeShuffled(t, &b, v)
		ca, cb := Canonical(a.Bytes()), Canonical(b.Bytes())
		if !bytes.Equal(ca, cb) {
			t.Fatalf("%s and %s canonicalize differently:\n%s\n%s", a.Bytes(), b.Bytes(), ca, cb)
		}
		if !json.Valid(ca) || bytes.ContainsAny(ca, "\n\t") {
			t.Fatalf("not compact JSON: %s", ca)
		}
		if !bytes.Equal(Canonical(ca), ca) {
			t.Fatalf("not a fixed point: %s", ca)
		}
		var orig, back any
		_ = json.Unmarshal(a.Bytes(), &orig)
		_ = json.Unmarshal(ca, &back)
		if !reflect.DeepEqual(orig, back) {
			t.Fatalf("meaning changed: %s → %s", a.Bytes(), ca)
		}
	})
}
