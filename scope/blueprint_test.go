package scope

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const fullBlueprint = `# every key
id: researcher
description: Finds facts.
capabilities:
  inherit: minimal
  allow: [web_fetch, write_file]
  deny:
    - inventory
  composed:
    - name: fetch_and_save
      of: [web_fetch, write_file]
budget:
  max_tokens: 400_000
  max_concurrent: 1
  daily_limit: 5
constraints:
  no_spawn: false
  no_network: false
  read_only: false
  sandbox_required: true
  allowed_commands: [pdftotext]
  timeout_ms: 7200000
  stall_threshold_ms: 600000
scope:
  read: [inputs, work]
  write: [work/notes]
  execute: []
dispatch_targets: [reviewer]
sop:
  - Read the brief.
  - 2. Write the notes.
`

// DC9: every key of the format is read into its field.
func TestParseBlueprint(t *testing.T) {
	b, err := ParseBlueprint([]byte(fullBlueprint), "researcher.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Request{
		AgentKind:        "researcher",
		Inherit:          InheritMinimal,
		Allow:            []string{"web_fetch", "write_file"},
		Deny:             []string{"inventory"},
		Composed:         []Composite{{Name: "fetch_and_save", Of: []string{"web_fetch", "write_file"}}},
		Constraints:      Constraints{SandboxRequired: true, AllowedCommands: []string{"pdftotext"}},
		Scope:            Scope{Read: []string{"inputs", "work"}, Write: []string{"work/notes"}},
		Budget:           Budget{MaxTokens: 400_000, MaxConcurrent: 1, DailyLimit: 5},
		TimeoutMs:        7_200_000,
		StallThresholdMs: 600_000,
		SOP:              []string{"Read the brief.", "Write the notes."},
		DispatchTargets:  []string{"reviewer"},
	}
	if got := b.Request(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Request() =\n%+v\nwant\n%+v", got, want)
	}
	if b.Description != "Finds facts." || b.Source != "researcher.yaml" {
		t.Fatalf("description %q, source %q", b.Description, b.Source)
	}
	root := Root()
	root.Constraints.AllowedCommands = []string{"pdftotext"}
	c, err := Clone(root, b.Request())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Tools(), []string{"fetch_and_save", "list_dir", "read_file", "web_fetch", "write_file"}) {
		t.Fatalf("tools = %v", c.Tools())
	}
}

// DC9: the seed's own example reads as written (block-text SOP with
// numbered lines), and is then refused under our root, at the line of the
// tool the root does not have.
func TestSeedBlueprint(t *testing.T) {
	seed := `id: my-researcher
capabilities:
  inherit: minimal
  allow: [web_search, web_fetch, memory_search, write_file]
  deny: [bash]
budget:
  max_tokens: 100000
  max_concurrent: 1
  daily_limit: 5
constraints:
  no_spawn: true
  stall_threshold_ms: 180000
sop: |
  1. 搜索目标信息
  2. 分析关键数据
  3. 生成结构化报告
`
	b, err := ParseBlueprint([]byte(seed), "seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.SOP, []string{"搜索目标信息", "分析关键数据", "生成结构化报告"}) {
		t.Fatalf("sop = %q", b.SOP)
	}
	err = CheckBlueprint(b, Root())
	want := "seed.yaml:4:11: capabilities.allow widens the parent: the child has web_search, the parent allows [inventory list_dir read_file web_fetch write_file]"
	if err == nil || err.Error() != want {
		t.Fatalf("CheckBlueprint = %v\nwant %s", err, want)
	}
	var pe *ParseError
	var we *WidenError
	if !errors.As(err, &pe) || !errors.As(err, &we) || we.Child != "web_search" {
		t.Fatalf("error types: %T", err)
	}
	// A parent that has the tools accepts it.
	p := Root()
	p.Capabilities.Allowed = append(p.Capabilities.Allowed, "web_search", "memory_search")
	if err := CheckBlueprint(b, p); err != nil {
		t.Fatal(err)
	}
}

