package scope

import (
	"fmt"
	"slices"
	"sort"
)

// DelegationContract is what an agent instance may do, with what resources,
// and by when (DC1, DC2). Every instance carries one; a child's is derived
// from its parent's by Clone and checked by ValidateNarrowing.
type DelegationContract struct {
	Identity     Identity     `json:"identity"`
	Capabilities Capabilities `json:"capabilities"`
	Constraints  Constraints  `json:"constraints"`
	Scope        Scope        `json:"scope"`
	Budget       Budget       `json:"budget"`
	// TimeoutMs is how long the holder may run before it is stopped
	// (DC7). A child's deadline falls within its parent's.
	TimeoutMs int64 `json:"timeout_ms"`
	// StallThresholdMs is how long the holder may go without progress
	// before the host raises a stall alert (DC7); at most TimeoutMs.
	StallThresholdMs int64 `json:"stall_threshold_ms"`
	// SOP is the holder's standard operating procedure, in order. It is
	// guidance for the model, not a capability, so it does not decay.
	SOP []string `json:"sop,omitempty"`
	// DispatchTargets are the agent kinds the holder may start as children;
	// none unless named. AnyKind stands for every kind.
	DispatchTargets []string `json:"dispatch_targets,omitempty"`
}

// Identity says who holds a contract.
type Identity struct {
	// AgentKind is the kind of agent ("researcher", a blueprint's id).
	AgentKind string `json:"agent_kind"`
	// Session is the run session the holder belongs to (F-D10); a child
	// shares its parent's. It may be empty until the host assigns one.
	Session string `json:"session,omitempty"`
}

// Capabilities are the tools a holder may call. The effective set is
// Allowed minus Denied (Tools).
type Capabilities struct {
	Allowed []string `json:"allowed,omitempty"`
	// Denied tools are never effective, and are inherited by every child
	// whatever its inherit mode.
	Denied []string `json:"denied,omitempty"`
	// Composed defines the composite tools among Allowed: each is built
	// from plain tools that are themselves effective, so a composite never
	// carries more power than its parts.
	Composed []Composite `json:"composed,omitempty"`
}

// Composite is a tool compiled from other tools (DC3's composed step). Of
// lists its parts in the order the composite uses them.
type Composite struct {
	Name string   `json:"name"`
	Of   []string `json:"of"`
}

// Constraints are restrictions. Each flag, once on, stays on for every
// descendant.
type Constraints struct {
	// NoSpawn: the holder may not start children.
	NoSpawn bool `json:"no_spawn,omitempty"`
	// NoNetwork: the holder's tools and commands get no network access.
	NoNetwork bool `json:"no_network,omitempty"`
	// ReadOnly: the holder changes no file; its write scope is empty.
	ReadOnly bool `json:"read_only,omitempty"`
	// SandboxRequired: commands run only inside the sandbox.
	SandboxRequired bool `json:"sandbox_required,omitempty"`
	// AllowedCommands are the programs the holder may run, by exact name.
	// Empty means none.
	AllowedCommands []string `json:"allowed_commands,omitempty"`
}

// Scope is where the holder may reach, as folders relative to the run
// folder ("inputs", "work/root/market"). Each path covers the folder and
// everything under it. Empty means nowhere.
type Scope struct {
	Read    []string `json:"read,omitempty"`
	Write   []string `json:"write,omitempty"`
	Execute []string `json:"execute,omitempty"`
}

// Budget holds hard caps (DC6), counted by the host for the holder and
// everything below it; every field of a valid contract is at least 1,
// because "unlimited" is not a value a contract can hold.
type Budget struct {
	// MaxTokens is the most model tokens (input plus output) the holder
	// and its descendants may use.
	MaxTokens int64 `json:"max_tokens"`
	// MaxConcurrent is the most model calls or children the holder's
	// subtree may run at once; more wait in a queue.
	MaxConcurrent int `json:"max_concurrent"`
	// DailyLimit is the most sessions (a first session, each relay
	// session, each retry) the holder and its subtree may start in a day.
	DailyLimit int `json:"daily_limit"`
}

// AnyKind in DispatchTargets lets the holder dispatch to every agent kind.
// Only a contract whose parent has it may have it; the run's root does.
const AnyKind = "*"

