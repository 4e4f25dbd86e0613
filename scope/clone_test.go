package scope

import (
	"slices"
	"strings"
	"testing"
)

// cloneCase is one step of Clone: a request (and optionally a changed
// parent), and either what the child must look like or the error.
type cloneCase struct {
	name   string
	parent func(*DelegationContract)
	req    Request
	check  func(t *testing.T, c DelegationContract)
	widen  string // field of the expected *WidenError
	child  string // its Child value, when it matters
	field  string // field of the expected *FieldError
}

func runCloneCases(t *testing.T, cases []cloneCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := lead()
			if tc.parent != nil {
				tc.parent(&p)
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("test parent invalid: %v", err)
			}
			if tc.req.AgentKind == "" {
				tc.req.AgentKind = "researcher"
			}
			c, err := Clone(p, tc.req)
			switch {
			case tc.widen != "":
				wantWiden(t, err, tc.widen, tc.child)
			case tc.field != "":
				wantField(t, err, tc.field)
			case err != nil:
				t.Fatalf("Clone: %v", err)
			default:
				// Whatever a case checks, every child must pass the
				// Guard's check against its parent (DC3).
				if err := ValidateNarrowing(p, c); err != nil {
					t.Fatalf("ValidateNarrowing: %v", err)
				}
				if tc.check != nil {
					tc.check(t, c)
				}
			}
		})
	}
}

func tools(want ...string) func(*testing.T, DelegationContract) {
	return func(t *testing.T, c DelegationContract) {
		t.Helper()
		if got := c.Tools(); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("tools = %v, want %v", got, want)
		}
	}
}

