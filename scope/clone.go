package scope

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// InheritMode is where a child's tool set starts (DC3's inherit step).
type InheritMode string

const (
	// InheritNone starts from nothing: the child has exactly what it
	// allows. The empty mode means the same, so a request that says
	// nothing inherits nothing.
	InheritNone InheritMode = "none"
	// InheritMinimal starts from the read-only tools of MinimalTools that
	// the parent has.
	InheritMinimal InheritMode = "minimal"
	// InheritFull starts from the parent's whole effective set.
	InheritFull InheritMode = "full"
)

// MinimalTools returns the base of InheritMinimal: the tools that let an
// agent look at what it was given (list a folder, read a file) and change
// nothing. Kept this small on purpose; anything else is asked for by name.
func MinimalTools() []string { return []string{"list_dir", "read_file"} }

func (m InheritMode) valid() bool {
	return m == "" || m == InheritNone || m == InheritMinimal || m == InheritFull
}

// Request is what a parent (or a blueprint) asks for a child. Every
// dimension can only narrow the parent's; see Clone for the rules.
type Request struct {
	AgentKind string      `json:"agent_kind"`
	Inherit   InheritMode `json:"inherit,omitempty"`
	// Allow names tools taken from the parent: under InheritFull it is a
	// whitelist of the parent's set; under none and minimal it adds to the
	// base. Each must be a tool the parent has.
	Allow []string `json:"allow,omitempty"`
	// Deny removes tools, and every composite built from them; it may
	// name tools the parent lacks (a defensive denial is harmless).
	Deny []string `json:"deny,omitempty"`
	// Composed adds composite tools built from tools in the set after deny.
	Composed []Composite `json:"composed,omitempty"`
	// Constraints: flags switch restrictions on (never off); the allowed
	// commands are named or none.
	Constraints Constraints `json:"constraints"`
	// Scope paths are named or none.
	Scope Scope `json:"scope"`
	// Budget, TimeoutMs, StallThresholdMs: 0 means the parent's value.
	Budget           Budget   `json:"budget"`
	TimeoutMs        int64    `json:"timeout_ms,omitempty"`
	StallThresholdMs int64    `json:"stall_threshold_ms,omitempty"`
	SOP              []string `json:"sop,omitempty"`
	// DispatchTargets are named or none, each one the parent has.
	DispatchTargets []string `json:"dispatch_targets,omitempty"`
}

// Clone derives a child's contract from its parent's and a request, or
// reports why it cannot (DC3). The error is a *FieldError when the request
// is malformed or contradicts itself, a *WidenError when it asks for more
// than the parent has, naming the field, the value and the parent's bound.
// Nothing is dropped silently except what the rules say: deny removes the
// composites built on what it denies.
//
// The rules, per dimension:
//
//   - tools: inherit → allow → deny → composed, as described on Request;
//     a composite's name may not be any name the parent knows (allowed or
//     denied) nor a tool already in the set.
//   - denied: the parent's denials plus the request's.
//   - flags: parent OR request. allowed_commands: each in the parent's.
//   - scope: write inside a parent write path; read inside a parent read or
//     write path; execute inside a parent execute path.
//   - budget, timeout_ms, stall_threshold_ms: at most the parent's; 0 takes
//     the parent's (the stall threshold then also shrinks to the child's
//     timeout).
//   - dispatch_targets: each in the parent's (or the parent has AnyKind).
//   - identity: the requested kind, the parent's session. sop: the request's.
//
// Clone bounds the child by parent as given; pass parent.Remaining(spent)
// to bound it by what the parent has left. Whether the parent may dispatch
// to the kind at all is CheckDispatch's question.
func Clone(parent DelegationContract, req Request) (DelegationContract, error) {
	if e := parent.validate(); e != nil {
		return DelegationContract{}, fmt.Errorf("parent contract: %w", e)
	}
	if e := validateRequest(req); e != nil {
		return DelegationContract{}, e
	}
	var child DelegationContract
	child.Identity = Identity{AgentKind: req.AgentKind, Session: parent.Identity.Session}
	var err error
	if child.Capabilities, err = cloneTools(parent, req); err != nil {
		return DelegationContract{}, err
	}
	if child.Constraints, err = cloneConstraints(parent.Constraints, req.Constraints); err != nil {
		return DelegationContract{}, err
	}
	if child.Scope, err = cloneScope(parent.Scope, req.Scope); err != nil {
		return DelegationContract{}, err
	}
	if child.Constraints.ReadOnly && len(child.Scope.Write) > 0 {
		return DelegationContract{}, fieldErr("scope.write", child.Scope.Write[0], "the child is read-only (asked for or inherited) and so writes nowhere; drop the write paths")
	}
	if child.Budget, err = cloneBudget(parent.Budget, req.Budget); err != nil {
		return DelegationContract{}, err
	}
	if child.TimeoutMs, err = capped("timeout_ms", req.TimeoutMs, parent.TimeoutMs); err != nil {
		return DelegationContract{}, err
	}
	if req.StallThresholdMs == 0 {
		// Taking the parent's threshold must not put the stall alert past
		// the child's own, shorter, deadline.
		child.StallThresholdMs = min(parent.StallThresholdMs, child.TimeoutMs)
	} else if child.StallThresholdMs, err = capped("stall_threshold_ms", req.StallThresholdMs, parent.StallThresholdMs); err != nil {
		return DelegationContract{}, err
	}
	if child.StallThresholdMs > child.TimeoutMs {
		return DelegationContract{}, fieldErr("stall_threshold_ms", "", "%d is past the child's timeout (%d ms): it would be stopped before a stall could be noticed", child.StallThresholdMs, child.TimeoutMs)
	}
	if child.DispatchTargets, err = cloneTargets(parent, req, child.Constraints.NoSpawn); err != nil {
		return DelegationContract{}, err
	}
	child.SOP = slices.Clone(req.SOP)
	if e := child.validate(); e != nil {
		// Every rule above keeps the child valid; reaching this is a bug
		// in Clone, reported rather than handed to the caller.
		return DelegationContract{}, fmt.Errorf("scope: internal error: Clone built an invalid contract: %w", e)
	}
	return child, nil
}

