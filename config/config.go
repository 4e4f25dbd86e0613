// Package config reads fractal.yaml: which providers exist, which models
// each role uses (with fallbacks), and what tokens cost. API keys never live
// in the file: it names the environment variable that holds each key.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/fractal-harness/fractal/model"
)

// Provider kinds.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai" // any OpenAI-compatible Chat Completions server
)

// Provider is one endpoint.
type Provider struct {
	Name string `yaml:"-"`
	Kind string `yaml:"kind"`
	// APIKeyEnv names the variable holding the key (default
	// ANTHROPIC_API_KEY or OPENAI_API_KEY by kind).
	APIKeyEnv string `yaml:"api_key_env"`
	// BaseURL, or BaseURLEnv naming a variable that holds it (default
	// ANTHROPIC_BASE_URL or OPENAI_BASE_URL by kind). Empty: the SDK's.
	BaseURL    string `yaml:"base_url"`
	BaseURLEnv string `yaml:"base_url_env"`
}

// Key returns the provider's API key from the environment.
func (p Provider) Key() string { return os.Getenv(p.APIKeyEnv) }

// URL returns the base URL: the file's value, else the variable's.
func (p Provider) URL() string {
	if p.BaseURL != "" {
		return p.BaseURL
	}
	if p.BaseURLEnv != "" {
		return os.Getenv(p.BaseURLEnv)
	}
	return ""
}

// Price is USD per million tokens.
type Price struct {
	Input      float64 `yaml:"input" json:"input"`
	Output     float64 `yaml:"output" json:"output"`
	CacheRead  float64 `yaml:"cache_read" json:"cache_read"`
	CacheWrite float64 `yaml:"cache_write" json:"cache_write"`
}

// Cost of u at price p, in USD.
func (p Price) Cost(u model.Usage) float64 {
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output +
		float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*p.CacheWrite) / 1e6
}

// Config is fractal.yaml.
type Config struct {
	Version   int                     `yaml:"version"`
	Providers map[string]*Provider    `yaml:"providers"`
	Roles     map[model.Role][]string `yaml:"roles"` // "provider/model", in fallback order
	Prices    map[string]Price        `yaml:"prices"`
	MaxTokens int                     `yaml:"max_tokens"`
	// Source says where the config came from, for messages.
	Source string `yaml:"-"`
}

// Binding is one resolved "provider/model".
type Binding struct {
	Provider *Provider
	Model    string
}

// Name is "provider/model".
func (b Binding) Name() string { return b.Provider.Name + "/" + b.Model }

// Load reads a fractal.yaml file.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read config: %w", err)
	}
	return Parse(data, path)
}

var posRe = regexp.MustCompile(`^\[(\d+):(\d+)\]\s*`)

