package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/state"
	"github.com/fractal-harness/fractal/tool"
	"github.com/fractal-harness/fractal/usermsg"
)

const toolDeliver = "deliver"

var deliverSpec = model.ToolSpec{Name: toolDeliver,
	Description: "Hand the work over, once you have opened every deliverable yourself: a short report for the person, in plain words — what was made, from what, what could not be done, any answer that was assumed.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"report":{"type":"string"}},"required":["report"]}`)}

// finalReading is DA-B1's last layer: before delivery, Meta must open every
// deliverable of each top-level contract. The host checks the tool calls
// the session really made, then takes Meta's delivery report (checked for
// jargon, DA-B4) and records both. It returns the report for the person,
// with every question that was answered by default.
func (e *Engine) finalReading(ctx context.Context) (string, error) {
	type root struct {
		id, boundary string
		c            contract.Contract
	}
	var roots []root
	var defaults []string
	e.view(func(s *state.State) {
		sess := s.Inst[state.Session]
		for _, pt := range sess.Plan.Tasks {
			t := sess.Tasks[pt.ID]
			if !s.FinalReadings[t.Assignee] {
				roots = append(roots, root{id: t.Assignee, boundary: t.Boundary, c: s.Contract[t.Contract]})
			}
		}
	})
	var reports []string
	for _, r := range roots {
		var files []string
		for _, ch := range r.c.Checks {
			if ch.Path != "" && ch.Kind != contract.Script && ch.Kind != contract.DirMinFiles && !slices.Contains(files, path.Join(r.boundary, ch.Path)) {
				files = append(files, path.Join(r.boundary, ch.Path))
			}
		}
		read := map[string]bool{}
		// The session reads: the root's work is accepted and the root is
		// done; delivery is the run's own act.
		env := tool.Env{Instance: state.Session, RunRoot: e.dir, Boundary: WorkDir, Readable: []string{InputsDir}}
		prompt := fmt.Sprintf("The work on %q was accepted. Before it is handed over, open every deliverable yourself: %s. Then call deliver with a short report for the person.",
			firstLine(r.c.Intent), strings.Join(files, ", "))
		ss := e.newSession(state.Session, model.Meta, metaSystem, prompt, []model.ToolSpec{deliverSpec}, readOnlyTools, env, r.c.Intent, 1)
		ss.onTool = func(call model.ToolCall, res model.ToolResult) {
			if call.Name == "read_file" && !res.IsError {
				var a struct {
					Path string `json:"path"`
				}
				if json.Unmarshal(call.Args, &a) == nil {
					read[path.Clean(a.Path)] = true
				}
			}
		}
		var report string
		err := ss.loop(ctx, map[string]hostTool{toolDeliver: func(call model.ToolCall) (bool, error) {
			var a struct {
				Report string `json:"report"`
			}
			if err := strictJSON(call.Args, &a); err != nil {
				return false, tool.Errorf("E-ARGS", "deliver: %v", err)
			}
			var unread []string
			for _, f := range files {
				if !read[f] {
					unread = append(unread, f)
				}
			}
			if len(unread) > 0 {
				return false, tool.Errorf("E-NOT-READ", "open these first with read_file: %s", strings.Join(unread, ", "))
			}
			if err := usermsg.Validate(usermsg.Message{Kind: usermsg.DeliveryReport, Text: a.Report}); err != nil {
				return false, tool.Errorf("E-USER-MESSAGE", "rephrase the report for the person, in plain words: %v", err)
			}
			report = a.Report
			return true, nil
		}})
		if err != nil {
			return "", fmt.Errorf("the final reading of %s did not complete: %w", r.id, err)
		}
		if err := e.commit(ctx, state.Event{Type: state.TFinalReading, FinalReading: &state.FinalReading{Instance: r.id, Files: files, Report: report}}); err != nil {
			return "", err
		}
		if err := e.note(state.Event{Type: state.TUserMessage, UserMessage: &state.UserMessage{Kind: "delivery_report", Text: report}}); err != nil {
			return "", err
		}
		reports = append(reports, report)
	}
	e.view(func(s *state.State) { defaults = append([]string(nil), s.Defaulted...) })
	var b strings.Builder
	b.WriteString("# Report\n\n")
	for _, r := range reports {
		b.WriteString(r + "\n\n")
	}
	if len(defaults) > 0 {
		b.WriteString("## Answers assumed\n\nNobody answered these questions in time, so the default was taken:\n\n")
		for _, d := range defaults {
			b.WriteString("- " + d + "\n")
		}
	}
	return b.String(), nil
}

// metaAsked reports whether the open questions came from Meta.
func (e *Engine) metaAsked() bool {
	e.progMu.Lock()
	defer e.progMu.Unlock()
	return e.askedByMeta
}
