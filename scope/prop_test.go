package scope

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Property tests for DC3 (monotonic decay). The pools are small so that
// random parents and requests overlap often: most requests name things the
// parent has, many do not, and paths share prefixes ("a" and "ab") so that
// a string-prefix comparison would be caught.
var (
	toolPool = []string{"list_dir", "read_file", "write_file", "web_fetch", "inventory", "t1", "t2", "bash"}
	compPool = []string{"c1", "c2", "c3"} // parents' composites
	newComps = []string{"n1", "n2", "c1"} // requests' composites; c1 may collide
	kindPool = []string{"k1", "k2", "k3"} // agent kinds
	cmdPool  = []string{"ls", "cat", "pandoc", "python3"}
	segPool  = []string{"a", "ab", "b"}
	stepPool = []string{"Read the brief.", "Write the notes.", "Check the sums."}
)

// pick draws a subset of from, in random order.
func pick(t *rapid.T, from []string, label string) []string {
	var out []string
	for _, x := range from {
		if rapid.Bool().Draw(t, label+":"+x) {
			out = append(out, x)
		}
	}
	return out
}

func genPath(t *rapid.T, label string) string {
	n := rapid.IntRange(1, 3).Draw(t, label+":depth")
	segs := make([]string, n)
	for i := range segs {
		segs[i] = rapid.SampledFrom(segPool).Draw(t, label+":seg")
	}
	return strings.Join(segs, "/")
}

