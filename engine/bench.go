package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/journal"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/script"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/state"
)

// TreeBench is the shape of the engine benchmark: a root that plans
// Branching parts, each planning Branching leaves (Depth 2), each leaf
// taking Turns worker turns.
type TreeBench struct {
	Branching int
	Turns     int
	Latency   time.Duration
	Pool      int
}

// TreeResult is what one benchmark run measured.
type TreeResult struct {
	Calls         int64         // model calls made
	Wall          time.Duration // from Run to done
	PerTurn       time.Duration // Wall / Calls
	AllocsPerTurn float64
	BytesPerTurn  float64
	Ideal         time.Duration // the makespan a perfect scheduler reaches with this pool and latency
	Efficiency    float64       // Ideal / Wall (meaningful with latency > 0)
}

// BenchTree builds and runs the tree in a new run folder under dir.
func BenchTree(ctx context.Context, dir string, b TreeBench) (TreeResult, error) {
	t, sc := benchTask(b)
	sc = sc.WithLatency(b.Latency)
	e, err := Create(filepath.Join(dir, fmt.Sprintf("tree-%d", time.Now().UnixNano())), t, Config{
		Models: func(model.Role) model.Model { return sc },
		Home:   dir,
	})
	if err != nil {
		return TreeResult{}, err
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	start := time.Now()
	res, err := e.Run(ctx)
	wall := time.Since(start)
	runtime.ReadMemStats(&m1)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return TreeResult{}, err
	}
	if res.Stage != state.StageDone {
		return TreeResult{}, fmt.Errorf("bench run ended %s: %v", res.Stage, res.Questions)
	}
	// The calls made, from the journal rather than from a formula.
	var calls int64
	err = journal.ReadFile(ctx, filepath.Join(e.Dir(), EventsFile), 0, func(rec []byte, _ int64) error {
		if bytes.Contains(rec, []byte(`"type":"model_call_finished"`)) {
			calls++
		}
		return nil
	})
	if err != nil {
		return TreeResult{}, err
	}
	r := TreeResult{Calls: calls, Wall: wall, PerTurn: wall / time.Duration(calls),
		AllocsPerTurn: float64(m1.Mallocs-m0.Mallocs) / float64(calls),
		BytesPerTurn:  float64(m1.TotalAlloc-m0.TotalAlloc) / float64(calls)}
	if b.Latency > 0 {
		// The critical path with a perfect scheduler: the root's plan, a
		// wave of mid plans, the leaves' turns and reviews packed into the
		// pool, a wave of mid reviews, the root's review, the final reading.
		leafCalls := b.Branching * b.Branching * (b.Turns + 1)
		slots := max((leafCalls+b.Pool-1)/b.Pool, b.Turns+1)
		midWaves := (b.Branching + b.Pool - 1) / b.Pool
		r.Ideal = b.Latency * time.Duration(1+midWaves+slots+midWaves+1+2)
		r.Efficiency = float64(r.Ideal) / float64(wall)
	}
	return r, nil
}

// benchTask makes the depth-2 task and its script. Every contract is
// distinct (a contract is its content), every check really passes.
func benchTask(b TreeBench) (Task, *script.Script) {
	n := b.Branching
	pol := policy.Default()
	pol.MaxDepth, pol.Pool, pol.GranularityThreshold = 2, b.Pool, 1
	pol.MaxTurns = b.Turns + 2
	pol.MaxConcurrent = max(b.Branching, b.Pool)
	pol.Budget.Tokens = 0
	var rootChecks []contract.Check
	for i := range n {
		rootChecks = append(rootChecks, contract.Check{Kind: contract.FileExists, Path: fmt.Sprintf("m%d/l0/out.md", i)})
	}
	root := contract.New("bench root: plan the parts", rootChecks)
	sc := &script.Script{Version: 1}
	var rootTasks []any
	var rootMap []any
	for i := range n {
		var midChecks []contract.Check
		for j := range n {
			midChecks = append(midChecks, contract.Check{Kind: contract.FileExists, Path: fmt.Sprintf("l%d/out.md", j)})
		}
		rootTasks = append(rootTasks, map[string]any{"id": fmt.Sprintf("m%d", i), "intent": fmt.Sprintf("bench mid m%d", i), "checks": checksArg(midChecks)})
		rootMap = append(rootMap, map[string]any{"parent_check": i + 1, "task": fmt.Sprintf("m%d", i), "child_check": 1})
		var leafTasks, leafMap []any
		for j := range n {
			leafTasks = append(leafTasks, map[string]any{"id": fmt.Sprintf("l%d", j), "intent": fmt.Sprintf("bench leaf m%d.l%d", i, j),
				"checks": checksArg([]contract.Check{{Kind: contract.FileExists, Path: "out.md"}})})
			leafMap = append(leafMap, map[string]any{"parent_check": j + 1, "task": fmt.Sprintf("l%d", j), "child_check": 1})
			inst := fmt.Sprintf("root/m%d/l%d", i, j)
			var turns []script.Turn
			for k := range b.Turns - 1 {
				name := "out.md"
				if k > 0 {
					name = fmt.Sprintf("notes%d.md", k)
				}
				turns = append(turns, script.Turn{ToolCalls: []script.Call{{Name: "write_file", Args: map[string]any{
					"path": fmt.Sprintf("work/%s/%s", inst, name), "content": fmt.Sprintf("part %d of %s\n", k, inst)}}}})
			}
			turns = append(turns, script.Turn{ToolCalls: []script.Call{{Name: "declare_done", Args: map[string]any{
				"summary": "done", "items": []any{map[string]any{"kind": "check", "index": 1, "pass": true, "quote": "part 0 of " + inst,
					"source": map[string]any{"file": "work/" + inst + "/out.md", "line": 1, "origin": "computed"}}}}}}})
			sc.Sessions = append(sc.Sessions, script.Session{Role: model.Worker, Instance: inst, Turns: turns})
		}
		sc.Sessions = append(sc.Sessions, script.Session{Role: model.Meta, Instance: fmt.Sprintf("root/m%d", i), Turns: []script.Turn{{
			ToolCalls: []script.Call{{Name: "submit_plan", Args: map[string]any{"tasks": leafTasks, "check_map": leafMap}}}}}})
	}
	sc.Sessions = append(sc.Sessions, script.Session{Role: model.Meta, Instance: "root", Turns: []script.Turn{{
		ToolCalls: []script.Call{{Name: "submit_plan", Args: map[string]any{"tasks": rootTasks, "check_map": rootMap}}}}}})
	// Every submission gets the Reviewer's quality review (DC5), and Meta
	// opens the deliverables before delivery (DA-B1).
	var reads []script.Call
	for i := range n {
		reads = append(reads, script.Call{Name: "read_file", Args: map[string]any{"path": fmt.Sprintf("work/root/m%d/l0/out.md", i)}})
	}
	sc.Sessions = append(sc.Sessions,
		script.Session{Role: model.Reviewer, Offers: "submit_verdict", Turns: []script.Turn{{ToolCalls: []script.Call{{Name: "submit_verdict",
			Args: map[string]any{"verdict": "pass", "issues": []any{}, "summary": "ok"}}}}}},
		script.Session{Role: model.Meta, Offers: "deliver", Turns: []script.Turn{{ToolCalls: reads},
			{ToolCalls: []script.Call{{Name: "deliver", Args: map[string]any{"report": "The parts are done."}}}}}})
	return Task{Title: "bench", Policy: pol, Contracts: []TopContract{{Name: "root", Contract: root}}, Model: "script:bench"}, sc
}