// DC3: inherit → allow → deny → composed, one step at a time.
func TestCloneTools(t *testing.T) {
	runCloneCases(t, []cloneCase{
		{name: "inherit none gives nothing", req: Request{Inherit: InheritNone}, check: tools()},
		{name: "empty inherit means none", req: Request{}, check: tools()},
		{name: "inherit minimal is the read-only base", req: Request{Inherit: InheritMinimal}, check: tools("list_dir", "read_file")},
		{
			name: "inherit minimal is intersected with the parent",
			parent: func(p *DelegationContract) {
				p.Capabilities.Denied = append(p.Capabilities.Denied, "list_dir", "survey")
				p.Capabilities.Composed = nil
			},
			req:   Request{Inherit: InheritMinimal},
			check: tools("read_file"),
		},
		{
			name:  "inherit full is the parent's effective set, with its composites",
			req:   Request{Inherit: InheritFull},
			check: tools("inventory", "list_dir", "read_file", "survey", "web_fetch", "write_file"),
		},
		{
			name: "full keeps the composite's definition",
			req:  Request{Inherit: InheritFull},
			check: func(t *testing.T, c DelegationContract) {
				if len(c.Capabilities.Composed) != 1 || c.Capabilities.Composed[0].String() != "survey = [list_dir read_file]" {
					t.Fatalf("composed = %v", c.Capabilities.Composed)
				}
			},
		},
		{name: "allow under full is a whitelist", req: Request{Inherit: InheritFull, Allow: []string{"read_file", "write_file"}}, check: tools("read_file", "write_file")},
		{name: "allow under minimal adds to the base", req: Request{Inherit: InheritMinimal, Allow: []string{"web_fetch"}}, check: tools("list_dir", "read_file", "web_fetch")},
		{name: "allow under none is the whole set", req: Request{Allow: []string{"write_file"}}, check: tools("write_file")},
		{name: "allow of a tool the parent lacks is an error, not a drop", req: Request{Allow: []string{"shell"}}, widen: "capabilities.allow", child: "shell"},
		{name: "allow of a tool the parent denies is an error", req: Request{Inherit: InheritFull, Allow: []string{"bash"}}, widen: "capabilities.allow", child: "bash"},
		{name: "allow of a composite without its parts is an error", req: Request{Allow: []string{"survey", "list_dir"}}, field: "capabilities.allow"},
		{
			name: "allow of a composite with its parts keeps it",
			req:  Request{Allow: []string{"survey", "list_dir", "read_file"}},
			check: func(t *testing.T, c DelegationContract) {
				tools("list_dir", "read_file", "survey")(t, c)
				if len(c.Capabilities.Composed) != 1 {
					t.Fatalf("composed = %v", c.Capabilities.Composed)
				}
			},
		},
		{name: "deny removes", req: Request{Inherit: InheritFull, Deny: []string{"web_fetch"}}, check: tools("inventory", "list_dir", "read_file", "survey", "write_file")},
		{
			name: "deny of a part removes every composite built on it",
			req:  Request{Inherit: InheritFull, Deny: []string{"read_file"}},
			check: func(t *testing.T, c DelegationContract) {
				tools("inventory", "list_dir", "web_fetch", "write_file")(t, c)
				if len(c.Capabilities.Composed) != 0 {
					t.Fatalf("composed = %v", c.Capabilities.Composed)
				}
			},
		},
		{name: "deny wins over allow", req: Request{Inherit: InheritMinimal, Allow: []string{"web_fetch"}, Deny: []string{"web_fetch"}}, check: tools("list_dir", "read_file")},
		{
			name: "deny of a tool nobody has is a harmless, recorded denial",
			req:  Request{Inherit: InheritMinimal, Deny: []string{"ftp"}},
			check: func(t *testing.T, c DelegationContract) {
				if !slices.Equal(c.Capabilities.Denied, []string{"bash", "ftp"}) {
					t.Fatalf("denied = %v", c.Capabilities.Denied)
				}
			},
		},
		{
			name: "the parent's denials are inherited whatever the mode",
			req:  Request{Inherit: InheritNone},
			check: func(t *testing.T, c DelegationContract) {
				if !slices.Equal(c.Capabilities.Denied, []string{"bash"}) {
					t.Fatalf("denied = %v", c.Capabilities.Denied)
				}
			},
		},
		{
			name: "composed adds a composite of tools in the set",
			req:  Request{Inherit: InheritMinimal, Allow: []string{"write_file"}, Composed: []Composite{{Name: "copy", Of: []string{"read_file", "write_file"}}}},
			check: func(t *testing.T, c DelegationContract) {
				tools("copy", "list_dir", "read_file", "write_file")(t, c)
				if def, ok := c.composite("copy"); !ok || !slices.Equal(def.Of, []string{"read_file", "write_file"}) {
					t.Fatalf("composed = %v", c.Capabilities.Composed)
				}
			},
		},
		{name: "composed from a tool not in the set is an error", req: Request{Composed: []Composite{{Name: "copy", Of: []string{"read_file"}}}}, field: "capabilities.composed"},
		{name: "composed from a tool denied just before is an error", req: Request{Inherit: InheritMinimal, Deny: []string{"read_file"}, Composed: []Composite{{Name: "look", Of: []string{"read_file"}}}}, field: "capabilities.composed"},
		{name: "composed from a tool the parent lacks is an error", req: Request{Inherit: InheritFull, Composed: []Composite{{Name: "run", Of: []string{"shell"}}}}, field: "capabilities.composed"},
		{name: "composed from a composite is an error", req: Request{Inherit: InheritFull, Composed: []Composite{{Name: "deep", Of: []string{"survey"}}}}, field: "capabilities.composed"},
		{name: "composite name colliding with the set", req: Request{Inherit: InheritFull, Composed: []Composite{{Name: "survey", Of: []string{"read_file"}}}}, field: "capabilities.composed"},
		{name: "composite name colliding with a parent's denial", req: Request{Inherit: InheritMinimal, Composed: []Composite{{Name: "bash", Of: []string{"read_file"}}}}, field: "capabilities.composed"},
		{name: "composite name colliding with a parent tool the child lacks", req: Request{Inherit: InheritMinimal, Composed: []Composite{{Name: "inventory2", Of: []string{"read_file"}}}}, parent: func(p *DelegationContract) { p.Capabilities.Allowed = append(p.Capabilities.Allowed, "inventory2") }, field: "capabilities.composed"},
		{name: "composite name of a harness tool", req: Request{Inherit: InheritMinimal, Composed: []Composite{{Name: "web_fetch", Of: []string{"read_file"}}}}, field: "capabilities.composed"},
		{name: "composite that is also denied", req: Request{Inherit: InheritMinimal, Deny: []string{"look"}, Composed: []Composite{{Name: "look", Of: []string{"read_file"}}}}, field: "capabilities.composed"},
		{name: "composite defined twice", req: Request{Inherit: InheritMinimal, Composed: []Composite{{Name: "look", Of: []string{"read_file"}}, {Name: "look", Of: []string{"list_dir"}}}}, field: "capabilities.composed"},
		{name: "composite of nothing", req: Request{Inherit: InheritMinimal, Composed: []Composite{{Name: "look"}}}, field: "capabilities.composed"},
		{name: "composite listing a part twice", req: Request{Inherit: InheritMinimal, Composed: []Composite{{Name: "look", Of: []string{"read_file", "read_file"}}}}, field: "capabilities.composed"},
		{name: "unknown inherit mode", req: Request{Inherit: "some"}, field: "capabilities.inherit"},
		{name: "bad tool name", req: Request{Allow: []string{"read file"}}, field: "capabilities.allow"},
		{name: "duplicate allow", req: Request{Allow: []string{"read_file", "read_file"}}, field: "capabilities.allow"},
	})
}

