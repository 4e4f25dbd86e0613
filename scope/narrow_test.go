package scope

import (
	"strings"
	"testing"
)

// DC3: a contract narrows itself (reflexivity), and each single widening
// of one field is refused with that field named.
func TestValidateNarrowing(t *testing.T) {
	if err := ValidateNarrowing(lead(), lead()); err != nil {
		t.Fatalf("a contract does not narrow itself: %v", err)
	}
	cases := []struct {
		name  string
		edit  func(*DelegationContract)
		field string
	}{
		{"a new plain tool", func(c *DelegationContract) { c.Capabilities.Allowed = append(c.Capabilities.Allowed, "shell") }, "capabilities.allowed"},
		{"a denied tool undenied", func(c *DelegationContract) { c.Capabilities.Denied = nil }, "capabilities.denied"},
		{"a composite redefined", func(c *DelegationContract) { c.Capabilities.Composed[0].Of = []string{"read_file", "write_file"} }, "capabilities.allowed"},
		{"a composite turned plain", func(c *DelegationContract) { c.Capabilities.Composed = nil }, "capabilities.allowed"},
		{"a new composite of the parent's plain tools", func(c *DelegationContract) {
			c.Capabilities.Allowed = append(c.Capabilities.Allowed, "copy")
			c.Capabilities.Composed = append(c.Capabilities.Composed, Composite{Name: "copy", Of: []string{"read_file", "write_file"}})
		}, ""}, // allowed: no more power than its parts
		{"a command added", func(c *DelegationContract) {
			c.Constraints.AllowedCommands = append(c.Constraints.AllowedCommands, "curl")
		}, "constraints.allowed_commands"},
		{"sandbox switched off", func(c *DelegationContract) { c.Constraints.SandboxRequired = false }, "constraints.sandbox_required"},
		{"a write path outside", func(c *DelegationContract) { c.Scope.Write = []string{"work"} }, "scope.write"},
		{"a write path beside", func(c *DelegationContract) { c.Scope.Write = []string{"work/leader"} }, "scope.write"},
		{"a read path outside", func(c *DelegationContract) { c.Scope.Read = []string{"harness"} }, "scope.read"},
		{"an execute path in the write scope", func(c *DelegationContract) { c.Scope.Execute = []string{"work/lead"} }, "scope.execute"},
		{"more tokens", func(c *DelegationContract) { c.Budget.MaxTokens++ }, "budget.max_tokens"},
		{"more concurrency", func(c *DelegationContract) { c.Budget.MaxConcurrent++ }, "budget.max_concurrent"},
		{"more sessions a day", func(c *DelegationContract) { c.Budget.DailyLimit++ }, "budget.daily_limit"},
		{"a later deadline", func(c *DelegationContract) { c.TimeoutMs++ }, "timeout_ms"},
		{"a later stall alert", func(c *DelegationContract) { c.StallThresholdMs++ }, "stall_threshold_ms"},
		{"a new target", func(c *DelegationContract) { c.DispatchTargets = append(c.DispatchTargets, "writer") }, "dispatch_targets"},
		{"any target", func(c *DelegationContract) { c.DispatchTargets = []string{AnyKind} }, "dispatch_targets"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clone(lead())
			tc.edit(&c)
			err := ValidateNarrowing(lead(), c)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantWiden(t, err, tc.field, "")
		})
	}
}

// DC3: each restriction flag, once on in the parent, must stay on.
func TestValidateNarrowingFlags(t *testing.T) {
	for _, field := range []string{"no_spawn", "no_network", "read_only", "sandbox_required"} {
		p := lead()
		p.Constraints = Constraints{NoSpawn: true, NoNetwork: true, ReadOnly: true, SandboxRequired: true}
		p.Scope.Write, p.DispatchTargets = nil, nil
		c := clone(p)
		switch field {
		case "no_spawn":
			c.Constraints.NoSpawn = false
		case "no_network":
			c.Constraints.NoNetwork = false
		case "read_only":
			c.Constraints.ReadOnly = false
		case "sandbox_required":
			c.Constraints.SandboxRequired = false
		}
		we := wantWiden(t, ValidateNarrowing(p, c), "constraints."+field, "false")
		if want := "constraints." + field + " widens the parent: the child has false, the parent allows only true"; we.Error() != want {
			t.Fatalf("%q\nwant %q", we.Error(), want)
		}
	}
}

// DC3: a name means one thing down a chain: a parent's plain tool may not
// come back as a child's composite, and a parent's denied name may not
// come back at all.
func TestValidateNarrowingNames(t *testing.T) {
	p := lead()
	p.Capabilities.Allowed = append(p.Capabilities.Allowed, "tidy")
	c := clone(p)
	c.Capabilities.Composed = append(c.Capabilities.Composed, Composite{Name: "tidy", Of: []string{"list_dir"}})
	we := wantWiden(t, ValidateNarrowing(p, c), "capabilities.allowed", "")
	if !strings.Contains(we.Error(), "only the plain tool tidy") {
		t.Fatal(we)
	}

	p = lead()
	p.Capabilities.Denied = append(p.Capabilities.Denied, "copy")
	c = clone(lead())
	c.Capabilities.Allowed = append(c.Capabilities.Allowed, "copy")
	c.Capabilities.Composed = append(c.Capabilities.Composed, Composite{Name: "copy", Of: []string{"read_file"}})
	wantWiden(t, ValidateNarrowing(p, c), "capabilities.denied", "copy not denied")
}

// A malformed contract is reported as such, not as a widening.
func TestValidateNarrowingMalformed(t *testing.T) {
	c := clone(lead())
	c.Scope.Write = []string{"/abs"}
	err := ValidateNarrowing(lead(), c)
	wantField(t, err, "scope.write")
	if !strings.HasPrefix(err.Error(), "child contract: ") {
		t.Fatalf("err = %v", err)
	}
	err = ValidateNarrowing(c, lead())
	if !strings.HasPrefix(err.Error(), "parent contract: ") {
		t.Fatalf("err = %v", err)
	}
}

// DC2: the Guard's check at a spawn also asks whether the parent may
// dispatch the child's kind.
func TestValidateDelegation(t *testing.T) {
	c, err := Clone(lead(), Request{AgentKind: "reviewer", Inherit: InheritMinimal})
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateDelegation(lead(), c); err != nil {
		t.Fatal(err)
	}
	c.Identity.AgentKind = "writer"
	wantWiden(t, ValidateDelegation(lead(), c), "dispatch_targets", "writer")
}