// DC9: strict decoding, each refusal one line "name:LINE:COL: message".
func TestParseBlueprintErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"idd: x\n", `b.yaml:1:1: unknown key "idd"; a blueprint has the keys id, description, capabilities, budget, constraints, scope, dispatch_targets, sop`},
		{"id: x\nbudget:\n  max_token: 5\n", `b.yaml:3:3: unknown key "max_token" in budget; it takes max_tokens, max_concurrent, daily_limit`},
		{"id: x\nbudget:\n  max_tokens: \"lots\"\n", `b.yaml:3:15: budget.max_tokens must be a whole number, not text ("lots")`},
		{"id: x\nbudget:\n  max_tokens: \"5\"\n", `b.yaml:3:15: budget.max_tokens must be a whole number, not text ("5")`},
		{"id: x\nbudget:\n  max_tokens: 1.5\n", `b.yaml:3:15: budget.max_tokens must be a whole number, not 1.5`},
		{"id: x\nbudget:\n  max_tokens: 1e6\n", `b.yaml:3:15: budget.max_tokens must be a whole number, not text ("1e6")`},
		{"id: x\nbudget:\n  max_tokens: -1\n", `b.yaml:3:15: budget.max_tokens must be 0 or more, not -1`},
		{"id: x\nbudget:\n  max_tokens: 99999999999999999999\n", `b.yaml:3:15: budget.max_tokens is too large`},
		{"id: x\nbudget: {daily_limit: true}\n", `b.yaml:2:23: budget.daily_limit must be a whole number, not a boolean`},
		{"id: x\nconstraints:\n  no_spawn: yes\n", `b.yaml:3:13: constraints.no_spawn must be true or false, not text ("yes")`},
		{"id: x\nconstraints:\n  timeout_ms: soon\n", `b.yaml:3:15: constraints.timeout_ms must be a whole number, not text ("soon")`},
		{"id: x\ncapabilities:\n  inherit: partial\n", `b.yaml:3:3: capabilities.inherit: unknown inherit mode "partial"; use none, minimal or full`},
		{"id: x\nscope:\n  write: [../x]\n", `b.yaml:3:11: scope.write: "../x": a path may not contain ".."`},
		{"id: x\nscope:\n  write:\n    - work\n    - /abs\n", `b.yaml:5:7: scope.write: "/abs": a path must be relative to the run folder, not absolute`},
		{"id: x\nscope:\n  read: [work/]\n", `b.yaml:3:10: scope.read: "work/": a path must be clean: no "./", "//" or trailing "/" (write "work")`},
		{"id: x\nid: y\n", `b.yaml:2:1: mapping key "id" already defined at [1:1]`},
		{"id: x\ncapabilities:\n  allow: &a [read_file]\n", `b.yaml:3:10: anchors (&) and aliases (*) are not supported; write the value out`},
		{"id: x\ncapabilities:\n  allow: [!!str read_file]\n", `b.yaml:3:11: tags (!) are not supported; write the plain value`},
		{"id: x\n<<: {a: 1}\n", `b.yaml:2:1: merge keys (<<) are not supported; write the keys out`},
		{"id: x\n---\nid: y\n", `b.yaml:3:1: the file holds more than one YAML document; write one blueprint per file`},
		{"", `b.yaml:1:1: the file is empty; a blueprint needs at least an id`},
		{"description: hi\n", `b.yaml:1:1: id is missing: name the kind of agent this blueprint defines`},
		{"id: 123\n", `b.yaml:1:5: id must be text, not a number`},
		{"id: my agent\n", `b.yaml:1:1: id: a name may hold only letters, digits, "_" and "-"`},
		{"id: x\ncapabilities:\n  allow: read_file\n", `b.yaml:3:10: capabilities.allow must be a list, not text ("read_file"); write [a, b] or one "- item" per line`},
		{"id: x\ncapabilities:\n  deny:\n", `b.yaml:3:3: capabilities.deny has no value; give one or remove the key`},
		{"id: x\ncapabilities:\n  allow: [read_file, read_file]\n", `b.yaml:3:11: capabilities.allow: "read_file" is listed twice`},
		{"id: x\nconstraints:\n  read_only: true\nscope:\n  write: [work]\n", `b.yaml:5:11: scope.write: read_only asks for no writes, yet write paths are given; drop one`},
		{"id: x\nconstraints:\n  timeout_ms: 100\n  stall_threshold_ms: 200\n", `b.yaml:4:3: constraints.stall_threshold_ms: 200 is past timeout_ms (100): the child would be stopped before a stall could be noticed`},
		{"id: x\nconstraints: {no_spawn: true}\ndispatch_targets: [reviewer]\n", `b.yaml:3:20: dispatch_targets: no_spawn asks for no children, yet dispatch targets are given; drop one`},
		{"id: x\nconstraints:\n  allowed_commands: [\"git; rm -rf .\"]\n", `b.yaml:3:22: constraints.allowed_commands: "git; rm -rf .": a command is a bare program name (letters, digits, ".", "_", "+", "-"), without a path, arguments or shell syntax`},
		{"id: x\ncapabilities:\n  composed:\n    - name: a\n      off: [b]\n", `b.yaml:5:7: unknown key "off" in capabilities.composed item 1; it takes name, of`},
		{"id: x\ncapabilities:\n  composed:\n    - name: a\n", `b.yaml:4:7: capabilities.composed: composite a is built from nothing; list its parts in of`},
		{"id: x\nsop:\n  - \"a\\nb\"\n", `b.yaml:3:5: sop: step 1 spans several lines; write one step per line`},
		{"id: x\nsop: 5\n", `b.yaml:2:6: sop must be a list of steps or a block of text, not a number`},
		{"id: x\n\tbudget: 1\n", `b.yaml:2:1: found character '\t' that cannot start any token`},
		{"id: x\nbudget: [1\n", `b.yaml:2:9: sequence end token ']' not found`},
		{"id: x\ndescription: \xff\n", `b.yaml:2:1: not valid UTF-8 text`},
		{"- a\n- b\n", `b.yaml:1:1: a blueprint is a mapping of the keys id, description, capabilities, budget, constraints, scope, dispatch_targets, sop, not a list`},
		{"id: x\nscope: work\n", `b.yaml:2:8: scope must be a mapping of the keys read, write, execute, not text ("work")`},
		{strings.Repeat("[", 40), `b.yaml:1:1: nested more than 32 levels deep; a blueprint nests at most four`},
		{"id: x\ndescription: " + strings.Repeat("a", MaxBlueprintBytes), `b.yaml:1:1: the file is larger than 65536 bytes; a blueprint is a screenful of text`},
	}
	for _, tc := range cases {
		_, err := ParseBlueprint([]byte(tc.in), "b.yaml")
		if err == nil {
			t.Errorf("%q: parsed", tc.in)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.in, err, tc.want)
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: %T is not a *ParseError", tc.in, err)
		}
	}
}

