package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fractal-harness/fractal/harness"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/tool"
)

// toolTimeout bounds one host tool call.
const toolTimeout = 30 * time.Second

// callModel brackets one model call with events and runs it under the
// run's pool (F-D9 rule 5) and the policy's per-call deadline. The started
// event is not waited for: a call that never finished is simply redone.
func (e *Engine) callModel(ctx context.Context, id string, role model.Role, req model.Request) (model.Response, error) {
	call := fmt.Sprintf("m%d", e.calls.Add(1))
	if err := e.note(state.Event{Type: state.TModelCallStarted, ModelCallStarted: &state.ModelCallStarted{Instance: id, Call: call, Role: role, Reserve: reserve(req)}}); err != nil {
		return model.Response{}, err
	}
	// Every retry and fallback inside the provider layer becomes an event.
	ctx = model.WithAttemptObserver(ctx, func(a model.Attempt) {
		_ = e.note(state.Event{Type: state.TModelAttempt, ModelAttempt: &state.ModelAttempt{Instance: id, Call: call, Attempt: a}})
	})
	if err := e.waitUnpaused(ctx); err != nil {
		return model.Response{}, err
	}
	select {
	case e.pool <- struct{}{}:
	case <-ctx.Done():
		return model.Response{}, errStopped
	}
	var timeout time.Duration
	e.view(func(s *state.State) { timeout = s.Policy.ModelTimeout })
	cctx, cancel := context.WithTimeout(ctx, timeout)
	resp, err := e.cfg.Models(role).Generate(cctx, req)
	cancel()
	for i := range resp.ToolCalls {
		resp.ToolCalls[i].Sanitize()
	}
	<-e.pool
	if ctx.Err() != nil {
		return model.Response{}, errStopped
	}
	fin := &state.ModelCallFinished{Instance: id, Call: call, Role: role, Usage: resp.Usage, Model: resp.Model}
	if err != nil {
		fin.Err = err.Error()
		fin.Usage = model.Usage{}
	}
	if !e.cfg.NoTranscripts {
		off, sum, terr := e.transcript(call, req, resp, err)
		if terr != nil {
			return model.Response{}, terr
		}
		fin.Transcript, fin.Offset, fin.SHA256 = TranscriptsFile, off, sum
	}
	if nerr := e.note(state.Event{Type: state.TModelCallFinished, ModelCallFinished: fin}); nerr != nil {
		return model.Response{}, nerr
	}
	if err != nil {
		return model.Response{}, fmt.Errorf("model call failed (%s): %w", role, err)
	}
	return resp, nil
}