// DC3: restrictions only switch on; commands are named or none, by exact name.
func TestCloneConstraints(t *testing.T) {
	runCloneCases(t, []cloneCase{
		{
			name: "flags are the parent's OR the request's",
			req:  Request{Constraints: Constraints{NoNetwork: true}},
			check: func(t *testing.T, c DelegationContract) {
				if !c.Constraints.SandboxRequired || !c.Constraints.NoNetwork || c.Constraints.NoSpawn || c.Constraints.ReadOnly {
					t.Fatalf("constraints = %+v", c.Constraints)
				}
			},
		},
		{
			name: "a child cannot switch a restriction off",
			parent: func(p *DelegationContract) {
				p.Constraints.ReadOnly, p.Constraints.NoSpawn, p.Scope.Write, p.DispatchTargets = true, true, nil, nil
			},
			req: Request{},
			check: func(t *testing.T, c DelegationContract) {
				if !c.Constraints.ReadOnly || !c.Constraints.NoSpawn {
					t.Fatalf("constraints = %+v", c.Constraints)
				}
			},
		},
		{
			name: "commands are named or none",
			req:  Request{},
			check: func(t *testing.T, c DelegationContract) {
				if c.Constraints.AllowedCommands != nil {
					t.Fatalf("commands = %v", c.Constraints.AllowedCommands)
				}
			},
		},
		{
			name: "commands within the parent's",
			req:  Request{Constraints: Constraints{AllowedCommands: []string{"pdftotext"}}},
			check: func(t *testing.T, c DelegationContract) {
				if !slices.Equal(c.Constraints.AllowedCommands, []string{"pdftotext"}) {
					t.Fatalf("commands = %v", c.Constraints.AllowedCommands)
				}
			},
		},
		{name: "a command the parent lacks", req: Request{Constraints: Constraints{AllowedCommands: []string{"bash"}}}, widen: "constraints.allowed_commands", child: "bash"},
		{name: "an empty parent list allows none, not all", parent: func(p *DelegationContract) { p.Constraints.AllowedCommands = nil }, req: Request{Constraints: Constraints{AllowedCommands: []string{"pandoc"}}}, widen: "constraints.allowed_commands"},
		{name: "a command is not a prefix", req: Request{Constraints: Constraints{AllowedCommands: []string{"pandoc2"}}}, widen: "constraints.allowed_commands"},
		{name: "a command with arguments is malformed", req: Request{Constraints: Constraints{AllowedCommands: []string{"pandoc -o x"}}}, field: "constraints.allowed_commands"},
		{name: "a command with shell syntax is malformed", req: Request{Constraints: Constraints{AllowedCommands: []string{"pandoc;rm"}}}, field: "constraints.allowed_commands"},
		{name: "a command path is malformed", req: Request{Constraints: Constraints{AllowedCommands: []string{"/usr/bin/pandoc"}}}, field: "constraints.allowed_commands"},
	})
}

