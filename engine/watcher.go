package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/tool"
	"github.com/fractal-harness/fractal/watchdog"
)

const (
	toolObserve = "observe"
	toolQuiet   = "quiet"
	// watchWindow bounds what the Watcher reads at a time: lines and bytes.
	watchWindow      = 80
	watchWindowBytes = 16 << 10
)

var (
	observeSpec = model.ToolSpec{Name: toolObserve, Description: "Tell Meta what you saw: each observation a fact with its evidence, a stream line (streams/x.log:12) or a file path. You never talk to the worker.",
		Schema: json.RawMessage(`{"type":"object","properties":{"observations":{"type":"array","items":{"type":"object","properties":{"note":{"type":"string"},"evidence":{"type":"string"}},"required":["note","evidence"]}}},"required":["observations"]}`)}
	quietSpec = model.ToolSpec{Name: toolQuiet, Description: "Nothing is wrong: say nothing.", Schema: json.RawMessage(`{"type":"object","properties":{}}`)}
)

const watcherSystem = `You are the Watcher in fractal. You read a window of a worker's stream and tell Meta facts that matter — a loop, a wrong input, a made-up figure, work outside the task — each with a quotation's location as evidence. You never message the worker. When nothing is wrong, call quiet.`

// maybeWatch runs the Watcher (DA-A2) over the latest window of a worker's
// stream every WatchEvery worker turns. Its observations go to Meta, never
// to the worker; it is quiet when nothing is wrong.
func (e *Engine) maybeWatch(ctx context.Context, id string, ws *session) {
	var every int
	e.view(func(s *state.State) { every = s.Policy.WatchEvery })
	if every <= 0 || ws.turns%every != 0 || ws.stream == "" {
		return
	}
	lines, first := streamWindow(filepath.Join(e.dir, filepath.FromSlash(ws.stream)), watchWindow, watchWindowBytes)
	if len(lines) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Stream %s, lines %d to %d:\n", ws.stream, first, first+len(lines)-1)
	for i, l := range lines {
		fmt.Fprintf(&b, "%d: %s\n", first+i, l)
	}
	b.WriteString("\nCall observe with facts and evidence, or quiet.")
	env := tool.Env{Instance: id, RunRoot: e.dir, Boundary: ws.env.Boundary, Readable: []string{InputsDir}}
	ss := e.newSession(id, model.Watcher, watcherSystem, b.String(), []model.ToolSpec{observeSpec, quietSpec}, mustRegistry(), env, ws.req.Intent, ws.req.Attempt)
	last := first + len(lines) - 1
	_ = ss.loop(ctx, map[string]hostTool{
		toolQuiet: func(model.ToolCall) (bool, error) { return true, nil },
		toolObserve: func(call model.ToolCall) (bool, error) {
			var args struct {
				Observations []struct {
					Note     string `json:"note"`
					Evidence string `json:"evidence"`
				} `json:"observations"`
			}
			if err := strictJSON(call.Args, &args); err != nil || len(args.Observations) == 0 {
				return false, tool.Errorf("E-ARGS", "observe needs at least one observation with a note and evidence")
			}
			for _, o := range args.Observations {
				if err := e.citable(o.Evidence, ws.stream, first, last); err != nil {
					return false, tool.Errorf("E-EVIDENCE", "%q: %v", o.Evidence, err)
				}
			}
			for _, o := range args.Observations {
				_ = e.note(state.Event{Type: state.TObservation, Observation: &state.Observation{Instance: id, Note: o.Note, Evidence: o.Evidence}})
				e.addNote(id, "the Watcher saw: "+o.Note+" ("+o.Evidence+")")
			}
			return true, nil
		},
	})
}

// citable checks that evidence names a line of the window or a file that
// exists in the run.
func (e *Engine) citable(ev, stream string, first, last int) error {
	if p, line, ok := strings.Cut(ev, ":"); ok && p == stream {
		n, err := strconv.Atoi(strings.TrimSpace(line))
		if err != nil || n < first || n > last {
			return fmt.Errorf("not a line of the window (%d to %d)", first, last)
		}
		return nil
	}
	if strings.Contains(ev, "..") || filepath.IsAbs(ev) {
		return fmt.Errorf("not a run-relative path")
	}
	if _, err := os.Stat(filepath.Join(e.dir, filepath.FromSlash(ev))); err != nil {
		return fmt.Errorf("no such file in the run")
	}
	return nil
}

// streamWindow returns the last n lines (at most max bytes) of a file and
// the 1-based number of the first.
func streamWindow(p string, n, limit int) ([]string, int) {
	f, err := os.Open(p)
	if err != nil {
		return nil, 0
	}
	defer f.Close()
	var all []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		all = append(all, sc.Text())
	}
	start := max(0, len(all)-n)
	size := 0
	for i := len(all) - 1; i >= start; i-- {
		size += len(all[i]) + 1
		if size > limit {
			start = i + 1
			break
		}
	}
	return all[start:], start + 1
}

// watchdogLimits maps the policy onto the watchdog's thresholds.
func (e *Engine) watchdogLimits() watchdog.Limits {
	l := watchdog.Default()
	e.view(func(s *state.State) {
		p := s.Policy
		if p.NoProgress > 0 {
			l.NoProgress = p.NoProgress
		}
		if p.ToolLoop > 0 {
			l.ToolLoop = p.ToolLoop
		}
		if p.ReviewerSession > 0 {
			l.ReviewerSession = p.ReviewerSession
		}
		if p.MetaTurn > 0 {
			l.MetaTurn = p.MetaTurn
		}
		l.ModelCall = p.ModelTimeout
	})
	l.ToolCall = toolTimeout
	return l
}

// checkWatchdog turns the watchdog's timer trips into events and notes for
// Meta; a worker's no-progress trip also ends its session at its next turn.
func (e *Engine) checkWatchdog(now time.Time) {
	if e.dog == nil {
		return
	}
	for _, t := range e.dog.Check(now) {
		id := t.ID
		if i := strings.Index(id, "#"); i >= 0 {
			id = id[:i]
		}
		var known bool
		e.view(func(s *state.State) { known = s.Inst[id] != nil })
		if !known {
			continue
		}
		e.tripped(id, string(t.Kind), t.Detail)
		if t.Kind == watchdog.NoProgress {
			e.progMu.Lock()
			if e.trips == nil {
				e.trips = map[string]string{}
			}
			e.trips[id] = t.Detail
			e.progMu.Unlock()
		}
	}
}
