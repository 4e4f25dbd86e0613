package scope

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// DC1, DC2: the root contract every run starts from is valid and is what
// the docs promise.
func TestRoot(t *testing.T) {
	r := Root()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Tools(), DefaultTools()) {
		t.Fatalf("root tools = %v", r.Tools())
	}
	if !slices.Equal(r.Scope.Write, []string{"work"}) || !slices.Equal(r.Scope.Read, []string{"inputs", "work"}) {
		t.Fatalf("root scope = %+v", r.Scope)
	}
	if r.Constraints.NoSpawn || !slices.Equal(r.DispatchTargets, []string{AnyKind}) {
		t.Fatalf("root may not spawn freely: %+v %v", r.Constraints, r.DispatchTargets)
	}
	// Root returns a fresh value: changing one does not change the next.
	r.Capabilities.Allowed[0] = "x"
	if Root().Capabilities.Allowed[0] == "x" {
		t.Fatal("Root shares its slices")
	}
}

func TestToolsIsAllowedMinusDenied(t *testing.T) {
	d := DelegationContract{Capabilities: Capabilities{
		Allowed: []string{"write_file", "read_file", "bash", "read_file"},
		Denied:  []string{"bash", "ftp"},
	}}
	if got := d.Tools(); !slices.Equal(got, []string{"read_file", "write_file"}) {
		t.Fatalf("Tools() = %v", got)
	}
}

// DC2: Validate names the field of each malformation.
func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*DelegationContract)
		field string
		msg   string // a part of the message
	}{
		{"no kind", func(d *DelegationContract) { d.Identity.AgentKind = "" }, "identity.agent_kind", "empty"},
		{"kind any", func(d *DelegationContract) { d.Identity.AgentKind = AnyKind }, "identity.agent_kind", "letter"},
		{"session over lines", func(d *DelegationContract) { d.Identity.Session = "a\nb" }, "identity.session", "lines"},
		{"tool name with a space", func(d *DelegationContract) { d.Capabilities.Allowed[0] = "read file" }, "capabilities.allowed", "only letters"},
		{"tool name too long", func(d *DelegationContract) { d.Capabilities.Allowed[0] = "a" + strings.Repeat("b", 64) }, "capabilities.allowed", "64"},
		{"duplicate tool", func(d *DelegationContract) { d.Capabilities.Allowed[1] = d.Capabilities.Allowed[2] }, "capabilities.allowed", "twice"},
		{"duplicate denial", func(d *DelegationContract) { d.Capabilities.Denied = []string{"bash", "bash"} }, "capabilities.denied", "twice"},
		{"composite not a tool", func(d *DelegationContract) { d.Capabilities.Denied = append(d.Capabilities.Denied, "survey") }, "capabilities.composed", "not among"},
		{"composite of a denied part", func(d *DelegationContract) { d.Capabilities.Denied = append(d.Capabilities.Denied, "list_dir") }, "capabilities.composed", "list_dir"},
		{"composite of a composite", func(d *DelegationContract) {
			d.Capabilities.Allowed = append(d.Capabilities.Allowed, "deep")
			d.Capabilities.Composed = append(d.Capabilities.Composed, Composite{Name: "deep", Of: []string{"survey"}})
		}, "capabilities.composed", "plain parts"},
		{"composite of nothing", func(d *DelegationContract) { d.Capabilities.Composed[0].Of = nil }, "capabilities.composed", "nothing"},
		{"composite defined twice", func(d *DelegationContract) {
			d.Capabilities.Composed = append(d.Capabilities.Composed, d.Capabilities.Composed[0])
		}, "capabilities.composed", "twice"},
		{"composite with a harness tool's name", func(d *DelegationContract) {
			d.Capabilities.Composed = append(d.Capabilities.Composed, Composite{Name: "inventory", Of: []string{"read_file"}})
		}, "capabilities.composed", "harness tool"},
		{"command with arguments", func(d *DelegationContract) { d.Constraints.AllowedCommands = []string{"rm -rf"} }, "constraints.allowed_commands", "bare program"},
		{"command starting with a dash", func(d *DelegationContract) { d.Constraints.AllowedCommands = []string{"-x"} }, "constraints.allowed_commands", "start"},
		{"absolute path", func(d *DelegationContract) { d.Scope.Read = []string{"/etc"} }, "scope.read", "absolute"},
		{"dot-dot path", func(d *DelegationContract) { d.Scope.Write = []string{"work/../x"} }, "scope.write", ".."},
		{"colon path", func(d *DelegationContract) { d.Scope.Execute = []string{"c:/x"} }, "scope.execute", ":"},
		{"control character in a path", func(d *DelegationContract) { d.Scope.Read = []string{"in\x00puts"} }, "scope.read", "control"},
		{"read_only with write paths", func(d *DelegationContract) { d.Constraints.ReadOnly = true }, "scope.write", "read-only"},
		{"no tokens", func(d *DelegationContract) { d.Budget.MaxTokens = 0 }, "budget.max_tokens", "at least 1"},
		{"no concurrency", func(d *DelegationContract) { d.Budget.MaxConcurrent = 0 }, "budget.max_concurrent", "at least 1"},
		{"no daily limit", func(d *DelegationContract) { d.Budget.DailyLimit = -3 }, "budget.daily_limit", "at least 1"},
		{"no timeout", func(d *DelegationContract) { d.TimeoutMs = 0 }, "timeout_ms", "deadline"},
		{"no stall threshold", func(d *DelegationContract) { d.StallThresholdMs = 0 }, "stall_threshold_ms", "at least 1"},
		{"stall past the timeout", func(d *DelegationContract) { d.StallThresholdMs = d.TimeoutMs + 1 }, "stall_threshold_ms", "past the timeout"},
		{"empty SOP step", func(d *DelegationContract) { d.SOP = []string{"a", ""} }, "sop", "step 2 is empty"},
		{"bad target", func(d *DelegationContract) { d.DispatchTargets = []string{"re/viewer"} }, "dispatch_targets", "only letters"},
		{"no_spawn with targets", func(d *DelegationContract) { d.Constraints.NoSpawn = true }, "dispatch_targets", "no_spawn"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := clone(lead())
			tc.edit(&d)
			fe := wantField(t, d.Validate(), tc.field)
			if !strings.Contains(fe.Error(), tc.msg) {
				t.Fatalf("message %q lacks %q", fe.Error(), tc.msg)
			}
		})
	}
	if err := lead().Validate(); err != nil {
		t.Fatalf("lead: %v", err)
	}
}

