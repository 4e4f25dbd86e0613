package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/fractal-harness/fractal/blueprints"
	"github.com/fractal-harness/fractal/engine"
	"github.com/fractal-harness/fractal/journal"
	"github.com/fractal-harness/fractal/policy"
	"github.com/fractal-harness/fractal/scope"
	"github.com/fractal-harness/fractal/state"
)

// finished are the terminal stages: a run in any of them is over (DC7: every terminal state
// is cleaned up, not only "done").
var finished = []state.Stage{state.StageDone, state.StageFailed, state.StageCancelled}

func gcCmd() *cobra.Command {
	var (
		ttl     time.Duration
		archive string
		dryRun  bool
	)
	c := &cobra.Command{
		Use:   "gc [RUNS]",
		Short: "Archive and remove finished runs older than --ttl (RUNS defaults to ./fractal-runs)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			root := "fractal-runs"
			if len(args) == 1 {
				root = args[0]
			}
			if ttl <= 0 {
				return usageErr("--ttl must be positive")
			}
			ents, err := os.ReadDir(root)
			if err != nil {
				return usageErr("cannot read %s: %v", root, err)
			}
			if archive == "" {
				archive = filepath.Join(root, "archive")
			}
			out := c.OutOrStdout()
			now := time.Now()
			removed := 0
			for _, ent := range ents {
				dir := filepath.Join(root, ent.Name())
				if !ent.IsDir() || dir == filepath.Clean(archive) {
					continue
				}
				m, err := journal.ReadManifest(dir)
				if err != nil {
					continue // not a run folder
				}
				if !slices.Contains(finished, state.Stage(m.Stage)) || now.Sub(m.Updated) < ttl {
					continue
				}
				lock, err := journal.LockRun(dir)
				if err != nil {
					fmt.Fprintf(out, "skip    %s: %v\n", dir, err)
					continue
				}
				dst := filepath.Join(archive, ent.Name()+".tar.gz")
				if dryRun {
					_ = lock.Release()
					fmt.Fprintf(out, "would archive %s (%s since %s) to %s\n", dir, m.Stage, m.Updated.Format(time.RFC3339), dst)
					continue
				}
				err = archiveDir(dir, dst)
				_ = lock.Release()
				if err != nil {
					return fmt.Errorf("archive %s: %w (the run was kept)", dir, err)
				}
				if err := os.RemoveAll(dir); err != nil {
					return fmt.Errorf("remove %s: %w (its archive is %s)", dir, err, dst)
				}
				removed++
				fmt.Fprintf(out, "archived %s (%s) to %s\n", dir, m.Stage, dst)
			}
			fmt.Fprintf(out, "%d run(s) archived and removed\n", removed)
			return nil
		},
	}
	c.Flags().DurationVar(&ttl, "ttl", 30*24*time.Hour, "remove finished runs whose last change is older than this")
	c.Flags().StringVar(&archive, "archive", "", "where archives go (default RUNS/archive)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be done, change nothing")
	return c
}

// archiveDir writes dir as a gzipped tar at dst, atomically: the archive
// exists whole or not at all before the run is removed.
func archiveDir(dir, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	base := filepath.Base(dir)
	werr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !d.IsDir() && !info.Mode().IsRegular() {
			return nil // links and devices are not archived
		}
		rel, _ := filepath.Rel(dir, p)
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(filepath.Join(base, rel))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	err = errors.Join(werr, tw.Close(), zw.Close())
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

func blueprintCmd() *cobra.Command {
	c := &cobra.Command{Use: "blueprint", Short: "Work with agent blueprints (docs/delegation.md)"}
	check := &cobra.Command{
		Use:   "check FILE...",
		Short: "Check blueprint files: strict format, and no request wider than a run's root contract",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			root := engine.RootContract(policy.Default())
			out := c.OutOrStdout()
			bad := 0
			for _, p := range args {
				data, err := os.ReadFile(p)
				if err != nil {
					return usageErr("cannot read blueprint: %v", err)
				}
				bp, err := scope.ParseBlueprint(data, p)
				if err == nil {
					err = scope.CheckBlueprint(bp, root)
					if err != nil {
						err = fmt.Errorf("%s: %w", p, err)
					}
				}
				if err != nil {
					if len(args) == 1 {
						return usageErr("%v", err)
					}
					fmt.Fprintf(out, "bad  %v\n", err)
					bad++
					continue
				}
				fmt.Fprintf(out, "ok   %s: %s (%d tools, %d SOP steps)\n", p, bp.ID, len(mustClone(root, bp).Tools()), len(bp.SOP))
			}
			if bad > 0 {
				return usageErr("%d of %d blueprints are not valid", bad, len(args))
			}
			return nil
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the shipped blueprints",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			all, err := blueprints.All()
			if err != nil {
				return err
			}
			for _, id := range slices.Sorted(maps.Keys(all)) {
				fmt.Fprintf(c.OutOrStdout(), "%-12s %s\n", id, all[id].Description)
			}
			return nil
		},
	}
	c.AddCommand(check, list)
	return c
}

func mustClone(root scope.DelegationContract, bp scope.Blueprint) scope.DelegationContract {
	c, err := scope.Clone(root, bp.Request())
	if err != nil {
		return scope.DelegationContract{}
	}
	return c
}