// Tools returns the effective tool set, Allowed minus Denied, sorted and
// without duplicates.
func (d DelegationContract) Tools() []string {
	out := make([]string, 0, len(d.Capabilities.Allowed))
	for _, t := range d.Capabilities.Allowed {
		if !slices.Contains(d.Capabilities.Denied, t) {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// composite returns the definition of the composite tool t, if t is one.
func (d DelegationContract) composite(t string) (Composite, bool) {
	for _, c := range d.Capabilities.Composed {
		if c.Name == t {
			return c, true
		}
	}
	return Composite{}, false
}

// Validate reports the first thing that makes d malformed, as a
// *FieldError: bad names or paths, duplicates, a composite whose parts are
// not effective plain tools, read_only with write paths, no_spawn with
// dispatch targets, a budget or timeout below 1, a stall threshold past the
// timeout, an SOP step that is empty or spans lines.
func (d DelegationContract) Validate() error {
	if e := d.validate(); e != nil {
		return e
	}
	return nil
}

func (d DelegationContract) validate() *FieldError {
	if msg := checkName(d.Identity.AgentKind); msg != "" {
		return fieldErr("identity.agent_kind", d.Identity.AgentKind, "%s", msg)
	}
	if msg := checkLine(d.Identity.Session); d.Identity.Session != "" && msg != "" {
		return fieldErr("identity.session", d.Identity.Session, "the session %s", msg)
	}
	if e := checkList("capabilities.allowed", d.Capabilities.Allowed, checkName); e != nil {
		return e
	}
	if e := checkList("capabilities.denied", d.Capabilities.Denied, checkName); e != nil {
		return e
	}
	if e := d.validateComposed(); e != nil {
		return e
	}
	if e := checkList("constraints.allowed_commands", d.Constraints.AllowedCommands, checkCommand); e != nil {
		return e
	}
	if e := checkScope(d.Scope); e != nil {
		return e
	}
	if d.Constraints.ReadOnly && len(d.Scope.Write) > 0 {
		return fieldErr("scope.write", d.Scope.Write[0], "a read-only contract writes nowhere; drop the write paths or read_only")
	}
	if e := checkBudget(d.Budget, 1); e != nil {
		return e
	}
	if d.TimeoutMs < 1 {
		return fieldErr("timeout_ms", "", "must be at least 1 ms, not %d: a contract always has a deadline", d.TimeoutMs)
	}
	if d.StallThresholdMs < 1 {
		return fieldErr("stall_threshold_ms", "", "must be at least 1 ms, not %d", d.StallThresholdMs)
	}
	if d.StallThresholdMs > d.TimeoutMs {
		return fieldErr("stall_threshold_ms", "", "%d is past the timeout (%d ms): the holder would be stopped before a stall could be noticed", d.StallThresholdMs, d.TimeoutMs)
	}
	if e := checkSOP(d.SOP); e != nil {
		return e
	}
	if e := checkTargets(d.DispatchTargets); e != nil {
		return e
	}
	if d.Constraints.NoSpawn && len(d.DispatchTargets) > 0 {
		return fieldErr("dispatch_targets", d.DispatchTargets[0], "a no_spawn contract dispatches to nobody; drop the targets or no_spawn")
	}
	return nil
}

// validateComposed checks that each composite is an effective tool built
// from effective plain tools. Parts must be plain: a composite of
// composites could define a cycle, and listing the plain parts says the same.
// A composite may not take a harness tool's name: a host that looked a call
// up in its tool registry before the contract would run the real tool.
func (d DelegationContract) validateComposed() *FieldError {
	const field = "capabilities.composed"
	tools := d.Tools()
	var names []string
	for _, c := range d.Capabilities.Composed {
		if msg := checkName(c.Name); msg != "" {
			return fieldErr(field, c.Name, "%s", msg)
		}
		if slices.Contains(names, c.Name) {
			return fieldErr(field, c.Name, "composite %s is defined twice", c.Name)
		}
		names = append(names, c.Name)
		if slices.Contains(DefaultTools(), c.Name) {
			return fieldErr(field, c.Name, "composite %s takes the name of a harness tool; choose another name", c.Name)
		}
		if !slices.Contains(tools, c.Name) {
			return fieldErr(field, c.Name, "composite %s is not among the contract's tools (allowed minus denied)", c.Name)
		}
		if len(c.Of) == 0 {
			return fieldErr(field, c.Name, "composite %s is built from nothing", c.Name)
		}
		for i, p := range c.Of {
			if slices.Contains(c.Of[:i], p) {
				return fieldErr(field, c.Name, "composite %s lists %s twice", c.Name, p)
			}
			if !slices.Contains(tools, p) {
				return fieldErr(field, c.Name, "composite %s is built from %s, which is not among the contract's tools", c.Name, p)
			}
			if _, ok := d.composite(p); ok {
				return fieldErr(field, c.Name, "composite %s is built from the composite %s; list its plain parts instead", c.Name, p)
			}
		}
	}
	return nil
}

// checkList checks each item with check and refuses duplicates: a list
// that names a thing twice is usually a typo of something else.
func checkList(field string, list []string, check func(string) string) *FieldError {
	for i, s := range list {
		if msg := check(s); msg != "" {
			return fieldErr(field, s, "%q: %s", s, msg)
		}
		if slices.Contains(list[:i], s) {
			return fieldErr(field, s, "%q is listed twice", s)
		}
	}
	return nil
}

func checkScope(s Scope) *FieldError {
	if e := checkList("scope.read", s.Read, checkPath); e != nil {
		return e
	}
	if e := checkList("scope.write", s.Write, checkPath); e != nil {
		return e
	}
	return checkList("scope.execute", s.Execute, checkPath)
}

func checkTargets(list []string) *FieldError {
	return checkList("dispatch_targets", list, func(s string) string {
		if s == AnyKind {
			return ""
		}
		return checkName(s)
	})
}

func checkSOP(steps []string) *FieldError {
	for i, s := range steps {
		if msg := checkLine(s); msg != "" {
			return fieldErr("sop", s, "step %d %s", i+1, msg)
		}
	}
	return nil
}

// checkBudget refuses budget fields below least: 1 in a contract, 0 in a
// request (where 0 means "the parent's").
func checkBudget(b Budget, least int64) *FieldError {
	switch {
	case b.MaxTokens < least:
		return fieldErr("budget.max_tokens", "", "must be at least %d, not %d", least, b.MaxTokens)
	case int64(b.MaxConcurrent) < least:
		return fieldErr("budget.max_concurrent", "", "must be at least %d, not %d", least, b.MaxConcurrent)
	case int64(b.DailyLimit) < least:
		return fieldErr("budget.daily_limit", "", "must be at least %d, not %d", least, b.DailyLimit)
	}
	return nil
}

// DefaultTools returns the tools the run's root holds: every capability
// tool the harness knows. Protocol tools (declare_done, submit_plan, …)
// belong to a role, not to a contract, and are not listed.
func DefaultTools() []string {
	return []string{"inventory", "list_dir", "read_file", "web_fetch", "write_file"}
}

// Root defaults, for a run of up to two days (the horizon the harness is
// built for, DA) with the watchdog's 30-minute no-progress threshold.
const (
	RootMaxTokens     = 20_000_000
	RootMaxConcurrent = 8
	RootDailyLimit    = 500
	RootTimeoutMs     = 48 * 60 * 60 * 1000
	RootStallMs       = 30 * 60 * 1000
)

// Root returns the contract a run's root instance gets: every default
// tool, reading "inputs" and "work", writing "work", a generous budget, a
// two-day deadline, and no spawn limits (it may dispatch to any kind). Every
// other contract in a run descends from it.
func Root() DelegationContract {
	return DelegationContract{
		Identity:         Identity{AgentKind: "root"},
		Capabilities:     Capabilities{Allowed: DefaultTools()},
		Scope:            Scope{Read: []string{"inputs", "work"}, Write: []string{"work"}},
		Budget:           Budget{MaxTokens: RootMaxTokens, MaxConcurrent: RootMaxConcurrent, DailyLimit: RootDailyLimit},
		TimeoutMs:        RootTimeoutMs,
		StallThresholdMs: RootStallMs,
		DispatchTargets:  []string{AnyKind},
	}
}

// Spent is what a contract's holder has used so far, as the host counts it.
type Spent struct {
	Tokens        int64 // model tokens used by the holder and its subtree
	ElapsedMs     int64 // time since the holder started
	SessionsToday int   // sessions started by the holder and its subtree today
}

// Remaining returns d with its budgets and deadline reduced by what has been
// spent, which is the parent to clone a child from: a child's caps are
// bounded by what its parent has left, not by what it started with. A
// spent-out field becomes 0, so the result no longer validates and Clone
// refuses to derive anything from it. Concurrency is not spent: a full
// pool queues, it does not refuse.
func (d DelegationContract) Remaining(s Spent) DelegationContract {
	d.Budget.MaxTokens = max(d.Budget.MaxTokens-max(s.Tokens, 0), 0)
	d.Budget.DailyLimit = max(d.Budget.DailyLimit-max(s.SessionsToday, 0), 0)
	d.TimeoutMs = max(d.TimeoutMs-max(s.ElapsedMs, 0), 0)
	d.StallThresholdMs = min(d.StallThresholdMs, d.TimeoutMs)
	return d
}

// CheckDispatch reports whether parent may start a child of the given
// kind: it must not be no_spawn and must name the kind (or AnyKind) in its
// dispatch targets. Clone does not check this, because a negotiated
// revision of one's own contract (DC4) narrows without dispatching.
func CheckDispatch(parent DelegationContract, kind string) error {
	if parent.Constraints.NoSpawn {
		return widen("dispatch_targets", kind, "none (the parent is no_spawn)")
	}
	if slices.Contains(parent.DispatchTargets, AnyKind) || slices.Contains(parent.DispatchTargets, kind) {
		return nil
	}
	return widen("dispatch_targets", kind, bound(parent.DispatchTargets))
}

// ValidateDelegation is the Guard's check when parent starts a child with
// contract child: the parent may dispatch to the child's kind, and the
// child's contract narrows the parent's in every dimension.
func ValidateDelegation(parent, child DelegationContract) error {
	if err := CheckDispatch(parent, child.Identity.AgentKind); err != nil {
		return err
	}
	return ValidateNarrowing(parent, child)
}

func (c Composite) String() string { return fmt.Sprintf("%s = %v", c.Name, c.Of) }