// DC3: scope paths nest segment-wise; reading may use the parent's write
// paths, executing may not.
func TestCloneScope(t *testing.T) {
	runCloneCases(t, []cloneCase{
		{
			name: "paths are named or none",
			req:  Request{},
			check: func(t *testing.T, c DelegationContract) {
				if c.Scope.Read != nil || c.Scope.Write != nil || c.Scope.Execute != nil {
					t.Fatalf("scope = %+v", c.Scope)
				}
			},
		},
		{
			name: "paths inside the parent's, sorted",
			req:  Request{Scope: Scope{Read: []string{"work/lead", "inputs/a"}, Write: []string{"work/lead/b"}, Execute: []string{"work/lead/tools"}}},
			check: func(t *testing.T, c DelegationContract) {
				want := Scope{Read: []string{"inputs/a", "work/lead"}, Write: []string{"work/lead/b"}, Execute: []string{"work/lead/tools"}}
				if !slices.Equal(c.Scope.Read, want.Read) || !slices.Equal(c.Scope.Write, want.Write) || !slices.Equal(c.Scope.Execute, want.Execute) {
					t.Fatalf("scope = %+v, want %+v", c.Scope, want)
				}
			},
		},
		{name: "write outside", req: Request{Scope: Scope{Write: []string{"work"}}}, widen: "scope.write", child: "work"},
		{name: "write beside, sharing a string prefix", req: Request{Scope: Scope{Write: []string{"work/leader"}}}, widen: "scope.write", child: "work/leader"},
		{name: "write inside a parent read path only", req: Request{Scope: Scope{Write: []string{"inputs"}}}, widen: "scope.write", child: "inputs"},
		{name: "read outside", req: Request{Scope: Scope{Read: []string{"harness"}}}, widen: "scope.read", child: "harness"},
		{name: "read beside, sharing a string prefix", req: Request{Scope: Scope{Read: []string{"inputs2"}}}, widen: "scope.read", child: "inputs2"},
		{name: "execute inside a write path only", req: Request{Scope: Scope{Execute: []string{"work/lead/x"}}}, widen: "scope.execute", child: "work/lead/x"},
		{name: "absolute path", req: Request{Scope: Scope{Read: []string{"/etc"}}}, field: "scope.read"},
		{name: "dot-dot", req: Request{Scope: Scope{Write: []string{"work/lead/../../etc"}}}, field: "scope.write"},
		{name: "unclean path", req: Request{Scope: Scope{Write: []string{"work/lead/"}}}, field: "scope.write"},
		{name: "dot-slash path", req: Request{Scope: Scope{Read: []string{"./inputs"}}}, field: "scope.read"},
		{name: "the run folder", req: Request{Scope: Scope{Read: []string{"."}}}, field: "scope.read"},
		{name: "backslash", req: Request{Scope: Scope{Read: []string{`inputs\a`}}}, field: "scope.read"},
		{name: "glob", req: Request{Scope: Scope{Read: []string{"inputs/*"}}}, field: "scope.read"},
		{name: "duplicate path", req: Request{Scope: Scope{Read: []string{"inputs", "inputs"}}}, field: "scope.read"},
		{name: "read_only with write paths", req: Request{Constraints: Constraints{ReadOnly: true}, Scope: Scope{Write: []string{"work/lead"}}}, field: "scope.write"},
		{
			name:   "a read-only parent has nothing to write",
			parent: func(p *DelegationContract) { p.Constraints.ReadOnly, p.Scope.Write = true, nil },
			req:    Request{Scope: Scope{Write: []string{"work/lead"}}},
			widen:  "scope.write",
		},
	})
}