// transcript appends the request and answer of a call, one JSON line, to
// transcripts.jsonl, so a run can be read, and later replayed, exactly. One
// append-only file instead of a file per call: creating files is the
// costliest thing a turn would otherwise do.
func (e *Engine) transcript(call string, req model.Request, resp model.Response, callErr error) (int64, string, error) {
	rec := struct {
		Call     string         `json:"call"`
		Request  model.Request  `json:"request"`
		Response model.Response `json:"response"`
		Error    string         `json:"error,omitempty"`
	}{Call: call, Request: req, Response: resp}
	if callErr != nil {
		rec.Error = callErr.Error()
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return 0, "", err
	}
	sum := sha256.Sum256(b)
	e.txMu.Lock()
	defer e.txMu.Unlock()
	if e.tx == nil {
		f, err := os.OpenFile(filepath.Join(e.dir, TranscriptsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return 0, "", fmt.Errorf("engine: transcripts: %w", err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return 0, "", err
		}
		e.tx, e.txEnd = f, fi.Size()
	}
	off := e.txEnd
	if _, err := e.tx.Write(append(b, '\n')); err != nil {
		return 0, "", fmt.Errorf("engine: transcripts: %w", err)
	}
	e.txEnd += int64(len(b)) + 1
	return off, hex.EncodeToString(sum[:]), nil
}

// runTool runs one model tool call for instance id. The started event names
// the paths the call would write, so the Guard refuses a write outside the
// boundary before it happens (I-Boundary); the refusal is recorded and the
// model is told in a structured error it can act on.
func (e *Engine) runTool(ctx context.Context, id string, role model.Role, reg *tool.Registry, env tool.Env, call model.ToolCall) model.ToolResult {
	fail := func(code, msg string) model.ToolResult {
		return model.ToolResult{CallID: call.ID, Content: code + ": " + msg, IsError: true}
	}
	t, ok := reg.Get(call.Name)
	if !ok {
		names := make([]string, 0)
		for _, s := range reg.Specs() {
			names = append(names, s.Name)
		}
		return fail("E-UNKNOWN-TOOL", fmt.Sprintf("there is no tool %q; you have: %s", call.Name, strings.Join(names, ", ")))
	}
	if role == model.Worker {
		e.toolLoop(id, call.Name, call.Args, false)
	}
	var writes []string
	if wp, ok := t.(tool.WritePaths); ok {
		ws, err := wp.WritePaths(call.Args)
		if err != nil {
			if te, ok := tool.AsError(err); ok {
				return fail(te.Code, te.Msg)
			}
			return fail("E-ARGS", err.Error())
		}
		writes = ws
		for _, w := range ws {
			// progress.md is the relay log: append-only, through the
			// progress tool (DA-A1).
			if path.Base(w) == ProgressFile && path.Dir(w) == env.Boundary {
				return e.refuse(id, "E-APPEND-ONLY", "progress.md is append-only: record progress with the progress tool", false, fail)
			}
			// The task harness is written only through Meta's audited
			// tool (DA-A5); any other attempt is refused and recorded.
			if err := harness.Guard(strings.TrimPrefix(w, "harness/")); strings.HasPrefix(w, "harness/") || (err != nil && w == "harness") {
				return e.refuse(id, "E-HARNESS-DIRECT", "the task harness cannot be written directly: "+w, true, fail)
			}
		}
	}
	sum := sha256.Sum256(call.Args)
	cid := fmt.Sprintf("t%d", e.calls.Add(1))
	p, err := e.record(state.Event{Type: state.TToolCallStarted, ToolCallStarted: &state.ToolCallStarted{Instance: id, Call: cid, Tool: call.Name, Role: role, ArgsHash: hex.EncodeToString(sum[:8]), Writes: writes}})
	if err != nil {
		if v, ok := err.(*state.Violation); ok {
			if v.Code == state.EBoundaryWrite || v.Code == state.EWiden {
				e.violated(id)
			}
			return fail(string(v.Code), v.Detail)
		}
		return fail("E-HOST", err.Error())
	}
	if len(writes) > 0 && !idempotent(t, call.Args) {
		// A write that cannot be repeated safely must not happen unless
		// its announcement is on disk.
		if err := p.Wait(ctx); err != nil {
			return fail("E-HOST", err.Error())
		}
	}
	tctx, cancel := context.WithTimeout(ctx, toolTimeout)
	res, err := t.Call(tctx, env, call.Args)
	cancel()
	fin := &state.ToolCallFinished{Instance: id, Call: cid, Tool: call.Name, Writes: res.Writes}
	out := model.ToolResult{CallID: call.ID, Content: res.Content}
	if err != nil {
		code := "E-HOST"
		if te, ok := tool.AsError(err); ok {
			code = te.Code
		}
		fin.ErrCode, fin.Writes = code, nil
		out = fail(code, strings.TrimPrefix(err.Error(), code+": "))
		if strings.HasPrefix(code, "E-BOUNDARY") {
			e.violated(id)
			_ = e.note(state.Event{Type: state.TRefused, Refused: &state.Refused{Instance: id, Proposed: state.TToolCallStarted, Code: code, Detail: err.Error()}})
		}
	}
	if err := e.note(state.Event{Type: state.TToolCallFinished, ToolCallFinished: fin}); err != nil {
		return fail("E-HOST", err.Error())
	}
	if len(fin.Writes) > 0 {
		e.progressed(id)
	}
	return out
}

// checkpoint records F-D8's checkpoint for an attempt: a content hash of
// the boundary's files, so the state an attempt started from is known.
func (e *Engine) checkpoint(id, attempt, boundary string) error {
	abs := filepath.Join(e.dir, filepath.FromSlash(boundary))
	tree, n, err := treeHash(abs)
	if err != nil {
		return err
	}
	return e.note(state.Event{Type: state.TCheckpoint, Checkpoint: &state.Checkpoint{Instance: id, Attempt: attempt, ID: "ck-" + attempt, Tree: tree, Files: n}})
}

// treeHash hashes the sorted (path, content hash) pairs of the regular
// files under dir; a missing dir hashes as empty.
func treeHash(dir string) (string, int, error) {
	type ent struct{ p, sum string }
	var ents []ent
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return filepath.SkipDir
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		sum, err := fileSHA(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		ents = append(ents, ent{filepath.ToSlash(rel), sum})
		return nil
	})
	if err != nil {
		return "", 0, fmt.Errorf("checkpoint: %w", err)
	}
	slices.SortFunc(ents, func(a, b ent) int { return strings.Compare(a.p, b.p) })
	h := sha256.New()
	for _, x := range ents {
		fmt.Fprintf(h, "%s\x00%s\n", x.p, x.sum)
	}
	return "tree-" + hex.EncodeToString(h.Sum(nil))[:16], len(ents), nil
}

func idempotent(t tool.Tool, args json.RawMessage) bool {
	i, ok := t.(tool.Idempotent)
	return ok && i.Idempotent(args)
}

// syncTree makes every file and folder under dir durable. Writes do not
// fsync one by one; an attempt's work is made durable once, before its
// evidence is submitted, so accepted work survives a power cut. It fsyncs
// exactly the folder's own files and folders, so its cost does not depend
// on what other programs have written to the same disk (syncfs would).
func syncTree(dir string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() || d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Concurrent fsyncs share the file system's journal commits.
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = syncFile(p)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func syncFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	serr := f.Sync()
	if cerr := f.Close(); serr == nil {
		serr = cerr
	}
	return serr
}

// reserve is a call's worst case in tokens: its prompt at two bytes a token
// (text in most languages takes more bytes per token than that, so the
// estimate errs high) plus everything the answer may add.
func reserve(req model.Request) int64 {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Text)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Args) + len(c.Invalid)
		}
		for _, r := range m.ToolResults {
			n += len(r.Content)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return int64(n/2) + int64(req.MaxTokens)
}

// violated counts a refused reach outside an instance's folder or
// contract; the submission's rule checks see it (DC5).
func (e *Engine) violated(id string) {
	e.progMu.Lock()
	if e.violations == nil {
		e.violations = map[string]int{}
	}
	e.violations[id]++
	e.progMu.Unlock()
}

// refuse records a refused tool call and answers the model with why; a
// violation also counts against the submission's rule checks.
func (e *Engine) refuse(id, code, msg string, violation bool, fail func(code, msg string) model.ToolResult) model.ToolResult {
	if violation {
		e.violated(id)
	}
	_ = e.note(state.Event{Type: state.TRefused, Refused: &state.Refused{Instance: id, Proposed: state.TToolCallStarted, Code: code, Detail: msg}})
	return fail(code, msg)
}