func genPaths(t *rapid.T, label string) []string {
	var out []string
	for range rapid.IntRange(0, 3).Draw(t, label+":n") {
		p := genPath(t, label)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// genContract draws a valid contract, valid by construction.
func genContract(t *rapid.T) DelegationContract {
	var d DelegationContract
	d.Identity = Identity{AgentKind: rapid.SampledFrom(kindPool).Draw(t, "kind"), Session: "s"}
	d.Capabilities.Allowed = pick(t, toolPool, "allowed")
	d.Capabilities.Denied = pick(t, toolPool, "denied")
	plain := d.Tools()
	for _, name := range pick(t, compPool, "composites") {
		parts := pick(t, plain, "parts:"+name)
		if len(parts) == 0 {
			continue
		}
		d.Capabilities.Allowed = append(d.Capabilities.Allowed, name)
		d.Capabilities.Composed = append(d.Capabilities.Composed, Composite{Name: name, Of: parts})
	}
	d.Constraints = Constraints{
		NoSpawn:         rapid.Bool().Draw(t, "no_spawn"),
		NoNetwork:       rapid.Bool().Draw(t, "no_network"),
		ReadOnly:        rapid.Bool().Draw(t, "read_only"),
		SandboxRequired: rapid.Bool().Draw(t, "sandbox"),
		AllowedCommands: pick(t, cmdPool, "commands"),
	}
	d.Scope.Read = genPaths(t, "read")
	if !d.Constraints.ReadOnly {
		d.Scope.Write = genPaths(t, "write")
	}
	d.Scope.Execute = genPaths(t, "execute")
	d.Budget = Budget{
		MaxTokens:     rapid.Int64Range(1, 1_000_000).Draw(t, "max_tokens"),
		MaxConcurrent: rapid.IntRange(1, 16).Draw(t, "max_concurrent"),
		DailyLimit:    rapid.IntRange(1, 100).Draw(t, "daily_limit"),
	}
	d.TimeoutMs = rapid.Int64Range(1, 10_000_000).Draw(t, "timeout")
	d.StallThresholdMs = rapid.Int64Range(1, d.TimeoutMs).Draw(t, "stall")
	d.SOP = pick(t, stepPool, "sop")
	if !d.Constraints.NoSpawn {
		d.DispatchTargets = pick(t, append(slices.Clone(kindPool), AnyKind), "targets")
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("generator made an invalid contract: %v\n%+v", err, d)
	}
	return d
}

// genPathNear draws a path related to roots: one of them, one inside one,
// one beside one (sharing a string prefix), or a random one.
func genPathNear(t *rapid.T, roots []string, label string) string {
	if len(roots) == 0 || rapid.IntRange(0, 4).Draw(t, label+":how") == 0 {
		return genPath(t, label)
	}
	r := rapid.SampledFrom(roots).Draw(t, label+":root")
	switch rapid.IntRange(0, 3).Draw(t, label+":rel") {
	case 0:
		return r
	case 1:
		return r + "/" + rapid.SampledFrom(segPool).Draw(t, label+":seg")
	case 2:
		return r + "b" // beside: "a" → "ab"
	}
	return genPath(t, label)
}

func genPathsNear(t *rapid.T, roots []string, label string) []string {
	var out []string
	for range rapid.IntRange(0, 2).Draw(t, label+":n") {
		p := genPathNear(t, roots, label)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// genRequest draws any request against parent: an honest one with up to
// three dimensions replaced by wild values (tools the parent lacks,
// colliding composites, switched flags, paths beside or outside, numbers
// past the parent's or negative, foreign targets). Starting from an honest
// request keeps a good share of the draws succeeding, so the property
// checks children and not only refusals.
func genRequest(t *rapid.T, p DelegationContract) Request {
	r := genHonestRequest(t, p)
	upTo := func(limit int64, label string) int64 {
		if rapid.Bool().Draw(t, label+":zero") {
			return 0
		}
		return rapid.Int64Range(-1, 2*limit).Draw(t, label)
	}
	for range rapid.IntRange(0, 3).Draw(t, "wild:n") {
		switch rapid.IntRange(0, 10).Draw(t, "wild:dim") {
		case 0:
			r.Inherit = rapid.SampledFrom([]InheritMode{"", InheritNone, InheritMinimal, InheritFull, "most"}).Draw(t, "wild:inherit")
		case 1:
			r.Allow = sorted(pick(t, append(p.Tools(), "t2", "zz"), "wild:allow"))
		case 2:
			r.Deny = pick(t, append(slices.Clone(toolPool), compPool...), "wild:deny")
		case 3:
			r.Composed = nil
			for _, name := range pick(t, newComps, "wild:composed") {
				r.Composed = append(r.Composed, Composite{Name: name, Of: pick(t, append(slices.Clone(toolPool), compPool...), "wild:of:"+name)})
			}
		case 4:
			r.Constraints = Constraints{
				NoSpawn:         rapid.Bool().Draw(t, "wild:no_spawn"),
				NoNetwork:       rapid.Bool().Draw(t, "wild:no_network"),
				ReadOnly:        rapid.Bool().Draw(t, "wild:read_only"),
				SandboxRequired: rapid.Bool().Draw(t, "wild:sandbox"),
				AllowedCommands: r.Constraints.AllowedCommands,
			}
		case 5:
			r.Constraints.AllowedCommands = pick(t, cmdPool, "wild:commands")
		case 6:
			r.Scope = Scope{
				Read:    genPathsNear(t, append(slices.Clone(p.Scope.Read), p.Scope.Write...), "wild:read"),
				Write:   genPathsNear(t, p.Scope.Write, "wild:write"),
				Execute: genPathsNear(t, p.Scope.Execute, "wild:execute"),
			}
		case 7:
			r.Budget = Budget{
				MaxTokens:     upTo(p.Budget.MaxTokens, "wild:max_tokens"),
				MaxConcurrent: int(upTo(int64(p.Budget.MaxConcurrent), "wild:max_concurrent")),
				DailyLimit:    int(upTo(int64(p.Budget.DailyLimit), "wild:daily_limit")),
			}
		case 8:
			r.TimeoutMs = upTo(p.TimeoutMs, "wild:timeout")
		case 9:
			r.StallThresholdMs = upTo(p.StallThresholdMs, "wild:stall")
		case 10:
			r.DispatchTargets = pick(t, append(slices.Clone(kindPool), AnyKind), "wild:targets")
		}
	}
	return r
}

// genHonestRequest draws a request that asks only for what parent has and
// does not contradict itself; Clone must accept every one.
func genHonestRequest(t *rapid.T, p DelegationContract) Request {
	r := Request{
		AgentKind: rapid.SampledFrom(kindPool).Draw(t, "h:kind"),
		Inherit:   rapid.SampledFrom([]InheritMode{"", InheritNone, InheritMinimal, InheritFull}).Draw(t, "h:inherit"),
	}
	// Allow: the parent's tools; a composite comes with its parts.
	for _, x := range pick(t, p.Tools(), "h:allow") {
		r.Allow = append(r.Allow, x)
		if c, ok := p.composite(x); ok {
			r.Allow = append(r.Allow, c.Of...)
		}
	}
	r.Allow = sorted(r.Allow)
	// Composites of allowed plain tools, under fresh names; their parts
	// are never denied.
	var parts []string
	var plain []string
	for _, x := range r.Allow {
		if _, ok := p.composite(x); !ok {
			plain = append(plain, x)
		}
	}
	var fresh []string
	for _, name := range []string{"n1", "n2", "n3", "n4"} {
		if !slices.Contains(p.Capabilities.Allowed, name) && !slices.Contains(p.Capabilities.Denied, name) {
			fresh = append(fresh, name)
		}
	}
	for _, name := range pick(t, fresh, "h:composed") {
		of := pick(t, plain, "h:of:"+name)
		if len(of) > 0 {
			r.Composed = append(r.Composed, Composite{Name: name, Of: of})
			parts = append(parts, of...)
		}
	}
	for _, x := range pick(t, toolPool, "h:deny") {
		if !slices.Contains(parts, x) {
			r.Deny = append(r.Deny, x)
		}
	}
	readOnly := rapid.Bool().Draw(t, "h:read_only")
	noSpawn := rapid.Bool().Draw(t, "h:no_spawn")
	r.Constraints = Constraints{
		NoSpawn:         noSpawn,
		NoNetwork:       rapid.Bool().Draw(t, "h:no_network"),
		ReadOnly:        readOnly,
		SandboxRequired: rapid.Bool().Draw(t, "h:sandbox"),
		AllowedCommands: pick(t, p.Constraints.AllowedCommands, "h:commands"),
	}
	within := func(roots []string, label string) []string {
		var out []string
		for _, root := range pick(t, roots, label) {
			x := root
			if rapid.Bool().Draw(t, label+":deeper") {
				x += "/" + rapid.SampledFrom(segPool).Draw(t, label+":seg")
			}
			if !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
		return out
	}
	r.Scope.Read = within(append(slices.Clone(p.Scope.Read), p.Scope.Write...), "h:read")
	r.Scope.Read = slices.Compact(sorted(r.Scope.Read))
	if !readOnly && !p.Constraints.ReadOnly {
		r.Scope.Write = within(p.Scope.Write, "h:write")
	}
	r.Scope.Execute = within(p.Scope.Execute, "h:execute")
	upTo := func(limit int64, label string) int64 {
		if rapid.Bool().Draw(t, label+":zero") {
			return 0
		}
		return rapid.Int64Range(1, limit).Draw(t, label)
	}
	r.Budget = Budget{
		MaxTokens:     upTo(p.Budget.MaxTokens, "h:max_tokens"),
		MaxConcurrent: int(upTo(int64(p.Budget.MaxConcurrent), "h:max_concurrent")),
		DailyLimit:    int(upTo(int64(p.Budget.DailyLimit), "h:daily_limit")),
	}
	r.TimeoutMs = upTo(p.TimeoutMs, "h:timeout")
	timeout := p.TimeoutMs
	if r.TimeoutMs > 0 {
		timeout = r.TimeoutMs
	}
	r.StallThresholdMs = upTo(min(p.StallThresholdMs, timeout), "h:stall")
	r.SOP = pick(t, stepPool, "h:sop")
	if !noSpawn && !p.Constraints.NoSpawn {
		r.DispatchTargets = pick(t, p.DispatchTargets, "h:targets")
		if slices.Contains(p.DispatchTargets, AnyKind) {
			r.DispatchTargets = append(r.DispatchTargets, pick(t, kindPool, "h:any")...)
			r.DispatchTargets = sorted(r.DispatchTargets)
		}
	}
	return r
}

// oracle is an independent, deliberately plain statement of "child is no
// wider than parent" (DC3), written without the package's helpers: tools
// compared by the plain tools they can reach, paths by splitting into
// segments, numbers by comparison. It returns "" or what is wider.
func oracle(p, c DelegationContract) string {
	parentPower := power(p)
	for _, x := range power(c) {
		if !has(parentPower, x) {
			return "tool power " + x
		}
	}
	for _, d := range p.Capabilities.Denied {
		if !has(c.Capabilities.Denied, d) {
			return "denial of " + d + " dropped"
		}
	}
	flags := [][2]bool{
		{p.Constraints.NoSpawn, c.Constraints.NoSpawn},
		{p.Constraints.NoNetwork, c.Constraints.NoNetwork},
		{p.Constraints.ReadOnly, c.Constraints.ReadOnly},
		{p.Constraints.SandboxRequired, c.Constraints.SandboxRequired},
	}
	for i, f := range flags {
		if f[0] && !f[1] {
			return fmt.Sprintf("flag %d switched off", i)
		}
	}
	for _, x := range c.Constraints.AllowedCommands {
		if !has(p.Constraints.AllowedCommands, x) {
			return "command " + x
		}
	}
	for _, x := range c.Scope.Write {
		if !under(x, p.Scope.Write) {
			return "write " + x
		}
	}
	for _, x := range c.Scope.Read {
		if !under(x, p.Scope.Read) && !under(x, p.Scope.Write) {
			return "read " + x
		}
	}
	for _, x := range c.Scope.Execute {
		if !under(x, p.Scope.Execute) {
			return "execute " + x
		}
	}
	if c.Constraints.ReadOnly && len(c.Scope.Write) > 0 {
		return "read-only child with write paths"
	}
	if c.Budget.MaxTokens > p.Budget.MaxTokens || c.Budget.MaxTokens < 1 {
		return "max_tokens"
	}
	if c.Budget.MaxConcurrent > p.Budget.MaxConcurrent || c.Budget.MaxConcurrent < 1 {
		return "max_concurrent"
	}
	if c.Budget.DailyLimit > p.Budget.DailyLimit || c.Budget.DailyLimit < 1 {
		return "daily_limit"
	}
	if c.TimeoutMs > p.TimeoutMs || c.TimeoutMs < 1 {
		return "timeout"
	}
	if c.StallThresholdMs > p.StallThresholdMs || c.StallThresholdMs < 1 {
		return "stall"
	}
	if p.Constraints.NoSpawn && len(c.DispatchTargets) > 0 {
		return "targets under a no_spawn parent"
	}
	for _, k := range c.DispatchTargets {
		if !has(p.DispatchTargets, k) && !has(p.DispatchTargets, AnyKind) {
			return "target " + k
		}
	}
	return ""
}

// power lists the plain tools a contract can reach: each effective tool,
// with a composite replaced by its parts.
func power(d DelegationContract) []string {
	var out []string
	for _, t := range d.Capabilities.Allowed {
		if has(d.Capabilities.Denied, t) {
			continue
		}
		composite := false
		for _, c := range d.Capabilities.Composed {
			if c.Name == t {
				composite = true
				out = append(out, c.Of...)
			}
		}
		if !composite {
			out = append(out, t)
		}
	}
	return out
}

func has(list []string, x string) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// under reports whether path x lies in one of roots, segment by segment.
func under(x string, roots []string) bool {
	xs := strings.Split(x, "/")
	for _, r := range roots {
		rs := strings.Split(r, "/")
		if len(xs) < len(rs) {
			continue
		}
		same := true
		for i := range rs {
			if xs[i] != rs[i] {
				same = false
			}
		}
		if same {
			return true
		}
	}
	return false
}

// checkChild asserts what every child of Clone must satisfy.
func checkChild(t *rapid.T, p, c DelegationContract) {
	if err := c.Validate(); err != nil {
		t.Fatalf("Clone made an invalid child: %v", err)
	}
	if err := ValidateNarrowing(p, c); err != nil {
		t.Fatalf("ValidateNarrowing refuses Clone's child: %v", err)
	}
	if why := oracle(p, c); why != "" {
		t.Fatalf("the oracle finds the child wider: %s\nparent %+v\nchild  %+v", why, p, c)
	}
}

// DC3: whatever the request, Clone either refuses with a typed error or
// yields a child that is no wider than its parent.
func TestPropCloneNeverWidens(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Ten requests per parent: a default run checks a thousand pairs.
		p := genContract(t)
		for range 10 {
			req := genRequest(t, p)
			c, err := Clone(p, req)
			if err != nil {
				var we *WidenError
				var fe *FieldError
				if !errors.As(err, &we) && !errors.As(err, &fe) {
					t.Fatalf("untyped error: %v", err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("an error over several lines: %q", err)
				}
				continue
			}
			checkChild(t, p, c)
		}
	})
}

// DC3: Clone accepts every request that asks only for what the parent has.
func TestPropCloneAcceptsHonestRequests(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genContract(t)
		for range 10 {
			req := genHonestRequest(t, p)
			c, err := Clone(p, req)
			if err != nil {
				t.Fatalf("an honest request was refused: %v\nparent %+v\nrequest %+v", err, p, req)
			}
			checkChild(t, p, c)
		}
	})
}

// DC3: down a chain of up to 8 delegations, each child is no wider than
// its parent, and so — checked directly, not by induction — no wider than
// the root.
func TestPropDeepChains(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		root := genContract(t)
		cur := root
		depth := rapid.IntRange(1, 8).Draw(t, "depth")
		for i := range depth {
			var req Request
			honest := rapid.IntRange(0, 4).Draw(t, "honest") > 0
			if honest {
				req = genHonestRequest(t, cur)
			} else {
				req = genRequest(t, cur)
			}
			c, err := Clone(cur, req)
			if err != nil {
				if honest {
					t.Fatalf("level %d: an honest request was refused: %v", i+1, err)
				}
				continue
			}
			checkChild(t, cur, c)
			if why := oracle(root, c); why != "" {
				t.Fatalf("level %d is wider than the root: %s", i+1, why)
			}
			cur = c
		}
	})
}