// DC3, DC6, DC7: budgets and timeouts are caps; 0 takes the parent's.
func TestCloneBudgetAndTimeouts(t *testing.T) {
	runCloneCases(t, []cloneCase{
		{
			name: "zero takes the parent's values",
			req:  Request{},
			check: func(t *testing.T, c DelegationContract) {
				if c.Budget != (Budget{MaxTokens: 1000, MaxConcurrent: 4, DailyLimit: 10}) || c.TimeoutMs != 60_000 || c.StallThresholdMs != 10_000 {
					t.Fatalf("budget = %+v, timeout %d, stall %d", c.Budget, c.TimeoutMs, c.StallThresholdMs)
				}
			},
		},
		{
			name: "smaller values are kept",
			req:  Request{Budget: Budget{MaxTokens: 10, MaxConcurrent: 1, DailyLimit: 2}, TimeoutMs: 5000, StallThresholdMs: 1000},
			check: func(t *testing.T, c DelegationContract) {
				if c.Budget != (Budget{MaxTokens: 10, MaxConcurrent: 1, DailyLimit: 2}) || c.TimeoutMs != 5000 || c.StallThresholdMs != 1000 {
					t.Fatalf("budget = %+v, timeout %d, stall %d", c.Budget, c.TimeoutMs, c.StallThresholdMs)
				}
			},
		},
		{
			name: "an inherited stall threshold shrinks to the child's timeout",
			req:  Request{TimeoutMs: 5000},
			check: func(t *testing.T, c DelegationContract) {
				if c.StallThresholdMs != 5000 {
					t.Fatalf("stall = %d", c.StallThresholdMs)
				}
			},
		},
		{name: "max_tokens over the parent's", req: Request{Budget: Budget{MaxTokens: 1001}}, widen: "budget.max_tokens", child: "1001"},
		{name: "max_concurrent over the parent's", req: Request{Budget: Budget{MaxConcurrent: 5}}, widen: "budget.max_concurrent", child: "5"},
		{name: "daily_limit over the parent's", req: Request{Budget: Budget{DailyLimit: 11}}, widen: "budget.daily_limit", child: "11"},
		{name: "negative max_tokens", req: Request{Budget: Budget{MaxTokens: -1}}, field: "budget.max_tokens"},
		{name: "negative max_concurrent", req: Request{Budget: Budget{MaxConcurrent: -1}}, field: "budget.max_concurrent"},
		{name: "negative daily_limit", req: Request{Budget: Budget{DailyLimit: -1}}, field: "budget.daily_limit"},
		{name: "timeout past the parent's deadline", req: Request{TimeoutMs: 60_001}, widen: "timeout_ms", child: "60001"},
		{name: "stall past the parent's", req: Request{StallThresholdMs: 10_001}, widen: "stall_threshold_ms", child: "10001"},
		{name: "negative timeout", req: Request{TimeoutMs: -1}, field: "timeout_ms"},
		{name: "negative stall", req: Request{StallThresholdMs: -1}, field: "stall_threshold_ms"},
		{name: "stall past the requested timeout", req: Request{TimeoutMs: 1000, StallThresholdMs: 2000}, field: "stall_threshold_ms"},
	})
}

// DC2: dispatch targets are named or none, within the parent's.
func TestCloneDispatch(t *testing.T) {
	runCloneCases(t, []cloneCase{
		{
			name: "targets are named or none",
			req:  Request{},
			check: func(t *testing.T, c DelegationContract) {
				if c.DispatchTargets != nil {
					t.Fatalf("targets = %v", c.DispatchTargets)
				}
			},
		},
		{name: "a target the parent has", req: Request{DispatchTargets: []string{"reviewer"}}, check: func(t *testing.T, c DelegationContract) {
			if !slices.Equal(c.DispatchTargets, []string{"reviewer"}) {
				t.Fatalf("targets = %v", c.DispatchTargets)
			}
		}},
		{name: "a target the parent lacks", req: Request{DispatchTargets: []string{"writer"}}, widen: "dispatch_targets", child: "writer"},
		{name: "any kind under a parent without it", req: Request{DispatchTargets: []string{AnyKind}}, widen: "dispatch_targets", child: AnyKind},
		{name: "any kind under a parent with it", parent: func(p *DelegationContract) { p.DispatchTargets = []string{AnyKind} }, req: Request{DispatchTargets: []string{"writer", AnyKind}}},
		{name: "a no_spawn parent gives no targets", parent: func(p *DelegationContract) { p.Constraints.NoSpawn, p.DispatchTargets = true, nil }, req: Request{DispatchTargets: []string{"reviewer"}}, widen: "dispatch_targets"},
		{name: "no_spawn with targets contradicts itself", req: Request{Constraints: Constraints{NoSpawn: true}, DispatchTargets: []string{"reviewer"}}, field: "dispatch_targets"},
		{name: "bad target name", req: Request{DispatchTargets: []string{"re viewer"}}, field: "dispatch_targets"},
	})
}

