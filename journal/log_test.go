package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// DA-A4: a new journal is created; appended records are durable and replayed
// in order with their positions.
func TestOpenCreateAppendReplay(t *testing.T) {
	path := tempJournal(t)
	var syncs atomic.Int64
	l := openT(t, path, Options{Sync: countingSync(&syncs, 0)})
	if l.Lines() != 0 || l.End() != 0 || l.Repaired() != 0 {
		t.Fatalf("new log: lines %d end %d repaired %d", l.Lines(), l.End(), l.Repaired())
	}
	ctx := context.Background()
	if err := l.Append(ctx, rec(1)); err != nil {
		t.Fatal(err)
	}
	p := l.Enqueue(rec(2), rec(3))
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if line, off := p.Pos(); line != 2 || off != int64(len(rec(1))+1) {
		t.Errorf("Pos = %d, %d; want 2, %d", line, off, len(rec(1))+1)
	}
	want := joinLines(rec(1), rec(2), rec(3))
	if got := readFile(t, path); !bytes.Equal(got, want) {
		t.Errorf("file = %q; want %q", got, want)
	}
	if l.Lines() != 3 || l.End() != int64(len(want)) {
		t.Errorf("Lines %d End %d; want 3 %d", l.Lines(), l.End(), len(want))
	}
	if syncs.Load() != 2 {
		t.Errorf("syncs = %d; want 2 (one per group commit)", syncs.Load())
	}
	recs, nexts := collect(t, l, 0)
	if len(recs) != 3 || recs[2] != string(rec(3)) || nexts[2] != int64(len(want)) {
		t.Errorf("Replay = %q %v", recs, nexts)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopen: the count and end are recovered by the scan.
	l2 := openT(t, path, Options{})
	if l2.Lines() != 3 || l2.End() != int64(len(want)) || l2.Repaired() != 0 {
		t.Errorf("reopen: lines %d end %d repaired %d", l2.Lines(), l2.End(), l2.Repaired())
	}
	if err := l2.Append(ctx, rec(4)); err != nil {
		t.Fatal(err)
	}
	// An Enqueue with no records is a barrier: done once all before it are durable.
	if p := l2.Enqueue(); p.Wait(ctx) != nil {
		t.Fatal("empty Enqueue failed")
	} else if line, _ := p.Pos(); line != 5 || l2.Lines() != 4 {
		t.Errorf("empty Enqueue: Pos line %d, Lines %d; want 5, 4", line, l2.Lines())
	}
	if p := l2.Enqueue(rec(5)); p.Wait(ctx) != nil {
		t.Fatal("append failed")
	} else if line, off := p.Pos(); line != 5 || off != int64(len(want)+len(rec(4))+1) {
		t.Errorf("Pos after reopen = %d, %d", line, off)
	}
}

// DA-A4: a torn last line is repaired, at every byte position of the last
// record, even when the partial bytes are valid JSON; the prior records replay
// intact and appending continues after them.
func TestTornTailRepaired(t *testing.T) {
	prior := [][]byte{rec(1), []byte(`{"type":"x","s":"a\nb"}`), rec(3)}
	last := []byte(`{"type":"torn","s":"héllo wörld","n":[1,2,3]}`)
	head := joinLines(prior...)
	type tc struct {
		name string
		cut  int // bytes of last present
	}
	var cases []tc
	for cut := 0; cut <= len(last); cut++ {
		cases = append(cases, tc{fmt.Sprintf("cut=%d", cut), cut})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := tempJournal(t)
			writeFile(t, path, append(append([]byte{}, head...), last[:c.cut]...))
			var syncs atomic.Int64
			l := openT(t, path, Options{Sync: countingSync(&syncs, 0)})
			if l.Repaired() != int64(c.cut) {
				t.Errorf("Repaired = %d; want %d", l.Repaired(), c.cut)
			}
			if c.cut > 0 && syncs.Load() != 1 {
				t.Errorf("the repair was not synced (syncs %d)", syncs.Load())
			}
			if got := readFile(t, path); !bytes.Equal(got, head) {
				t.Errorf("file after repair = %q; want %q", got, head)
			}
			if l.Lines() != len(prior) || l.End() != int64(len(head)) {
				t.Errorf("Lines %d End %d", l.Lines(), l.End())
			}
			recs, _ := collect(t, l, 0)
			if len(recs) != len(prior) {
				t.Fatalf("replayed %d records; want %d", len(recs), len(prior))
			}
			for i := range prior {
				if recs[i] != string(prior[i]) {
					t.Errorf("record %d = %q; want %q", i, recs[i], prior[i])
				}
			}
			if err := l.Append(context.Background(), last); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); !bytes.Equal(got, joinLines(append(prior, last)...)) {
				t.Errorf("file after append = %q", got)
			}
		})
	}
}