// DC9: a request that is malformed on its own is a *FieldError under the
// *ParseError, so callers can branch on the field.
func TestParseBlueprintErrorUnwraps(t *testing.T) {
	_, err := ParseBlueprint([]byte("id: x\nscope:\n  write: [/abs]\n"), "b.yaml")
	fe := wantField(t, err, "scope.write")
	if fe.Value != "/abs" {
		t.Fatalf("value = %q", fe.Value)
	}
}

// DC3, DC9: a blueprint asking for more than a given parent is refused at
// the line of the offending key or item.
func TestCheckBlueprint(t *testing.T) {
	src := `id: helper
capabilities:
  inherit: full
  allow:
    - read_file
    - write_file
budget:
  max_tokens: 5000
constraints:
  timeout_ms: 90000
  stall_threshold_ms: 5000
  allowed_commands: [pandoc]
scope:
  write: [work/lead/out]
  execute: [work/lead/tools/bin]
dispatch_targets: [researcher]
sop: |
  1. Read.

  2. Write.
`
	parent := lead()
	parent.DispatchTargets = []string{"helper", "researcher"}
	parent.Budget.MaxTokens, parent.TimeoutMs = 10_000, 100_000
	cases := []struct {
		name string
		edit func(*DelegationContract)
		want string
	}{
		{"fits", func(*DelegationContract) {}, ""},
		{"a tool", func(p *DelegationContract) { p.Capabilities.Denied = append(p.Capabilities.Denied, "write_file") }, "b.yaml:6:7: capabilities.allow widens the parent: the child has write_file"},
		{"tokens", func(p *DelegationContract) { p.Budget.MaxTokens = 4999 }, "b.yaml:8:3: budget.max_tokens widens the parent: the child has 5000, the parent allows 4999"},
		{"deadline", func(p *DelegationContract) { p.TimeoutMs = 80_000 }, "b.yaml:10:3: constraints.timeout_ms widens the parent: the child has 90000, the parent allows 80000"},
		{"a command", func(p *DelegationContract) { p.Constraints.AllowedCommands = nil }, "b.yaml:12:22: constraints.allowed_commands widens the parent: the child has pandoc, the parent allows none"},
		{"a write path", func(p *DelegationContract) { p.Scope.Write = []string{"work/other"} }, "b.yaml:14:11: scope.write widens the parent: the child has work/lead/out"},
		{"an execute path", func(p *DelegationContract) { p.Scope.Execute = []string{"work/lead/tool"} }, "b.yaml:15:13: scope.execute widens the parent: the child has work/lead/tools/bin, the parent allows [work/lead/tool]"},
		{"a target", func(p *DelegationContract) { p.DispatchTargets = []string{"helper"} }, "b.yaml:16:20: dispatch_targets widens the parent: the child has researcher, the parent allows [helper]"},
		{"not dispatchable", func(p *DelegationContract) { p.DispatchTargets = []string{"researcher"} }, "b.yaml:1:1: the parent (lead) may not start a helper agent: dispatch_targets widens the parent: the child has helper, the parent allows [researcher]"},
		{"a later stall alert", func(p *DelegationContract) { p.StallThresholdMs = 4000 }, "b.yaml:11:3: constraints.stall_threshold_ms widens the parent: the child has 5000, the parent allows 4000"},
	}
	b, err := ParseBlueprint([]byte(src), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := clone(parent)
			tc.edit(&p)
			err := CheckBlueprint(b, p)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got  %v\nwant %s…", err, tc.want)
			}
		})
	}
	// SOP lines keep their own line numbers in a block.
	if at := b.at.of("sop", "Write."); at.Line != 20 {
		t.Fatalf("sop step at line %d, want 20", at.Line)
	}
}