// DC3: ValidateNarrowing refuses every single-field widening, naming the
// field. The widened child is a copy of the parent with one dimension
// raised past it, so nothing else can be the reason.
func TestPropNarrowingRejectsEveryWidening(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genContract(t)
		if err := ValidateNarrowing(p, p); err != nil {
			t.Fatalf("a contract does not narrow itself: %v", err)
		}
		c := clone(p)
		type widening struct {
			fields []string
			apply  func()
			byName bool // a name rule, not more power: the oracle does not see it
		}
		var ws []widening
		add := func(apply func(), fields ...string) { ws = append(ws, widening{fields, apply, false}) }

		if fresh := missing(append(append(slices.Clone(p.Capabilities.Allowed), p.Capabilities.Denied...), DefaultTools()...), "x1", "x2"); fresh != "" {
			add(func() { c.Capabilities.Allowed = append(c.Capabilities.Allowed, fresh) }, "capabilities.allowed")
		}
		if len(p.Capabilities.Denied) > 0 {
			d := rapid.SampledFrom(p.Capabilities.Denied).Draw(t, "undeny")
			add(func() {
				c.Capabilities.Denied = slices.DeleteFunc(c.Capabilities.Denied, func(x string) bool { return x == d })
			}, "capabilities.denied")
		}
		if len(p.Capabilities.Composed) > 0 {
			i := rapid.IntRange(0, len(p.Capabilities.Composed)-1).Draw(t, "composite")
			if len(p.Capabilities.Composed[i].Of) > 1 {
				// Redefining a composite reaches no new plain tool, but a
				// name must mean the same thing down a chain.
				ws = append(ws, widening{[]string{"capabilities.allowed"}, func() { c.Capabilities.Composed[i].Of = c.Capabilities.Composed[i].Of[1:] }, true})
			}
		}
		flag := func(on bool, field string, off func()) {
			if on {
				add(off, "constraints."+field)
			}
		}
		flag(p.Constraints.NoSpawn, "no_spawn", func() { c.Constraints.NoSpawn = false })
		flag(p.Constraints.NoNetwork, "no_network", func() { c.Constraints.NoNetwork = false })
		flag(p.Constraints.ReadOnly, "read_only", func() { c.Constraints.ReadOnly = false })
		flag(p.Constraints.SandboxRequired, "sandbox_required", func() { c.Constraints.SandboxRequired = false })
		if cmd := missing(p.Constraints.AllowedCommands, cmdPool...); cmd != "" {
			add(func() { c.Constraints.AllowedCommands = append(c.Constraints.AllowedCommands, cmd) }, "constraints.allowed_commands")
		}
		outside := func(roots ...[]string) string {
			for _, x := range []string{"z", "a", "ab", "b", "a/b", "ab/a", "b/ab"} {
				if !under(x, roots[0]) && (len(roots) == 1 || !under(x, roots[1])) {
					return x
				}
			}
			return ""
		}
		if x := outside(p.Scope.Write); x != "" && !p.Constraints.ReadOnly && !slices.Contains(p.Scope.Write, x) {
			add(func() { c.Scope.Write = append(c.Scope.Write, x) }, "scope.write")
		}
		if x := outside(p.Scope.Read, p.Scope.Write); x != "" && !slices.Contains(p.Scope.Read, x) {
			add(func() { c.Scope.Read = append(c.Scope.Read, x) }, "scope.read")
		}
		if x := outside(p.Scope.Execute); x != "" && !slices.Contains(p.Scope.Execute, x) {
			add(func() { c.Scope.Execute = append(c.Scope.Execute, x) }, "scope.execute")
		}
		add(func() { c.Budget.MaxTokens++ }, "budget.max_tokens")
		add(func() { c.Budget.MaxConcurrent++ }, "budget.max_concurrent")
		add(func() { c.Budget.DailyLimit++ }, "budget.daily_limit")
		add(func() { c.TimeoutMs++ }, "timeout_ms")
		if p.StallThresholdMs < p.TimeoutMs {
			add(func() { c.StallThresholdMs++ }, "stall_threshold_ms")
		}
		if !p.Constraints.NoSpawn && !slices.Contains(p.DispatchTargets, AnyKind) {
			add(func() { c.DispatchTargets = append(c.DispatchTargets, AnyKind) }, "dispatch_targets")
			if k := missing(p.DispatchTargets, kindPool...); k != "" {
				add(func() { c.DispatchTargets = append(c.DispatchTargets, k) }, "dispatch_targets")
			}
		}

		w := ws[rapid.IntRange(0, len(ws)-1).Draw(t, "widening")]
		w.apply()
		if err := c.Validate(); err != nil {
			t.Fatalf("the widened child is malformed, so the test proves nothing: %v", err)
		}
		err := ValidateNarrowing(p, c)
		var we *WidenError
		if !errors.As(err, &we) {
			t.Fatalf("widening %v was not refused as one: %v", w.fields, err)
		}
		if !slices.Contains(w.fields, we.Field) {
			t.Fatalf("widening %v was refused as %s: %v", w.fields, we.Field, err)
		}
		if why := oracle(p, c); why == "" && !w.byName {
			t.Fatalf("the oracle misses widening %v", w.fields)
		}
	})
}

// missing returns the first of candidates not in list, or "".
func missing(list []string, candidates ...string) string {
	for _, x := range candidates {
		if !slices.Contains(list, x) {
			return x
		}
	}
	return ""
}