// DA-A4: a corrupt line that is not the partial last one is refused with an
// error naming its line and byte, never skipped, and the file is left
// byte-identical.
func TestCorruptLineRefused(t *testing.T) {
	a, b := rec(1), rec(2)
	cases := []struct {
		name    string
		content []byte
		line    int
		offset  int64
		reason  string
	}{
		{"invalid middle line", []byte(string(joinLines(a, b)) + "{\"a\":\n" + string(joinLines(a))), 3, int64(2 * (len(a) + 1)), "unexpected end of JSON input"},
		{"empty middle line", []byte(string(joinLines(a)) + "\n" + string(joinLines(b))), 2, int64(len(a) + 1), "empty line"},
		{"corrupt first line", []byte("not json\n" + string(joinLines(a))), 1, 0, "invalid character"},
		{"corrupt last complete line", []byte(string(joinLines(a, b)) + "{oops}\n"), 3, int64(2 * (len(a) + 1)), "invalid character"},
		{"corrupt middle and torn tail", []byte(string(joinLines(a)) + "[1,\n" + string(joinLines(b)) + `{"par`), 2, int64(len(a) + 1), "unexpected end"},
		{"two records on a line", []byte(string(joinLines(a)) + string(a) + string(b) + "\n"), 2, int64(len(a) + 1), "invalid character"},
		{"binary garbage", []byte(string(joinLines(a)) + "\x00\xff\x01\n"), 2, int64(len(a) + 1), "invalid character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := tempJournal(t)
			writeFile(t, path, c.content)
			before, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Open(path, Options{Sync: nopSync})
			if err == nil {
				l.Close()
				t.Fatal("Open succeeded on a corrupt journal")
			}
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T) is not a *CorruptError", err, err)
			}
			if ce.Path != path || ce.Line != c.line || ce.Offset != c.offset || !strings.Contains(ce.Reason, c.reason) {
				t.Errorf("CorruptError = %+v; want line %d offset %d reason ~%q", ce, c.line, c.offset, c.reason)
			}
			wantMsg := fmt.Sprintf("journal: %s line %d (byte %d) is not valid JSON: ", path, c.line, c.offset)
			if msg := err.Error(); !strings.HasPrefix(msg, wantMsg) || !strings.HasSuffix(msg, "; the file was left unchanged") {
				t.Errorf("message %q", msg)
			}
			if got := readFile(t, path); !bytes.Equal(got, c.content) {
				t.Errorf("file changed: %q; want %q", got, c.content)
			}
			after, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("file modified: mtime %v -> %v", before.ModTime(), after.ModTime())
			}
			// ReadFile refuses it the same way.
			err = ReadFile(context.Background(), path, 0, func([]byte, int64) error { return nil })
			if !errors.As(err, &ce) || ce.Line != c.line || ce.Offset != c.offset {
				t.Errorf("ReadFile error = %v; want line %d", err, c.line)
			}
			// A refused journal can be opened again once fixed (the lock was released).
			writeFile(t, path, joinLines(a))
			l = openT(t, path, Options{})
			if l.Lines() != 1 {
				t.Errorf("Lines after fix = %d", l.Lines())
			}
		})
	}
}