func TestCheckPath(t *testing.T) {
	good := []string{"work", "work/root/market", "inputs/a b", "work/ü", "a..b", "x/.hidden"}
	bad := []string{"", ".", "/work", "work/", "./work", "work//a", "work/./a", "..", "work/../x", `a\b`, "c:", "w*", "a?", "a[1]", "a\tb"}
	for _, p := range good {
		if msg := checkPath(p); msg != "" {
			t.Errorf("checkPath(%q) = %q, want ok", p, msg)
		}
	}
	for _, p := range bad {
		if checkPath(p) == "" {
			t.Errorf("checkPath(%q) accepted a bad path", p)
		}
	}
}

// DC3: paths nest by whole segments, never by string prefix.
func TestInside(t *testing.T) {
	cases := []struct {
		p, root string
		want    bool
	}{
		{"work", "work", true},
		{"work/a", "work", true},
		{"work/a/b", "work/a", true},
		{"workshop", "work", false},
		{"work/ab", "work/a", false},
		{"work", "work/a", false},
		{"inputs", "work", false},
	}
	for _, tc := range cases {
		if got := inside(tc.p, tc.root); got != tc.want {
			t.Errorf("inside(%q, %q) = %v", tc.p, tc.root, got)
		}
	}
}

// DC2: the JSON form uses snake_case keys and round-trips.
func TestJSON(t *testing.T) {
	d := lead()
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"agent_kind"`, `"allowed"`, `"denied"`, `"composed"`, `"sandbox_required"`, `"allowed_commands"`, `"execute"`, `"max_tokens"`, `"max_concurrent"`, `"daily_limit"`, `"timeout_ms"`, `"stall_threshold_ms"`, `"sop"`, `"dispatch_targets"`} {
		if !strings.Contains(string(data), k) {
			t.Errorf("JSON lacks %s: %s", k, data)
		}
	}
	var back DelegationContract
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if err := ValidateNarrowing(d, back); err != nil {
		t.Fatal(err)
	}
	if err := ValidateNarrowing(back, d); err != nil {
		t.Fatal(err)
	}
}

// DC2: whom a parent may start.
func TestCheckDispatch(t *testing.T) {
	p := lead()
	if err := CheckDispatch(p, "reviewer"); err != nil {
		t.Fatal(err)
	}
	wantWiden(t, CheckDispatch(p, "writer"), "dispatch_targets", "writer")
	if err := CheckDispatch(Root(), "anything"); err != nil {
		t.Fatal(err)
	}
	p.Constraints.NoSpawn, p.DispatchTargets = true, nil
	we := wantWiden(t, CheckDispatch(p, "reviewer"), "dispatch_targets", "reviewer")
	if !strings.Contains(we.Parent, "no_spawn") {
		t.Fatalf("parent bound %q does not say why", we.Parent)
	}
}

// DC6, DC7: Remaining floors at zero and keeps the stall threshold inside
// the deadline.
func TestRemaining(t *testing.T) {
	r := lead().Remaining(Spent{Tokens: 5000, ElapsedMs: 70_000, SessionsToday: 99})
	if r.Budget.MaxTokens != 0 || r.TimeoutMs != 0 || r.StallThresholdMs != 0 || r.Budget.DailyLimit != 0 {
		t.Fatalf("remaining = %+v", r)
	}
	if err := r.Validate(); err == nil {
		t.Fatal("a spent-out contract validated")
	}
	n := lead().Remaining(Spent{Tokens: -5})
	if n.Budget.MaxTokens != 1000 {
		t.Fatalf("negative spending raised the budget: %d", n.Budget.MaxTokens)
	}
}
