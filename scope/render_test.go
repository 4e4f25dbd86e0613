package scope

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// docBlueprint is the example in docs/delegation.md; TestDocsExample keeps
// the page and the code in step.
const docBlueprint = `id: researcher
description: Gathers facts and writes notes that cite a source for every fact.
capabilities:
  inherit: minimal            # list_dir and read_file, if the parent has them
  allow: [inventory, web_fetch, write_file]
  deny: [bash]
  composed:
    - name: fetch_and_save
      of: [web_fetch, write_file]
budget:
  max_tokens: 400000
  max_concurrent: 1
  daily_limit: 20
constraints:
  no_spawn: true
  sandbox_required: true
  allowed_commands: [pdftotext]
  timeout_ms: 7200000         # 2 h
  stall_threshold_ms: 600000  # 10 min
scope:
  read: [inputs, work]
  write: [work/root/market]
sop: |
  1. Run inventory on every input file before reading it.
  2. Record every fact with its source and a short quotation.
  3. Write findings.md, one section per question.
`

// docParent is the parent the docs clone the example from: the root,
// allowed to run pdftotext.
func docParent() DelegationContract {
	p := Root()
	p.Identity.Session = "run-1"
	p.Constraints.AllowedCommands = []string{"pdftotext"}
	return p
}

func ExampleRender() {
	b, err := ParseBlueprint([]byte(docBlueprint), "researcher.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	child, err := Clone(docParent(), b.Request())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(Render(child))
	// Output:
	// == Your delegation contract ==
	// Your agent kind: researcher
	// The host enforces these limits; you cannot widen them. If they are not enough for the task, say so in your result instead of working around them.
	//
	// Tools you may call: fetch_and_save, inventory, list_dir, read_file, web_fetch, write_file
	// - fetch_and_save is a composite tool: it uses web_fetch, then write_file, in that order.
	// Tools denied to you: bash
	// Restrictions:
	// - You may not start sub-agents.
	// - Commands run only inside the sandbox.
	// Commands you may run (exact program names): pdftotext
	//
	// Folders, relative to the run folder (each includes everything under it):
	// - read: inputs, work
	// - write: work/root/market
	// - execute: none
	//
	// Budget:
	// - at most 400000 tokens
	// - at most 1 model call or sub-agent running at once
	// - at most 20 sessions a day
	// Deadline: you are stopped 2 h after you start. Going 10 min without progress counts as a stall and is reported.
	//
	// Standard operating procedure (follow in order):
	// 1. Run inventory on every input file before reading it.
	// 2. Record every fact with its source and a short quotation.
	// 3. Write findings.md, one section per question.
	//
	// You may not dispatch work to other agents.
}

// Render says every restriction in words and every dispatch case.
func TestRender(t *testing.T) {
	d := lead()
	d.Constraints.NoNetwork = true
	out := Render(d)
	for _, want := range []string{
		"Your agent kind: lead",
		"Tools you may call: inventory, list_dir, read_file, survey, web_fetch, write_file",
		"- survey is a composite tool: it uses list_dir, then read_file, in that order.",
		"Tools denied to you: bash",
		"- You have no network access.",
		"- Commands run only inside the sandbox.",
		"Commands you may run (exact program names): pandoc, pdftotext",
		"- execute: work/lead/tools",
		"Budget, shared with any sub-agents you start:",
		"- at most 4 model calls or sub-agents running at once",
		"- at most 10 sessions a day",
		"Deadline: you are stopped 1 min after you start. Going 10 s without progress",
		"1. Plan the work.",
		"You may dispatch work to these kinds of agent: researcher, reviewer",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Render lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Standard operating procedure") != true {
		t.Error("no SOP heading")
	}
	r := Render(Root())
	for _, want := range []string{"Restrictions: none beyond the limits below.", "You may dispatch work to any kind of agent.", "- write: work", "stopped 48 h after"} {
		if !strings.Contains(r, want) {
			t.Errorf("Render(Root()) lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r, "Standard operating procedure") {
		t.Error("an SOP heading without steps")
	}
	ro := lead()
	ro.Constraints.ReadOnly, ro.Scope.Write = true, nil
	if !strings.Contains(Render(ro), "You are read-only") || !strings.Contains(Render(ro), "- write: none") {
		t.Errorf("read-only not said:\n%s", Render(ro))
	}
}

func TestDuration(t *testing.T) {
	for ms, want := range map[int64]string{7_200_000: "2 h", 5_400_000: "90 min", 30_000: "30 s", 1500: "1500 ms", 0: "0 ms"} {
		if got := duration(ms); got != want {
			t.Errorf("duration(%d) = %q, want %q", ms, got, want)
		}
	}
}

// The user documentation shows the example blueprint and its rendering;
// this keeps both in step with the code.
func TestDocsExample(t *testing.T) {
	data, err := os.ReadFile("../docs/delegation.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if !strings.Contains(doc, "```yaml\n"+docBlueprint+"```") {
		t.Error("docs/delegation.md does not hold the example blueprint of render_test.go")
	}
	b, err := ParseBlueprint([]byte(docBlueprint), "researcher.yaml")
	if err != nil {
		t.Fatal(err)
	}
	child, err := Clone(docParent(), b.Request())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc, "```text\n"+Render(child)+"```") {
		t.Errorf("docs/delegation.md does not hold Render's output for the example:\n%s", Render(child))
	}
	for _, c := range []struct{ from, to string }{
		{"max_tokens: 400000", `max_tokens: "lots"`},
		{"inherit: minimal", "inherit: partial"},
	} {
		_, err := ParseBlueprint([]byte(strings.Replace(docBlueprint, c.from, c.to, 1)), "researcher.yaml")
		if err == nil || !strings.Contains(doc, "\n"+err.Error()+"\n") {
			t.Errorf("docs/delegation.md does not show the error %v", err)
		}
	}
	for _, key := range append(append(append(append(append(copyOf(blueprintKeys), capabilityKeys...), budgetKeys...), constraintKeys...), scopeKeys...), compositeKeys...) {
		if !strings.Contains(doc, "`"+key+"`") {
			t.Errorf("docs/delegation.md does not mention the key `%s`", key)
		}
	}
}

func copyOf(s []string) []string { return append([]string(nil), s...) }
