package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fractal-harness/fractal/engine"
	"github.com/fractal-harness/fractal/journal"
)

func benchCmd() *cobra.Command {
	var (
		events  int
		appends int
		quick   bool
	)
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure fold speed, durable appends and engine overhead; print a table",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			if quick {
				events, appends = 100_000, 2_000
			}
			if events < 1000 || appends < 100 {
				return usageErr("--events must be at least 1000 and --appends at least 100")
			}
			dir, err := os.MkdirTemp("", "fractal-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			ctx := c.Context()
			out := c.OutOrStdout()
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "measure\tresult\tnote")

			fr, err := engine.BenchFold(ctx, dir, events)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "fold (Guard on every event)\t%.0f events/s\t%d events, %.1f MB, full refold %s\n", fr.EventsPerSec, fr.Events, float64(fr.JournalBytes)/1e6, fr.FullFold.Round(time.Millisecond))
			fmt.Fprintf(tw, "resume with snapshot\t%s\ttarget < 2s for 1,000,000 events\n", fr.Resume.Round(time.Millisecond))

			for _, n := range []int{1, 32} {
				eps, syncs, err := journal.BenchAppend(dir, n, appends)
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "durable append, %d appender(s)\t%.0f events/s\t%d syncs for %d events\n", n, eps, syncs, appends)
			}

			shape := engine.TreeBench{Branching: 10, Turns: 5, Pool: 16}
			tr, err := engine.BenchTree(ctx, dir, shape)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "engine, depth 2 x 10, 5 turns/leaf, 0 ms\t%s wall\t%d model calls, %s/turn, %.0f allocs/turn\n", tr.Wall.Round(time.Millisecond), tr.Calls, tr.PerTurn.Round(time.Microsecond), tr.AllocsPerTurn)
			shape.Latency = 50 * time.Millisecond
			tr, err = engine.BenchTree(ctx, dir, shape)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "engine, 50 ms/turn, pool 16\t%.3f efficiency\tideal %s, wall %s (target >= 0.95)\n", tr.Efficiency, tr.Ideal.Round(time.Millisecond), tr.Wall.Round(time.Millisecond))
			return tw.Flush()
		},
	}
	c.Flags().IntVar(&events, "events", 1_000_000, "events in the fold benchmark's journal")
	c.Flags().IntVar(&appends, "appends", 20_000, "events per durable-append measurement")
	c.Flags().BoolVar(&quick, "quick", false, "small sizes, for a fast look")
	return c
}