func TestCloneIdentityAndSOP(t *testing.T) {
	runCloneCases(t, []cloneCase{
		{
			name: "kind from the request, session from the parent, SOP from the request",
			req:  Request{AgentKind: "analyst", SOP: []string{"Read.", "Write."}},
			check: func(t *testing.T, c DelegationContract) {
				if c.Identity != (Identity{AgentKind: "analyst", Session: "s1"}) || !slices.Equal(c.SOP, []string{"Read.", "Write."}) {
					t.Fatalf("identity %+v, sop %v", c.Identity, c.SOP)
				}
			},
		},
		{name: "bad kind", req: Request{AgentKind: "9lives"}, field: "agent_kind"},
		{name: "a step over two lines", req: Request{SOP: []string{"Read.\nWrite."}}, field: "sop"},
		{name: "an empty step", req: Request{SOP: []string{" "}}, field: "sop"},
	})
}

func TestCloneRefusesAMalformedParent(t *testing.T) {
	p := lead()
	p.Budget.MaxTokens = 0
	_, err := Clone(p, Request{AgentKind: "x"})
	fe := wantField(t, err, "budget.max_tokens")
	if !strings.HasPrefix(err.Error(), "parent contract: ") || fe.Value != "" {
		t.Fatalf("err = %v", err)
	}
}

// DC6: a child is bounded by what its parent has left, not what it began with.
func TestCloneFromRemaining(t *testing.T) {
	p := lead().Remaining(Spent{Tokens: 900, ElapsedMs: 55_000, SessionsToday: 3})
	if p.Budget.MaxTokens != 100 || p.TimeoutMs != 5000 || p.StallThresholdMs != 5000 || p.Budget.DailyLimit != 7 || p.Budget.MaxConcurrent != 4 {
		t.Fatalf("remaining = %+v timeout %d stall %d", p.Budget, p.TimeoutMs, p.StallThresholdMs)
	}
	_, err := Clone(p, Request{AgentKind: "x", Budget: Budget{MaxTokens: 101}})
	wantWiden(t, err, "budget.max_tokens", "101")
	c, err := Clone(p, Request{AgentKind: "x"})
	if err != nil || c.Budget.MaxTokens != 100 || c.TimeoutMs != 5000 {
		t.Fatalf("Clone = %+v, %v", c, err)
	}
	spent := lead().Remaining(Spent{Tokens: 5000})
	if _, err := Clone(spent, Request{AgentKind: "x"}); err == nil {
		t.Fatal("a parent with no tokens left cloned a child")
	}
}

func TestWidenErrorMessage(t *testing.T) {
	_, err := Clone(lead(), Request{AgentKind: "x", Allow: []string{"shell"}})
	want := "capabilities.allow widens the parent: the child has shell, the parent allows [inventory list_dir read_file survey web_fetch write_file]"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
	_, err = Clone(lead(), Request{AgentKind: "x", Budget: Budget{MaxTokens: 5000}})
	if want := "budget.max_tokens widens the parent: the child has 5000, the parent allows 1000"; err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
}

// Clone's output is canonical: sorted lists, nil for empty, so equal
// contracts serialise equally in the journal.
func TestCloneIsCanonical(t *testing.T) {
	c, err := Clone(lead(), Request{
		AgentKind:       "x",
		Inherit:         InheritFull,
		Deny:            []string{"zz", "aa"},
		Constraints:     Constraints{AllowedCommands: []string{"pdftotext", "pandoc"}},
		DispatchTargets: []string{"reviewer", "researcher"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range [][]string{c.Capabilities.Allowed, c.Capabilities.Denied, c.Constraints.AllowedCommands, c.DispatchTargets} {
		if !slices.IsSorted(l) {
			t.Fatalf("not sorted: %v", l)
		}
	}
}

// Clone does not alias the request: changing the request afterwards does
// not change the child.
func TestCloneDoesNotAlias(t *testing.T) {
	req := Request{AgentKind: "x", Inherit: InheritMinimal, SOP: []string{"a"}, Scope: Scope{Read: []string{"inputs"}},
		Composed: []Composite{{Name: "look", Of: []string{"list_dir", "read_file"}}}}
	c, err := Clone(lead(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.SOP[0], req.Scope.Read[0], req.Composed[0].Of[0] = "b", "work", "write_file"
	if c.SOP[0] != "a" || c.Scope.Read[0] != "inputs" || c.Capabilities.Composed[0].Of[0] != "list_dir" {
		t.Fatalf("child changed with the request: %+v", c)
	}
}