// validateRequest checks what can be checked without a parent; ParseBlueprint
// runs it too, so a blueprint's own mistakes show when it is read.
func validateRequest(r Request) *FieldError {
	if msg := checkName(r.AgentKind); msg != "" {
		return fieldErr("agent_kind", r.AgentKind, "%s", msg)
	}
	if !r.Inherit.valid() {
		return fieldErr("capabilities.inherit", string(r.Inherit), "unknown inherit mode %q; use none, minimal or full", r.Inherit)
	}
	if e := checkList("capabilities.allow", r.Allow, checkName); e != nil {
		return e
	}
	if e := checkList("capabilities.deny", r.Deny, checkName); e != nil {
		return e
	}
	var names []string
	for _, c := range r.Composed {
		const field = "capabilities.composed"
		if msg := checkName(c.Name); msg != "" {
			return fieldErr(field, c.Name, "%q: %s", c.Name, msg)
		}
		if slices.Contains(names, c.Name) {
			return fieldErr(field, c.Name, "composite %s is defined twice", c.Name)
		}
		names = append(names, c.Name)
		if len(c.Of) == 0 {
			return fieldErr(field, c.Name, "composite %s is built from nothing; list its parts in of", c.Name)
		}
		if e := checkList(field, c.Of, checkName); e != nil {
			e.Value, e.Msg = c.Name, "composite "+c.Name+": "+e.Msg
			return e
		}
		if slices.Contains(r.Deny, c.Name) {
			return fieldErr(field, c.Name, "composite %s is also denied", c.Name)
		}
		if slices.Contains(DefaultTools(), c.Name) {
			return fieldErr(field, c.Name, "composite %s takes the name of a harness tool; choose another name", c.Name)
		}
	}
	if e := checkList("constraints.allowed_commands", r.Constraints.AllowedCommands, checkCommand); e != nil {
		return e
	}
	if e := checkScope(r.Scope); e != nil {
		return e
	}
	if r.Constraints.ReadOnly && len(r.Scope.Write) > 0 {
		return fieldErr("scope.write", r.Scope.Write[0], "read_only asks for no writes, yet write paths are given; drop one")
	}
	if e := checkBudget(r.Budget, 0); e != nil {
		return e
	}
	if r.TimeoutMs < 0 {
		return fieldErr("timeout_ms", "", "must be 0 (the parent's) or more, not %d", r.TimeoutMs)
	}
	if r.StallThresholdMs < 0 {
		return fieldErr("stall_threshold_ms", "", "must be 0 (the parent's) or more, not %d", r.StallThresholdMs)
	}
	if r.TimeoutMs > 0 && r.StallThresholdMs > r.TimeoutMs {
		return fieldErr("stall_threshold_ms", "", "%d is past timeout_ms (%d): the child would be stopped before a stall could be noticed", r.StallThresholdMs, r.TimeoutMs)
	}
	if e := checkSOP(r.SOP); e != nil {
		return e
	}
	if e := checkTargets(r.DispatchTargets); e != nil {
		return e
	}
	if r.Constraints.NoSpawn && len(r.DispatchTargets) > 0 {
		return fieldErr("dispatch_targets", r.DispatchTargets[0], "no_spawn asks for no children, yet dispatch targets are given; drop one")
	}
	return nil
}

