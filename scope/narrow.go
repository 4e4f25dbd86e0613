package scope

import (
	"fmt"
	"slices"
	"strconv"
)

// ValidateNarrowing reports whether child is no wider than parent in every
// dimension (DC3): the check the Guard runs at every delegation and every
// replay, whoever built the child. It returns a *WidenError for the first
// widening found, or an error wrapping a *FieldError when either contract
// is malformed.
//
// Dimensions: tools (each effective tool the parent's, with the same
// definition if composite, or a new composite of the parent's plain tools
// under a name the parent does not know), denials (every parent denial
// kept), each constraint flag, allowed commands, each scope path (with the
// same rules as Clone), each budget field, timeout, stall threshold and
// dispatch targets. Identity and SOP are not capabilities and are not
// compared; whether the parent may dispatch the child's kind at all is
// CheckDispatch (ValidateDelegation does both).
func ValidateNarrowing(parent, child DelegationContract) error {
	if e := parent.validate(); e != nil {
		return fmt.Errorf("parent contract: %w", e)
	}
	if e := child.validate(); e != nil {
		return fmt.Errorf("child contract: %w", e)
	}
	if err := narrowTools(parent, child); err != nil {
		return err
	}
	pc, cc := parent.Constraints, child.Constraints
	flags := []struct {
		field  string
		parent bool
		child  bool
	}{
		{"constraints.no_spawn", pc.NoSpawn, cc.NoSpawn},
		{"constraints.no_network", pc.NoNetwork, cc.NoNetwork},
		{"constraints.read_only", pc.ReadOnly, cc.ReadOnly},
		{"constraints.sandbox_required", pc.SandboxRequired, cc.SandboxRequired},
	}
	for _, f := range flags {
		if f.parent && !f.child {
			return widen(f.field, "false", "only true")
		}
	}
	for _, cmd := range cc.AllowedCommands {
		if !slices.Contains(pc.AllowedCommands, cmd) {
			return widen("constraints.allowed_commands", cmd, bound(pc.AllowedCommands))
		}
	}
	ps, cs := parent.Scope, child.Scope
	for _, x := range cs.Write {
		if !insideAny(x, ps.Write) {
			return widen("scope.write", x, bound(ps.Write))
		}
	}
	for _, x := range cs.Read {
		if !insideAny(x, ps.Read, ps.Write) {
			return widen("scope.read", x, bound(union(ps.Read, ps.Write)))
		}
	}
	for _, x := range cs.Execute {
		if !insideAny(x, ps.Execute) {
			return widen("scope.execute", x, bound(ps.Execute))
		}
	}
	caps := []struct {
		field         string
		parent, child int64
	}{
		{"budget.max_tokens", parent.Budget.MaxTokens, child.Budget.MaxTokens},
		{"budget.max_concurrent", int64(parent.Budget.MaxConcurrent), int64(child.Budget.MaxConcurrent)},
		{"budget.daily_limit", int64(parent.Budget.DailyLimit), int64(child.Budget.DailyLimit)},
		{"timeout_ms", parent.TimeoutMs, child.TimeoutMs},
		{"stall_threshold_ms", parent.StallThresholdMs, child.StallThresholdMs},
	}
	for _, c := range caps {
		if c.child > c.parent {
			return widen(c.field, strconv.FormatInt(c.child, 10), strconv.FormatInt(c.parent, 10))
		}
	}
	for _, k := range child.DispatchTargets {
		if !slices.Contains(parent.DispatchTargets, k) && !slices.Contains(parent.DispatchTargets, AnyKind) {
			return widen("dispatch_targets", k, bound(parent.DispatchTargets))
		}
	}
	return nil
}

func narrowTools(parent, child DelegationContract) error {
	const field = "capabilities.allowed"
	have := parent.Tools()
	for _, d := range parent.Capabilities.Denied {
		if !slices.Contains(child.Capabilities.Denied, d) {
			return widen("capabilities.denied", d+" not denied", "only "+d+" denied")
		}
	}
	for _, t := range child.Tools() {
		cdef, childComp := child.composite(t)
		pdef, parentComp := parent.composite(t)
		switch {
		case slices.Contains(have, t) && childComp && !parentComp:
			return widen(field, "composite "+cdef.String(), "only the plain tool "+t)
		case slices.Contains(have, t) && !childComp && parentComp:
			return widen(field, "the plain tool "+t, "only composite "+pdef.String())
		case slices.Contains(have, t) && childComp && !slices.Equal(cdef.Of, pdef.Of):
			return widen(field, "composite "+cdef.String(), "only composite "+pdef.String())
		case slices.Contains(have, t):
		case !childComp:
			return widen(field, t, bound(have))
		case slices.Contains(parent.Capabilities.Allowed, t) || slices.Contains(parent.Capabilities.Denied, t):
			// A new composite under a name the parent denies (or holds
			// but has denied) would bring that name back.
			return widen(field, "composite "+cdef.String(), "no tool named "+t)
		default:
			// A new composite: the child's Validate already holds its
			// parts to plain tools of the child, and each of those was
			// checked against the parent in this loop.
		}
	}
	return nil
}
