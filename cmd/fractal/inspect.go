package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fractal-harness/fractal/check"
	"github.com/fractal-harness/fractal/config"
	"github.com/fractal-harness/fractal/contract"
	"github.com/fractal-harness/fractal/engine"
	"github.com/fractal-harness/fractal/journal"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/state"
)

// node is one instance in `fractal status --json`.
// money is a cost in USD, or unknown when a model has no price.
type money struct {
	USD     float64  `json:"usd"`
	Unknown []string `json:"unpriced_models,omitempty"`
}

func (m money) String() string {
	s := fmt.Sprintf("$%.4f", m.USD)
	if len(m.Unknown) > 0 {
		s += " + unpriced (" + strings.Join(m.Unknown, ", ") + ")"
	}
	return s
}

// cost prices usage by model with the run's config, else the shipped table.
func cost(cfg *config.Config, byModel map[string]model.Usage) money {
	var m money
	for _, name := range slices.Sorted(maps.Keys(byModel)) {
		u := byModel[name]
		if u.Total() == 0 {
			continue
		}
		p, ok := cfg.PriceOf(name)
		if !ok {
			m.Unknown = append(m.Unknown, name)
			continue
		}
		m.USD += p.Cost(u)
	}
	return m
}

type roleCost struct {
	Role   model.Role  `json:"role"`
	Usage  model.Usage `json:"usage"`
	Tokens int         `json:"tokens"`
	Cost   money       `json:"cost"`
}

type node struct {
	ID       string      `json:"id"`
	Status   string      `json:"status"`
	Mode     string      `json:"mode"`
	Contract string      `json:"contract"`
	Intent   string      `json:"intent"`
	Boundary string      `json:"boundary"`
	Attempts []attempt   `json:"attempts"`
	Usage    model.Usage `json:"usage"`
	Tokens   int         `json:"tokens"`
	Cost     money       `json:"cost"`
	Children []*node     `json:"children,omitempty"`
}

type attempt struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Failed []int  `json:"failed_checks,omitempty"`
	Reason string `json:"reason,omitempty"`
}

type statusDoc struct {
	Run        string      `json:"run"`
	Stage      string      `json:"stage"`
	Events     int64       `json:"events"`
	Usage      model.Usage `json:"usage"`
	Cost       money       `json:"cost"`
	Roles      []roleCost  `json:"roles"`
	Refusals   int         `json:"refusals"`
	Tree       []*node     `json:"tree"`
	PricesAsOf string      `json:"prices_as_of"`
}

func statusCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "status RUN",
		Short: "Show the instance tree of a run and the state of each node",
		Args:  exactArgs(1, "one run folder"),
		RunE: func(c *cobra.Command, args []string) error {
			st, err := engine.Fold(c.Context(), args[0], false)
			if err != nil {
				return foldErr(args[0], err)
			}
			doc := buildStatus(st, runConfig(args[0]))
			out := c.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(doc)
			}
			printStatus(out, doc)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func foldErr(dir string, err error) error {
	if _, merr := journal.ReadManifest(dir); merr != nil {
		return usageErr("%s is not a fractal run folder: %v", dir, merr)
	}
	var re *engine.ReplayError
	var ce *journal.CorruptError
	if errors.As(err, &re) || errors.As(err, &ce) {
		return failErr("%v", err)
	}
	return err
}

func buildStatus(st *state.State, cfg *config.Config) statusDoc {
	doc := statusDoc{Run: st.RunID, Stage: string(st.Stage), Events: st.Seq, Usage: st.Usage, Refusals: st.Refusals, PricesAsOf: config.PricesAsOf}
	all := map[string]model.Usage{}
	for _, r := range model.Roles {
		u, ok := st.RoleUsage[r]
		if !ok {
			continue
		}
		c := cost(cfg, st.RoleModelUsage[r])
		doc.Roles = append(doc.Roles, roleCost{Role: r, Usage: u, Tokens: u.Total(), Cost: c})
		for m, mu := range st.RoleModelUsage[r] {
			all[m] = all[m].Add(mu)
		}
	}
	doc.Cost = cost(cfg, all)
	children := map[string][]string{}
	for _, id := range sortedIDs(st) {
		in := st.Inst[id]
		if id != state.Session {
			children[in.Parent] = append(children[in.Parent], id)
		}
	}
	var mk func(id string) *node
	mk = func(id string) *node {
		in := st.Inst[id]
		n := &node{ID: id, Mode: string(in.Mode), Contract: in.Contract, Boundary: in.Boundary, Usage: in.Usage, Tokens: in.Usage.Total(), Cost: cost(cfg, in.ModelUsage), Intent: firstLine(st.Contract[in.Contract].Intent)}
		n.Status = instanceStatus(st, in)
		for _, aid := range in.Attempts {
			a := st.Attempt[aid]
			at := attempt{ID: a.ID, Status: string(a.Status), Reason: a.Reason}
			if a.Evidence != nil {
				at.Failed = contract.Failed(*a.Evidence)
				for i := range at.Failed {
					at.Failed[i]++
				}
			}
			n.Attempts = append(n.Attempts, at)
		}
		for _, c := range children[id] {
			n.Children = append(n.Children, mk(c))
		}
		return n
	}
	for _, id := range children[state.Session] {
		doc.Tree = append(doc.Tree, mk(id))
	}
	return doc
}