func checksArg(cs []contract.Check) []any {
	b, _ := json.Marshal(cs)
	var out []any
	_ = json.Unmarshal(b, &out)
	return out
}

// FoldResult is what BenchFold measured.
type FoldResult struct {
	Events       int64
	FullFold     time.Duration // refold of every event through the Guard
	EventsPerSec float64
	Resume       time.Duration // Open with the snapshot written at the last Close
	JournalBytes int64
}

// BenchFold writes a run whose journal holds about n events (model calls
// of one instance), then measures a full Guarded refold and a resume that
// starts from the snapshot.
func BenchFold(ctx context.Context, dir string, n int) (FoldResult, error) {
	t, _ := benchTask(TreeBench{Branching: 2, Turns: 2, Pool: 1})
	t.Policy.Budget.Tokens = 1 << 40 // the synthetic calls must fit the budget
	runDir := filepath.Join(dir, fmt.Sprintf("fold-%d", time.Now().UnixNano()))
	noModel := func(model.Role) model.Model { return nil }
	e, err := Create(runDir, t, Config{Models: noModel, Home: dir})
	if err != nil {
		return FoldResult{}, err
	}
	// Append synthetic model-call pairs by the session, in batches.
	seq := e.st.Seq
	now := time.Now().UTC()
	batch := make([][]byte, 0, 1000)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := e.log.Append(ctx, batch...)
		batch = batch[:0]
		return err
	}
	for i := 0; int(seq) < n; i++ {
		call := fmt.Sprintf("m%d", i)
		for k := range 2 {
			seq++
			ev := state.Event{Seq: seq, V: state.Version, Time: now, Type: state.TModelCallStarted,
				ModelCallStarted: &state.ModelCallStarted{Instance: state.Session, Call: call, Role: model.Meta}}
			if k == 1 {
				ev.Type, ev.ModelCallStarted = state.TModelCallFinished, nil
				ev.ModelCallFinished = &state.ModelCallFinished{Instance: state.Session, Call: call, Role: model.Meta, Usage: model.Usage{Input: 1200, Output: 300}, Transcript: "transcripts/" + call + ".json", SHA256: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
			}
			b, err := json.Marshal(ev)
			if err != nil {
				return FoldResult{}, err
			}
			batch = append(batch, b)
			if len(batch) == cap(batch) {
				if err := flush(); err != nil {
					return FoldResult{}, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return FoldResult{}, err
	}
	size := e.log.End()
	_ = e.log.Close()
	_ = e.lock.Release()

	start := time.Now()
	st, err := Fold(ctx, runDir, true)
	full := time.Since(start)
	if err != nil {
		return FoldResult{}, err
	}
	// Write the snapshot a run leaves when it stops, then time a resume.
	e2, err := Open(runDir, Config{Models: noModel, Home: dir})
	if err != nil {
		return FoldResult{}, err
	}
	if err := e2.Close(); err != nil {
		return FoldResult{}, err
	}
	start = time.Now()
	e3, err := Open(runDir, Config{Models: noModel, Home: dir})
	resume := time.Since(start)
	if err != nil {
		return FoldResult{}, err
	}
	_ = e3.Close()
	return FoldResult{Events: st.Seq, FullFold: full, EventsPerSec: float64(st.Seq) / full.Seconds(), Resume: resume, JournalBytes: size}, nil
}
