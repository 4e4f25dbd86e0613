package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/fractal-harness/fractal/config"
	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/anthropic"
	"github.com/fractal-harness/fractal/model/openai"
	"github.com/fractal-harness/fractal/model/retry"
	"github.com/fractal-harness/fractal/model/route"
)

// loadConfig finds the model configuration: --config, else ./fractal.yaml,
// else $FRACTAL_HOME/fractal.yaml, else the environment's keys.
func loadConfig(flag string) (*config.Config, error) {
	if flag != "" {
		c, err := config.Load(flag)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		return c, nil
	}
	candidates := []string{"fractal.yaml"}
	if home := os.Getenv("FRACTAL_HOME"); home != "" {
		candidates = append(candidates, filepath.Join(home, "fractal.yaml"))
	}
	for _, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			c, err := config.Load(p)
			if err != nil {
				return nil, usageErr("%v", err)
			}
			return c, nil
		}
	}
	c, err := config.FromEnv()
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return c, nil
}

// client builds the provider client of one binding.
func client(cfg *config.Config, b config.Binding, rp retry.Policy) (model.Model, error) {
	p := b.Provider
	switch p.Kind {
	case config.Anthropic:
		return anthropic.New(anthropic.Config{APIKey: p.Key(), BaseURL: p.URL(), Model: b.Model, MaxTokens: cfg.MaxTokens, Retry: rp})
	case config.OpenAI:
		return openai.New(openai.Config{APIKey: p.Key(), BaseURL: p.URL(), Model: b.Model, MaxTokens: cfg.MaxTokens, Retry: rp})
	}
	return nil, fmt.Errorf("provider %s: unknown kind %q", p.Name, p.Kind)
}

// router binds every role to its clients, in fallback order.
func router(cfg *config.Config) (*route.Router, error) {
	clients := map[string]model.Model{}
	roles := map[model.Role][]route.Binding{}
	for _, r := range model.Roles {
		for _, b := range cfg.Bindings(r) {
			m, ok := clients[b.Name()]
			if !ok {
				var err error
				if m, err = client(cfg, b, retry.Policy{}); err != nil {
					return nil, usageErr("%s (role %s, %s): %v", cfg.Source, r, b.Name(), err)
				}
				clients[b.Name()] = m
			}
			roles[r] = append(roles[r], route.Binding{Name: b.Name(), Model: m})
		}
	}
	return route.New(roles)
}

// saveConfig keeps the configuration a run started with in the run folder,
// so resume uses the same models. Keys are not in it: it names variables.
func saveConfig(dir string, cfg *config.Config) error {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	p := filepath.Join(dir, runConfigFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

func modelsCmd() *cobra.Command {
	var cfgPath string
	c := &cobra.Command{
		Use:   "models",
		Short: "List each role's models, in fallback order, with their prices",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cfgPath)
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			fmt.Fprintf(out, "configuration: %s\n\n", cfg.Source)
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "role\t#\tprovider/model\tendpoint\tkey\tUSD per 1M in / out / cache read / cache write")
			for _, r := range model.Roles {
				for i, b := range cfg.Bindings(r) {
					price := "unknown (set prices: in fractal.yaml)"
					if p, ok := cfg.PriceOf(b.Model); ok {
						price = fmt.Sprintf("%.3g / %.3g / %.3g / %.3g", p.Input, p.Output, p.CacheRead, p.CacheWrite)
					}
					url := b.Provider.URL()
					if url == "" {
						url = "(provider default)"
					}
					key := "$" + b.Provider.APIKeyEnv
					if b.Provider.Key() == "" {
						key += " (not set)"
					}
					fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", r, i+1, b.Name(), url, key, price)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(out, "\nshipped prices are as of %s; prices: in fractal.yaml override them.\n", config.PricesAsOf)
			return nil
		},
	}
	c.Flags().StringVar(&cfgPath, "config", "", "fractal.yaml to read (default ./fractal.yaml, then $FRACTAL_HOME/fractal.yaml, then the environment)")
	return c
}

func doctorCmd() *cobra.Command {
	var (
		cfgPath string
		timeout time.Duration
	)
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check that every configured model answers a tiny request, and say plainly what is wrong",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cfgPath)
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			seen := map[string]bool{}
			var names []string
			bindings := map[string]config.Binding{}
			for _, r := range model.Roles {
				for _, b := range cfg.Bindings(r) {
					if !seen[b.Name()] {
						seen[b.Name()] = true
						names = append(names, b.Name())
						bindings[b.Name()] = b
					}
				}
			}
			sort.Strings(names)
			bad := 0
			for _, n := range names {
				verdict := probe(c.Context(), cfg, bindings[n], timeout)
				if verdict != "ok" {
					bad++
				}
				fmt.Fprintf(out, "%-40s %s\n", n, verdict)
			}
			if bad > 0 {
				return failErr("%d of %d models did not answer", bad, len(names))
			}
			return nil
		},
	}
	c.Flags().StringVar(&cfgPath, "config", "", "fractal.yaml to read")
	c.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long each model may take to answer")
	return c
}

// probe sends one tiny request and explains the outcome in plain words.
func probe(ctx context.Context, cfg *config.Config, b config.Binding, timeout time.Duration) string {
	if b.Provider.Kind == config.Anthropic && b.Provider.Key() == "" {
		return fmt.Sprintf("no key: set $%s", b.Provider.APIKeyEnv)
	}
	if b.Provider.Kind == config.OpenAI && b.Provider.Key() == "" && b.Provider.URL() == "" {
		return fmt.Sprintf("no key: set $%s (or a base_url for a local server)", b.Provider.APIKeyEnv)
	}
	// One try: the doctor reports what is wrong now, it does not wait out
	// an outage.
	m, err := client(cfg, b, retry.Policy{MaxAttempts: 1})
	if err != nil {
		return "cannot configure: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err = m.Generate(ctx, model.Request{Role: model.Watcher, Instance: "doctor", MaxTokens: 16,
		Messages: []model.Message{{Role: "user", Text: "Reply with the word OK."}}})
	if err == nil {
		return "ok"
	}
	me, ok := model.AsError(err)
	if !ok {
		return "failed: " + err.Error()
	}
	switch me.Kind {
	case model.ErrAuth:
		return fmt.Sprintf("the key in $%s was refused (%s)", b.Provider.APIKeyEnv, me.Msg)
	case model.ErrNotFound:
		return fmt.Sprintf("unknown model %q at this endpoint", b.Model)
	case model.ErrNetwork, model.ErrTimeout:
		url := b.Provider.URL()
		if url == "" {
			url = "the provider's default endpoint"
		}
		return fmt.Sprintf("cannot reach %s: %s", url, strings.TrimSpace(me.Msg))
	case model.ErrRateLimited, model.ErrOverloaded, model.ErrServer:
		return fmt.Sprintf("reachable, but busy or failing now (%s): try again later", me.Kind)
	}
	return fmt.Sprintf("%s: %s", me.Kind, me.Msg)
}