// instanceStatus is what a person wants to know of a node: its task's
// status in the parent's plan, or retired.
func instanceStatus(st *state.State, in *state.Instance) string {
	if in.Retired {
		return "retired"
	}
	if t := st.TaskOf(in.ID); t != nil {
		return string(t.Status)
	}
	return "unknown"
}

func sortedIDs(st *state.State) []string {
	ids := make([]string, 0, len(st.Inst))
	for id := range st.Inst {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 70 {
		s = s[:67] + "..."
	}
	return s
}

func printStatus(w io.Writer, d statusDoc) {
	fmt.Fprintf(w, "run %s: %s (%d events", d.Run, d.Stage, d.Events)
	if d.Refusals > 0 {
		fmt.Fprintf(w, ", %d refusals", d.Refusals)
	}
	fmt.Fprintln(w, ")")
	var walk func(n *node, prefix string, last bool)
	walk = func(n *node, prefix string, last bool) {
		branch, next := "├─ ", "│  "
		if last {
			branch, next = "└─ ", "   "
		}
		tries := ""
		if len(n.Attempts) > 1 {
			tries = fmt.Sprintf(", %d attempts", len(n.Attempts))
		}
		fmt.Fprintf(w, "%s%s%s  [%s%s]  %d tokens %s  %s\n", prefix, branch, n.ID, n.Status, tries, n.Tokens, n.Cost, n.Intent)
		for i, c := range n.Children {
			walk(c, prefix+next, i == len(n.Children)-1)
		}
	}
	for i, n := range d.Tree {
		walk(n, "", i == len(d.Tree)-1)
	}
	for _, r := range d.Roles {
		fmt.Fprintf(w, "%-9s %9d tokens (in %d, out %d, cache read %d, cache write %d)  %s\n", r.Role, r.Tokens, r.Usage.Input, r.Usage.Output, r.Usage.CacheRead, r.Usage.CacheWrite, r.Cost)
	}
	fmt.Fprintf(w, "total     %9d tokens  %s  (prices as of %s unless set in fractal.yaml)\n", d.Usage.Total(), d.Cost, d.PricesAsOf)
}

func verifyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "verify RUN",
		Short: "Replay a run's journal through the Guard; exit 0 if sound, 1 with the first violation",
		Args:  exactArgs(1, "one run folder"),
		RunE: func(c *cobra.Command, args []string) error {
			st, err := engine.Fold(c.Context(), args[0], true)
			if err != nil {
				return foldErr(args[0], err)
			}
			accepted := 0
			for _, a := range st.Attempt {
				if a.Status == state.AttemptPassed {
					accepted++
				}
			}
			fmt.Fprintf(c.OutOrStdout(), "sound: %d events replayed through the Guard; stage %s; %d attempts accepted\n", st.Seq, st.Stage, accepted)
			return nil
		},
	}
}

func checkCmd() *cobra.Command {
	var (
		in     string
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "check CONTRACT --in DIR",
		Short: "Evaluate a contract's structural checks on a folder (exit 0 all pass, 1 some fail, 2 error)",
		Args:  exactArgs(1, "one contract file"),
		RunE: func(c *cobra.Command, args []string) error {
			if in == "" {
				return usageErr("check needs --in DIR, the folder to evaluate")
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return usageErr("cannot read contract: %v", err)
			}
			ct, err := contract.Parse(data, args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			if fi, err := os.Stat(in); err != nil || !fi.IsDir() {
				return usageErr("--in %s is not a folder", in)
			}
			ev := check.Evaluate(c.Context(), ct, in, check.Options{})
			out := c.OutOrStdout()
			failed := 0
			type row struct {
				Check  int    `json:"check"`
				Kind   string `json:"kind"`
				Target string `json:"target"`
				Result string `json:"result"`
				Detail string `json:"detail,omitempty"`
			}
			var rows []row
			for i, r := range ev.Results {
				ch := ct.Checks[i]
				rw := row{Check: i + 1, Kind: string(ch.Kind), Target: ch.Path, Detail: r.Detail}
				switch {
				case ch.Kind == contract.Rubric:
					rw.Result, rw.Target, rw.Detail = "skipped", firstLine(ch.Text), "graded by the Reviewer during a run"
				case r.Err != "":
					rw.Result, rw.Detail = "error", r.Err
					failed++
				case r.Pass:
					rw.Result = "pass"
				default:
					rw.Result = "fail"
					failed++
				}
				rows = append(rows, rw)
			}
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(map[string]any{"contract": ct.ID, "results": rows, "pass": failed == 0}); err != nil {
					return err
				}
			} else {
				for _, r := range rows {
					fmt.Fprintf(out, "%-7s %d. %s %s", r.Result, r.Check, r.Kind, r.Target)
					if r.Detail != "" {
						fmt.Fprintf(out, " — %s", r.Detail)
					}
					fmt.Fprintln(out)
				}
			}
			if failed > 0 {
				return failErr("%d of %d checks do not pass", failed, len(rows))
			}
			return nil
		},
	}
	c.Flags().StringVar(&in, "in", "", "folder to evaluate the checks in (required)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// runConfig is the model configuration a run keeps beside its journal, if
// any; without one, status prices with the shipped table.
func runConfig(dir string) *config.Config {
	c, err := config.Load(filepath.Join(dir, runConfigFile))
	if err != nil {
		return nil
	}
	return c
}
