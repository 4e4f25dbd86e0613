package scope

import (
	"errors"
	"slices"
	"testing"
)

// lead is the parent most table tests clone from: a mid-level contract with
// a denial, a composite, commands, all three scope kinds and two targets.
func lead() DelegationContract {
	return DelegationContract{
		Identity: Identity{AgentKind: "lead", Session: "s1"},
		Capabilities: Capabilities{
			Allowed:  []string{"bash", "inventory", "list_dir", "read_file", "survey", "web_fetch", "write_file"},
			Denied:   []string{"bash"},
			Composed: []Composite{{Name: "survey", Of: []string{"list_dir", "read_file"}}},
		},
		Constraints: Constraints{SandboxRequired: true, AllowedCommands: []string{"pandoc", "pdftotext"}},
		Scope: Scope{
			Read:    []string{"inputs"},
			Write:   []string{"work/lead"},
			Execute: []string{"work/lead/tools"},
		},
		Budget:           Budget{MaxTokens: 1000, MaxConcurrent: 4, DailyLimit: 10},
		TimeoutMs:        60_000,
		StallThresholdMs: 10_000,
		SOP:              []string{"Plan the work."},
		DispatchTargets:  []string{"researcher", "reviewer"},
	}
}

// clone copies every slice of d, so a test can change the copy freely.
func clone(d DelegationContract) DelegationContract {
	d.Capabilities.Allowed = slices.Clone(d.Capabilities.Allowed)
	d.Capabilities.Denied = slices.Clone(d.Capabilities.Denied)
	d.Capabilities.Composed = cloneComposites(d.Capabilities.Composed)
	d.Constraints.AllowedCommands = slices.Clone(d.Constraints.AllowedCommands)
	d.Scope = Scope{Read: slices.Clone(d.Scope.Read), Write: slices.Clone(d.Scope.Write), Execute: slices.Clone(d.Scope.Execute)}
	d.SOP = slices.Clone(d.SOP)
	d.DispatchTargets = slices.Clone(d.DispatchTargets)
	return d
}

// wantWiden fails unless err is a *WidenError for field (and, when child
// is not empty, for that child value).
func wantWiden(t *testing.T, err error, field, child string) *WidenError {
	t.Helper()
	var we *WidenError
	if !errors.As(err, &we) {
		t.Fatalf("want a *WidenError for %s, got %T: %v", field, err, err)
	}
	if we.Field != field || (child != "" && we.Child != child) {
		t.Fatalf("want a widening of %s (%s), got %s (%s): %v", field, child, we.Field, we.Child, err)
	}
	return we
}

// wantField fails unless err is a *FieldError for field.
func wantField(t *testing.T, err error, field string) *FieldError {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("want a *FieldError for %s, got %T: %v", field, err, err)
	}
	if fe.Field != field {
		t.Fatalf("want a *FieldError for %s, got %s: %v", field, fe.Field, err)
	}
	return fe
}
