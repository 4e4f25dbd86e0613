// Package scope holds the DelegationContract that bounds every agent
// instance (DC1, DC2), the cloner that derives a child's contract from its
// parent's (DC3), the narrowing check the Guard runs at every delegation,
// the text a child reads about its own limits, and blueprint files that
// define kinds of sub-agent (DC9).
//
// # Monotonic decay
//
// A child can never do more than its parent: for every dimension of the
// contract, child ⊆ parent (DC3: main ⊇ level-1 ⊇ level-2). Because each
// step only narrows, the property holds down any chain of delegations
// without anyone having to look further up than one parent. The rules, and
// why each is what it is:
//
//   - Tools. The child's set is built in four steps: inherit (a base taken
//     from the parent), allow (tools named from the parent's set), deny
//     (removed, and everything composed from them with them), composed
//     (composite tools built only from tools already in the set). A named
//     tool the parent lacks is an error, never a silent drop: a blueprint
//     that asks for web_fetch under a parent without it is a mistake its
//     author must see, not a child that quietly cannot do its job.
//   - Denials are inherited whatever the inherit mode: a child never
//     escapes its parent's denials, even when some later code builds a
//     tool list from a registry instead of from the parent.
//   - Constraint flags (no_spawn, no_network, read_only, sandbox_required)
//     are restrictions, so a child's flag is its parent's OR its own: a
//     child can switch a restriction on and never off.
//   - Lists of permissions other than tools (allowed commands, dispatch
//     targets, scope paths) are named or nothing: an empty list grants
//     nothing, never everything, so forgetting a key narrows instead of
//     widening. Commands match by exact name, not prefix.
//   - Scope paths are folders relative to the run folder, compared segment
//     by segment ("work/ab" is not inside "work/a"). A child may write only
//     inside a parent write path, read inside a parent read or write path
//     (what an instance may write it may read back), and execute only inside
//     a parent execute path (writing a file must not grant running it).
//   - Budgets and timeouts are hard caps (DC6, DC7): the child's value is at
//     most the parent's, and there is no "unlimited" value at all. In a
//     request, 0 means "the parent's value", which is still a cap.
//
// Clone is the constructive side (it builds a child or says precisely
// which field would widen); ValidateNarrowing is the check side, written
// separately so that the Guard re-verifies every delegation, including
// contracts that did not come from Clone (a journal edited by hand).
//
// The package is pure: it reads no files and makes no calls. ParseBlueprint
// takes bytes; embedding the shipped blueprints lives in package blueprints.
package scope