// DA-A4: concurrent appenders (64 goroutines x 100 records, in Enqueue batches
// of 1 to 4 records) -> every record is in the file exactly once, the records
// of one Enqueue are contiguous and in order, each goroutine's records are in
// its order, and Pos reports where each batch landed.
func TestConcurrentAppenders(t *testing.T) {
	const goroutines, perG = 64, 100
	path := tempJournal(t)
	l := openT(t, path, Options{MaxBatch: 37})
	type pos struct {
		line int
		off  int64
	}
	type key struct{ g, seq int }
	positions := make([]map[int]pos, goroutines) // per goroutine: first seq of batch -> pos
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		positions[g] = map[int]pos{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(g), 1))
			for seq := 0; seq < perG; {
				n := min(1+rnd.IntN(4), perG-seq)
				var recs [][]byte
				for i := range n {
					recs = append(recs, []byte(fmt.Sprintf(`{"g":%d,"seq":%d,"first":%d,"n":%d}`, g, seq+i, seq, n)))
				}
				p := l.Enqueue(recs...)
				if err := p.Wait(context.Background()); err != nil {
					errs <- err
					return
				}
				line, off := p.Pos()
				positions[g][seq] = pos{line, off}
				seq += n
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l = openT(t, path, Options{})
	if l.Lines() != goroutines*perG {
		t.Fatalf("Lines = %d; want %d", l.Lines(), goroutines*perG)
	}
	seen := map[key]bool{}
	lastSeq := make([]int, goroutines)
	for i := range lastSeq {
		lastSeq[i] = -1
	}
	var prev struct{ G, Seq, First, N int }
	line, off := 0, int64(0)
	err := l.Replay(context.Background(), 0, func(r []byte, next int64) error {
		line++
		var e struct{ G, Seq, First, N int }
		if err := json.Unmarshal(r, &e); err != nil {
			return err
		}
		k := key{e.G, e.Seq}
		if seen[k] {
			return fmt.Errorf("record %v twice", k)
		}
		seen[k] = true
		if e.Seq != lastSeq[e.G]+1 {
			return fmt.Errorf("goroutine %d: seq %d after %d", e.G, e.Seq, lastSeq[e.G])
		}
		lastSeq[e.G] = e.Seq
		if e.Seq == e.First {
			if p := positions[e.G][e.First]; p.line != line || p.off != off {
				return fmt.Errorf("batch %d/%d: Pos = %v; found at line %d offset %d", e.G, e.First, p, line, off)
			}
		} else if prev.G != e.G || prev.Seq != e.Seq-1 {
			return fmt.Errorf("batch %d/%d not contiguous: %+v after %+v", e.G, e.First, e, prev)
		}
		prev = e
		off = next
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != goroutines*perG {
		t.Errorf("%d distinct records; want %d", len(seen), goroutines*perG)
	}
}

// DA-A4 (group commit): under concurrency an injected Sync counter shows far
// fewer syncs than appends.
func TestGroupCommitSharesSyncs(t *testing.T) {
	const goroutines, perG = 32, 20
	var syncs atomic.Int64
	l := openT(t, tempJournal(t), Options{Sync: countingSync(&syncs, time.Millisecond)})
	var wg sync.WaitGroup
	var failed atomic.Int64
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perG {
				if err := l.Append(context.Background(), rec(g*perG+i)); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d appends failed", failed.Load())
	}
	appends := int64(goroutines * perG)
	t.Logf("%d appends, %d syncs (%.1f appends per sync)", appends, syncs.Load(), float64(appends)/float64(syncs.Load()))
	if syncs.Load()*4 > appends {
		t.Errorf("%d syncs for %d concurrent appends; want far fewer", syncs.Load(), appends)
	}
	if l.Lines() != int(appends) {
		t.Errorf("Lines = %d", l.Lines())
	}
}

// DA-A4: a group commit never exceeds MaxBatch records, except that one
// Enqueue larger than it is written whole.
func TestMaxBatch(t *testing.T) {
	path := tempJournal(t)
	entered := make(chan struct{})
	release := make(chan struct{})
	var sizes []int64 // file size at each sync
	var calls int
	l := openT(t, path, Options{MaxBatch: 2, Sync: func(f *os.File) error {
		calls++
		if calls == 1 {
			close(entered)
			<-release
		}
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		sizes = append(sizes, fi.Size())
		return nil
	}})
	r := rec(1) // all records have the same size
	first := l.Enqueue(r)
	<-entered // the flusher is inside the first sync: the rest queue up
	ps := []*Pending{first}
	for range 5 {
		ps = append(ps, l.Enqueue(r))
	}
	ps = append(ps, l.Enqueue(r, r, r))
	close(release)
	for _, p := range ps {
		if err := p.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	size := int64(len(r) + 1)
	var got []int64
	prevSize := int64(0)
	for _, s := range sizes {
		got = append(got, (s-prevSize)/size)
		prevSize = s
	}
	want := []int64{1, 2, 2, 1, 3}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records per group commit = %v; want %v", got, want)
	}
}

var errInjected = errors.New("injected sync failure")

// DA-A4 (never pretend durability): a failing Sync makes Append return the
// error, the Log stays broken for every later Enqueue/Wait/Append, and the
// records that were not made durable are not left in the file.
func TestSyncFailureBreaksLog(t *testing.T) {
	cases := []struct {
		name   string
		failAt int // 1-based sync call that fails
	}{
		{"first sync fails", 1},
		{"third sync fails", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := tempJournal(t)
			var calls atomic.Int64
			l, err := Open(path, Options{Sync: func(*os.File) error {
				if calls.Add(1) == int64(c.failAt) {
					return errInjected
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for i := 1; i < c.failAt; i++ {
				if err := l.Append(ctx, rec(i)); err != nil {
					t.Fatalf("append %d: %v", i, err)
				}
			}
			durableEnd := l.End()
			err = l.Append(ctx, rec(c.failAt))
			if !errors.Is(err, errInjected) {
				t.Fatalf("Append with failing sync = %v; want %v", err, errInjected)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
			// Broken: later appends fail even though Sync would now succeed.
			for i := range 3 {
				if err := l.Append(ctx, rec(100+i)); !errors.Is(err, errInjected) {
					t.Errorf("Append after failure = %v; want the failure", err)
				}
				if err := l.Enqueue(rec(200 + i)).Wait(ctx); !errors.Is(err, errInjected) {
					t.Errorf("Enqueue.Wait after failure = %v; want the failure", err)
				}
			}
			if !errors.Is(l.Err(), errInjected) {
				t.Errorf("Err = %v", l.Err())
			}
			if l.End() != durableEnd || l.Lines() != c.failAt-1 {
				t.Errorf("End %d Lines %d; want %d %d", l.End(), l.Lines(), durableEnd, c.failAt-1)
			}
			if err := l.Close(); !errors.Is(err, errInjected) {
				t.Errorf("Close = %v; want the failure", err)
			}
			if got := readFile(t, path); int64(len(got)) != durableEnd {
				t.Errorf("file has %d bytes; want only the %d durable ones", len(got), durableEnd)
			}
		})
	}
}

// DA-A4: when a sync fails, every record queued behind it fails too, and
// none is written after the failure.
func TestSyncFailureFailsQueued(t *testing.T) {
	path := tempJournal(t)
	entered := make(chan struct{})
	release := make(chan struct{})
	var calls atomic.Int64
	l, err := Open(path, Options{Sync: func(*os.File) error {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
			return errInjected
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	p1 := l.Enqueue(rec(1))
	<-entered
	p2 := l.Enqueue(rec(2), rec(3))
	p3 := l.Enqueue(rec(4))
	close(release)
	for i, p := range []*Pending{p1, p2, p3} {
		if err := p.Wait(context.Background()); !errors.Is(err, errInjected) {
			t.Errorf("pending %d: %v; want the failure", i+1, err)
		}
	}
	l.Close()
	if calls.Load() != 1 {
		t.Errorf("%d syncs; nothing may be written after a failure", calls.Load())
	}
	if got := readFile(t, path); len(got) != 0 {
		t.Errorf("file = %q; want empty", got)
	}
}

// DA-A4: records must be non-empty single-line JSON; a bad one is rejected
// with an error and nothing of its call is written.
func TestAppendRejectsBadRecords(t *testing.T) {
	cases := []struct {
		name string
		recs [][]byte
		want string
	}{
		{"empty", [][]byte{{}}, "empty record"},
		{"newline", [][]byte{[]byte("{\"a\":\n1}")}, "newline"},
		{"trailing newline", [][]byte{[]byte("{}\n")}, "newline"},
		{"not json", [][]byte{[]byte("hello")}, "not valid JSON"},
		{"whitespace only", [][]byte{[]byte("   ")}, "not valid JSON"},
		{"two values", [][]byte{[]byte("{} {}")}, "not valid JSON"},
		{"bad record after good ones", [][]byte{rec(1), rec(2), []byte("{")}, "record 3 of 3"},
	}
	path := tempJournal(t)
	l := openT(t, path, Options{})
	ctx := context.Background()
	if err := l.Append(ctx, rec(0)); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := l.Append(ctx, c.recs...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Append = %v; want error containing %q", err, c.want)
			}
			if got := readFile(t, path); !bytes.Equal(got, before) {
				t.Errorf("file changed to %q", got)
			}
			if l.Err() != nil {
				t.Errorf("a rejected record broke the log: %v", l.Err())
			}
		})
	}
	if err := l.Append(ctx, rec(1)); err != nil {
		t.Fatalf("Append after rejections: %v", err)
	}
}

// DA-A4: Wait honours its context; records whose Wait was abandoned are still
// written.
func TestWaitHonoursContext(t *testing.T) {
	path := tempJournal(t)
	release := make(chan struct{})
	l := openT(t, path, Options{Sync: func(*os.File) error { <-release; return nil }})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.Append(ctx, rec(1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Append with expiring context = %v", err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	p := l.Enqueue(rec(2))
	if err := p.Wait(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with cancelled context = %v", err)
	}
	close(release)
	if err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l.Lines() != 2 {
		t.Errorf("Lines = %d; the abandoned records should still be written", l.Lines())
	}
}

// DA-A4: Replay from a mid offset (a previous next) reads the rest; a bad
// offset is refused; fn's error and ctx stop it.
func TestReplayFromOffset(t *testing.T) {
	path := tempJournal(t)
	l := openT(t, path, Options{})
	var all []string
	for i := range 20 {
		r := rec(i)
		if i == 7 {
			r = []byte(`{"big":"` + strings.Repeat("y", 3*readBufSize/2) + `"}`) // longer than the read buffer
		}
		all = append(all, string(r))
		if err := l.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	recs, nexts := collect(t, l, 0)
	if fmt.Sprint(recs) != fmt.Sprint(all) {
		t.Fatal("full replay differs")
	}
	for k, from := range nexts {
		got, _ := collect(t, l, from)
		if fmt.Sprint(got) != fmt.Sprint(all[k+1:]) {
			t.Errorf("Replay from next[%d]=%d: %d records; want %d", k, from, len(got), len(all)-k-1)
		}
	}

	bad := []struct {
		name string
		from int64
	}{
		{"negative", -1},
		{"mid record", nexts[2] + 3},
		{"beyond end", l.End() + 1},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			err := l.Replay(context.Background(), c.from, func([]byte, int64) error { return nil })
			if err == nil {
				t.Errorf("Replay(%d) succeeded", c.from)
			}
		})
	}

	stop := errors.New("stop")
	n := 0
	err := l.Replay(context.Background(), 0, func([]byte, int64) error {
		if n++; n == 5 {
			return stop
		}
		return nil
	})
	if err != stop || n != 5 {
		t.Errorf("fn error: got %v after %d records", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Replay(ctx, 0, func([]byte, int64) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Replay with cancelled context = %v", err)
	}

	// Replay reads to the durable end at call time; fn may append.
	cnt := 0
	err = l.Replay(context.Background(), nexts[17], func([]byte, int64) error {
		cnt++
		return l.Append(context.Background(), rec(99))
	})
	if err != nil || cnt != 2 {
		t.Errorf("Replay while appending: %v, %d records; want 2", err, cnt)
	}
}

// DA-A4: Close writes everything pending; afterwards the Log refuses work.
func TestCloseFlushesPending(t *testing.T) {
	path := tempJournal(t)
	l, err := Open(path, Options{Sync: nopSync})
	if err != nil {
		t.Fatal(err)
	}
	var ps []*Pending
	for i := range 200 {
		ps = append(ps, l.Enqueue(rec(i)))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		select {
		case <-p.Done():
		default:
			t.Fatalf("pending %d not done after Close", i)
		}
		if err := p.Wait(context.Background()); err != nil {
			t.Fatalf("pending %d: %v", i, err)
		}
	}
	if err := l.Append(context.Background(), rec(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v", err)
	}
	if err := l.Replay(context.Background(), 0, func([]byte, int64) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Replay after Close = %v", err)
	}
	if err := l.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v", err)
	}
	l2 := openT(t, path, Options{})
	if l2.Lines() != 200 {
		t.Errorf("Lines after reopen = %d", l2.Lines())
	}
}

// DA-A4: only one Log writes a journal at a time.
func TestSecondWriterRefused(t *testing.T) {
	path := tempJournal(t)
	l := openT(t, path, Options{})
	if l2, err := Open(path, Options{}); !errors.Is(err, ErrRunInUse) {
		if l2 != nil {
			l2.Close()
		}
		t.Fatalf("second Open = %v; want ErrRunInUse", err)
	}
	l.Close()
	openT(t, path, Options{})
}

// Live readers: Changed is closed when the durable end advances.
func TestChanged(t *testing.T) {
	l := openT(t, tempJournal(t), Options{})
	ch := l.Changed()
	select {
	case <-ch:
		t.Fatal("Changed closed before any append")
	default:
	}
	if err := l.Append(context.Background(), rec(1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("Changed not closed after an append")
	}
}

// DA-A4 (property): for any records and any crash point (the file cut at any
// byte), Open keeps exactly the complete lines before the cut and replays
// them unchanged.
func TestRepairProperty(t *testing.T) {
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		path := fmt.Sprintf("%s/events-%d.jsonl", dir, n)
		strs := rapid.SliceOfN(rapid.String(), 0, 12).Draw(rt, "records")
		var recs [][]byte
		for _, s := range strs {
			b, _ := json.Marshal(map[string]string{"s": s})
			recs = append(recs, b)
		}
		full := joinLines(recs...)
		cut := rapid.IntRange(0, len(full)).Draw(rt, "cut")
		if err := os.WriteFile(path, full[:cut], 0o644); err != nil {
			rt.Fatal(err)
		}
		var kept []string
		end := 0
		for _, r := range recs {
			if end+len(r)+1 > cut {
				break
			}
			end += len(r) + 1
			kept = append(kept, string(r))
		}
		l, err := Open(path, Options{Sync: nopSync})
		if err != nil {
			rt.Fatal(err)
		}
		defer l.Close()
		if l.Repaired() != int64(cut-end) || l.End() != int64(end) || l.Lines() != len(kept) {
			rt.Fatalf("repaired %d end %d lines %d; want %d %d %d", l.Repaired(), l.End(), l.Lines(), cut-end, end, len(kept))
		}
		var got []string
		if err := l.Replay(context.Background(), 0, func(r []byte, _ int64) error {
			got = append(got, string(r))
			return nil
		}); err != nil {
			rt.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(kept) {
			rt.Fatalf("replayed %q; want %q", got, kept)
		}
	})
}
