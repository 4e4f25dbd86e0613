package scope

import (
	"fmt"
	"slices"
	"strings"
)

// Render writes the plain-text block put into a child's instructions so it
// knows its limits: tools, denied tools, restrictions in words, the paths
// it may read, write and execute in, its budget, deadline and stall
// threshold, its SOP steps numbered, and whom it may dispatch to. The host
// enforces every line regardless; the text is there so the model plans
// within its limits instead of discovering them by refusal. The output is
// deterministic (lists sorted) and ends with a newline.
func Render(d DelegationContract) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }

	line("== Your delegation contract ==")
	if d.Identity.AgentKind != "" {
		line("Your agent kind: %s", d.Identity.AgentKind)
	}
	line("The host enforces these limits; you cannot widen them. If they are not enough for the task, say so in your result instead of working around them.")
	line("")
	line("Tools you may call: %s", words(d.Tools()))
	for _, c := range d.Capabilities.Composed {
		line("- %s is a composite tool: it uses %s, in that order.", c.Name, strings.Join(c.Of, ", then "))
	}
	if denied := sorted(d.Capabilities.Denied); len(denied) > 0 {
		line("Tools denied to you: %s", words(denied))
	}

	c := d.Constraints
	var rules []string
	if c.NoSpawn {
		rules = append(rules, "You may not start sub-agents.")
	}
	if c.NoNetwork {
		rules = append(rules, "You have no network access.")
	}
	if c.ReadOnly {
		rules = append(rules, "You are read-only: you may not create, change or delete any file.")
	}
	if c.SandboxRequired {
		rules = append(rules, "Commands run only inside the sandbox.")
	}
	if len(rules) == 0 {
		line("Restrictions: none beyond the limits below.")
	} else {
		line("Restrictions:")
		for _, r := range rules {
			line("- %s", r)
		}
	}
	line("Commands you may run (exact program names): %s", words(sorted(c.AllowedCommands)))

	line("")
	line("Folders, relative to the run folder (each includes everything under it):")
	line("- read: %s", words(sorted(d.Scope.Read)))
	line("- write: %s", words(sorted(d.Scope.Write)))
	line("- execute: %s", words(sorted(d.Scope.Execute)))

	line("")
	if c.NoSpawn {
		line("Budget:")
	} else {
		line("Budget, shared with any sub-agents you start:")
	}
	line("- at most %d tokens", d.Budget.MaxTokens)
	line("- at most %s running at once", plural(d.Budget.MaxConcurrent, "model call or sub-agent", "model calls or sub-agents"))
	line("- at most %s a day", plural(d.Budget.DailyLimit, "session", "sessions"))
	line("Deadline: you are stopped %s after you start. Going %s without progress counts as a stall and is reported.",
		duration(d.TimeoutMs), duration(d.StallThresholdMs))

	if len(d.SOP) > 0 {
		line("")
		line("Standard operating procedure (follow in order):")
		for i, s := range d.SOP {
			line("%d. %s", i+1, s)
		}
	}

	line("")
	switch targets := sorted(d.DispatchTargets); {
	case c.NoSpawn || len(targets) == 0:
		line("You may not dispatch work to other agents.")
	case slices.Contains(targets, AnyKind):
		line("You may dispatch work to any kind of agent.")
	default:
		line("You may dispatch work to these kinds of agent: %s", words(targets))
	}
	return b.String()
}

func words(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// duration writes milliseconds in the largest whole unit, as a person would
// say it: "2 h", "90 min", "30 s", "1500 ms".
func duration(ms int64) string {
	switch {
	case ms > 0 && ms%3_600_000 == 0:
		return fmt.Sprintf("%d h", ms/3_600_000)
	case ms > 0 && ms%60_000 == 0:
		return fmt.Sprintf("%d min", ms/60_000)
	case ms > 0 && ms%1000 == 0:
		return fmt.Sprintf("%d s", ms/1000)
	}
	return fmt.Sprintf("%d ms", ms)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