// cloneTools runs DC3's four steps.
func cloneTools(parent DelegationContract, req Request) (Capabilities, error) {
	have := parent.Tools()
	// inherit
	var set []string
	switch req.Inherit {
	case InheritFull:
		set = slices.Clone(have)
	case InheritMinimal:
		for _, t := range MinimalTools() {
			// Only the plain tools: a parent composite that happens to
			// carry one of these names is not a read-only base.
			if _, isComp := parent.composite(t); slices.Contains(have, t) && !isComp {
				set = append(set, t)
			}
		}
	}
	// allow: every name must be the parent's; asking for a tool the parent
	// lacks is reported, because a child silently missing a tool it was
	// designed around fails later and obscurely.
	for _, t := range req.Allow {
		if !slices.Contains(have, t) {
			return Capabilities{}, widen("capabilities.allow", t, bound(have))
		}
	}
	if req.Inherit == InheritFull && len(req.Allow) > 0 {
		set = slices.Clone(req.Allow) // whitelist within the parent's set
	} else {
		for _, t := range req.Allow {
			if !slices.Contains(set, t) {
				set = append(set, t)
			}
		}
	}
	// A parent's composite comes with its definition; picking it without
	// its parts would make a composite stronger than the child's own set.
	var composed []Composite
	for _, t := range set {
		if c, ok := parent.composite(t); ok {
			for _, p := range c.Of {
				if !slices.Contains(set, p) && !slices.Contains(req.Deny, p) {
					return Capabilities{}, fieldErr("capabilities.allow", t, "composite %s is built from %s, which the child does not get; allow %s too, or leave %s out", t, p, p, t)
				}
			}
			composed = append(composed, Composite{Name: c.Name, Of: slices.Clone(c.Of)})
		}
	}
	// deny: remove the named tools, then every composite built on one of
	// them, since keeping it would keep the denied power under a new name.
	set = slices.DeleteFunc(set, func(t string) bool { return slices.Contains(req.Deny, t) })
	composed = slices.DeleteFunc(composed, func(c Composite) bool {
		for _, p := range c.Of {
			if !slices.Contains(set, p) {
				return true
			}
		}
		return !slices.Contains(set, c.Name)
	})
	set = slices.DeleteFunc(set, func(t string) bool {
		_, isComp := parent.composite(t)
		return isComp && !slices.ContainsFunc(composed, func(c Composite) bool { return c.Name == t })
	})
	// composed: each part must be a plain tool in the set as it stands
	// after deny; a composite may not take a name the parent knows, or a
	// denied tool could come back under its own name.
	plain := slices.DeleteFunc(slices.Clone(set), func(t string) bool {
		_, isComp := parent.composite(t)
		return isComp
	})
	for _, c := range req.Composed {
		const field = "capabilities.composed"
		switch {
		case slices.Contains(set, c.Name):
			return Capabilities{}, fieldErr(field, c.Name, "composite %s would replace the tool %s the child already has; choose another name", c.Name, c.Name)
		case slices.Contains(parent.Capabilities.Allowed, c.Name) || slices.Contains(parent.Capabilities.Denied, c.Name):
			return Capabilities{}, fieldErr(field, c.Name, "composite %s takes the name of a tool the parent has or denies; choose another name", c.Name)
		}
		for _, p := range c.Of {
			if !slices.Contains(plain, p) {
				if slices.Contains(set, p) {
					return Capabilities{}, fieldErr(field, c.Name, "composite %s is built from the composite %s; list its plain parts instead", c.Name, p)
				}
				return Capabilities{}, fieldErr(field, c.Name, "composite %s is built from %s, which the child does not have after inherit, allow and deny", c.Name, p)
			}
		}
		composed = append(composed, Composite{Name: c.Name, Of: slices.Clone(c.Of)})
	}
	for _, c := range req.Composed {
		set = append(set, c.Name)
	}
	sort.Strings(set)
	sort.Slice(composed, func(i, j int) bool { return composed[i].Name < composed[j].Name })
	return Capabilities{
		Allowed:  nilIfEmpty(set),
		Denied:   union(parent.Capabilities.Denied, req.Deny),
		Composed: composed,
	}, nil
}