// A blueprint built in code has no file positions: its errors come back
// unchanged. A malformed parent is the parent's fault, not the file's.
func TestCheckBlueprintWithoutPositions(t *testing.T) {
	b := Blueprint{ID: "x", Capabilities: BlueprintCapabilities{Allow: []string{"shell"}}}
	err := CheckBlueprint(b, Root())
	var we *WidenError
	if !errors.As(err, &we) || err.Error() != we.Error() {
		t.Fatalf("err = %v", err)
	}
	bad := Root()
	bad.TimeoutMs = 0
	err = CheckBlueprint(b, bad)
	var pe *ParseError
	if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "parent contract") {
		t.Fatalf("err = %v", err)
	}
}

// Fuzzing keeps the reader total: any bytes give a blueprint or a one-line
// positioned error, never a panic, and whatever parses is a valid request.
func FuzzParseBlueprint(f *testing.F) {
	f.Add([]byte(fullBlueprint))
	f.Add([]byte("id: x\nsop: |\n  1. a\n  2. b\n"))
	f.Add([]byte("id: x\ncapabilities: {inherit: full, deny: [a]}\n"))
	f.Add([]byte("id: [x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBlueprint(data, "f.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml:") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("malformed error %q", err)
			}
			return
		}
		if e := validateRequest(b.Request()); e != nil {
			t.Fatalf("parsed an invalid request: %v", e)
		}
		if c, err := Clone(Root(), b.Request()); err == nil {
			if err := ValidateNarrowing(Root(), c); err != nil {
				t.Fatal(err)
			}
		}
	})
}