// Parse reads fractal.yaml strictly: unknown keys and wrong types are errors
// with their line.
func Parse(data []byte, name string) (*Config, error) {
	var c Config
	if err := yaml.UnmarshalWithOptions(data, &c, yaml.Strict()); err != nil {
		msg := yaml.FormatError(err, false, false)
		if i := bytes.IndexByte([]byte(msg), '\n'); i >= 0 {
			msg = msg[:i]
		}
		if m := posRe.FindStringSubmatch(msg); m != nil {
			return nil, fmt.Errorf("%s:%s:%s: %s", name, m[1], m[2], strings.TrimSpace(msg[len(m[0]):]))
		}
		return nil, fmt.Errorf("%s: %s", name, strings.TrimSpace(msg))
	}
	c.Source = name
	if err := c.normalize(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &c, nil
}

// normalize fills defaults and validates.
func (c *Config) normalize() error {
	if c.Version == 0 {
		c.Version = 1
	}
	if c.Version != 1 {
		return fmt.Errorf("version %d is not supported (use 1)", c.Version)
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = 8192
	}
	if c.MaxTokens < 1 {
		return errors.New("max_tokens must be positive")
	}
	for name, p := range c.Providers {
		if p == nil {
			return fmt.Errorf("provider %q is empty", name)
		}
		p.Name = name
		switch p.Kind {
		case Anthropic:
			if p.APIKeyEnv == "" {
				p.APIKeyEnv = "ANTHROPIC_API_KEY"
			}
			if p.BaseURL == "" && p.BaseURLEnv == "" {
				p.BaseURLEnv = "ANTHROPIC_BASE_URL"
			}
		case OpenAI:
			if p.APIKeyEnv == "" {
				p.APIKeyEnv = "OPENAI_API_KEY"
			}
			if p.BaseURL == "" && p.BaseURLEnv == "" {
				p.BaseURLEnv = "OPENAI_BASE_URL"
			}
		default:
			return fmt.Errorf("provider %q: kind must be %q or %q, got %q", name, Anthropic, OpenAI, p.Kind)
		}
	}
	for r := range c.Roles {
		if !r.Valid() {
			return fmt.Errorf("roles: unknown role %q (use meta, worker, reviewer, watcher)", r)
		}
	}
	for _, r := range model.Roles {
		if len(c.Roles[r]) == 0 {
			return fmt.Errorf("roles: %s has no model", r)
		}
		for _, ref := range c.Roles[r] {
			if _, err := c.resolve(ref); err != nil {
				return fmt.Errorf("roles: %s: %w", r, err)
			}
		}
	}
	for m, p := range c.Prices {
		if p.Input < 0 || p.Output < 0 || p.CacheRead < 0 || p.CacheWrite < 0 {
			return fmt.Errorf("prices: %s has a negative price", m)
		}
	}
	return nil
}

func (c *Config) resolve(ref string) (Binding, error) {
	prov, m, ok := strings.Cut(ref, "/")
	if !ok || prov == "" || m == "" {
		return Binding{}, fmt.Errorf("%q: write provider/model, e.g. anthropic/claude-sonnet-4-5", ref)
	}
	p := c.Providers[prov]
	if p == nil {
		return Binding{}, fmt.Errorf("%q: no provider named %q (have: %s)", ref, prov, strings.Join(c.providerNames(), ", "))
	}
	return Binding{Provider: p, Model: m}, nil
}

func (c *Config) providerNames() []string {
	var out []string
	for n := range c.Providers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Bindings returns the role's models in fallback order.
func (c *Config) Bindings(r model.Role) []Binding {
	var out []Binding
	for _, ref := range c.Roles[r] {
		b, err := c.resolve(ref)
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

// PriceOf returns the price of a model: the config's own entry, else the
// shipped table (matched by the longest known prefix, so dated snapshot
// names such as claude-sonnet-4-5-20250929 find their family). ok is false
// for an unknown model, whose cost is then reported as unknown, never as 0.
func (c *Config) PriceOf(m string) (Price, bool) {
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if c != nil {
		if p, ok := c.Prices[m]; ok {
			return p, true
		}
	}
	return ShippedPrice(m)
}

// FromEnv builds a config when there is no fractal.yaml: Anthropic when
// ANTHROPIC_API_KEY is set, else an OpenAI-compatible endpoint when
// OPENAI_API_KEY or OPENAI_BASE_URL is set.
func FromEnv() (*Config, error) {
	c := &Config{Version: 1, Source: "environment"}
	switch {
	case os.Getenv("ANTHROPIC_API_KEY") != "":
		c.Providers = map[string]*Provider{"anthropic": {Kind: Anthropic}}
		c.Roles = map[model.Role][]string{
			model.Meta:     {"anthropic/" + DefaultModels[Anthropic][model.Meta]},
			model.Reviewer: {"anthropic/" + DefaultModels[Anthropic][model.Reviewer]},
			model.Worker:   {"anthropic/" + DefaultModels[Anthropic][model.Worker]},
			model.Watcher:  {"anthropic/" + DefaultModels[Anthropic][model.Watcher]},
		}
	case os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != "":
		c.Providers = map[string]*Provider{"openai": {Kind: OpenAI}}
		c.Roles = map[model.Role][]string{}
		for _, r := range model.Roles {
			name := DefaultModels[OpenAI][r]
			if v := os.Getenv("FRACTAL_OPENAI_MODEL"); v != "" {
				name = v
			}
			c.Roles[r] = []string{"openai/" + name}
		}
	default:
		return nil, errors.New("no model is configured: set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL, or write a fractal.yaml (see docs/models.md)")
	}
	if err := c.normalize(); err != nil {
		return nil, err
	}
	return c, nil
}

// DefaultModels are the per-role choices when no fractal.yaml names any:
// strong models plan and review, a mid-tier model works, a cheap one
// watches (DA-C1).
var DefaultModels = map[string]map[model.Role]string{
	Anthropic: {model.Meta: "claude-opus-4-1", model.Reviewer: "claude-opus-4-1", model.Worker: "claude-sonnet-4-5", model.Watcher: "claude-haiku-4-5"},
	OpenAI:    {model.Meta: "gpt-5", model.Reviewer: "gpt-5", model.Worker: "gpt-5-mini", model.Watcher: "gpt-5-nano"},
}

// Roles lists the configured roles in the usual order.
func (c *Config) RoleOrder() []model.Role {
	out := slices.Clone(model.Roles)
	return out
}