func cloneConstraints(p, r Constraints) (Constraints, error) {
	c := Constraints{
		NoSpawn:         p.NoSpawn || r.NoSpawn,
		NoNetwork:       p.NoNetwork || r.NoNetwork,
		ReadOnly:        p.ReadOnly || r.ReadOnly,
		SandboxRequired: p.SandboxRequired || r.SandboxRequired,
	}
	for _, cmd := range r.AllowedCommands {
		if !slices.Contains(p.AllowedCommands, cmd) {
			return Constraints{}, widen("constraints.allowed_commands", cmd, bound(p.AllowedCommands))
		}
	}
	c.AllowedCommands = sorted(r.AllowedCommands)
	return c, nil
}

func cloneScope(p, r Scope) (Scope, error) {
	for _, x := range r.Write {
		if !insideAny(x, p.Write) {
			return Scope{}, widen("scope.write", x, bound(p.Write))
		}
	}
	for _, x := range r.Read {
		if !insideAny(x, p.Read, p.Write) {
			return Scope{}, widen("scope.read", x, bound(union(p.Read, p.Write)))
		}
	}
	for _, x := range r.Execute {
		if !insideAny(x, p.Execute) {
			return Scope{}, widen("scope.execute", x, bound(p.Execute))
		}
	}
	return Scope{Read: sorted(r.Read), Write: sorted(r.Write), Execute: sorted(r.Execute)}, nil
}

func cloneBudget(p, r Budget) (Budget, error) {
	var b Budget
	var err error
	if b.MaxTokens, err = capped("budget.max_tokens", r.MaxTokens, p.MaxTokens); err != nil {
		return Budget{}, err
	}
	mc, err := capped("budget.max_concurrent", int64(r.MaxConcurrent), int64(p.MaxConcurrent))
	if err != nil {
		return Budget{}, err
	}
	dl, err := capped("budget.daily_limit", int64(r.DailyLimit), int64(p.DailyLimit))
	if err != nil {
		return Budget{}, err
	}
	b.MaxConcurrent, b.DailyLimit = int(mc), int(dl)
	return b, nil
}

// capped applies "0 takes the parent's value, anything else is at most the
// parent's". The parent's value is at least 1 (it validated), so the
// child's is too: there is no way to reach "unlimited".
func capped(field string, req, parent int64) (int64, error) {
	if req == 0 {
		return parent, nil
	}
	if req > parent {
		return 0, widen(field, strconv.FormatInt(req, 10), strconv.FormatInt(parent, 10))
	}
	return req, nil
}

func cloneTargets(parent DelegationContract, req Request, noSpawn bool) ([]string, error) {
	for _, k := range req.DispatchTargets {
		if parent.Constraints.NoSpawn {
			return nil, widen("dispatch_targets", k, "none (the parent is no_spawn)")
		}
		if !slices.Contains(parent.DispatchTargets, k) && !slices.Contains(parent.DispatchTargets, AnyKind) {
			return nil, widen("dispatch_targets", k, bound(parent.DispatchTargets))
		}
	}
	if noSpawn && len(req.DispatchTargets) > 0 {
		return nil, fieldErr("dispatch_targets", req.DispatchTargets[0], "the child is no_spawn and so dispatches to nobody; drop the targets")
	}
	return sorted(req.DispatchTargets), nil
}

// sorted returns a sorted copy without duplicates, nil when empty, so that
// equal contracts serialise equally.
func sorted(list []string) []string {
	out := slices.Clone(list)
	sort.Strings(out)
	return nilIfEmpty(slices.Compact(out))
}

func union(a, b []string) []string { return sorted(append(slices.Clone(a), b...)) }

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
