package config

import (
	"strings"
	"testing"

	"github.com/fractal-harness/fractal/model"
)

const sample = `version: 1
providers:
  anthropic: {kind: anthropic}
  local: {kind: openai, base_url: "http://127.0.0.1:8080/v1", api_key_env: LOCAL_KEY}
roles:
  meta: [anthropic/claude-opus-4-1]
  reviewer: [anthropic/claude-opus-4-1, local/qwen]
  worker: [anthropic/claude-sonnet-4-5-20250929, local/qwen]
  watcher: [local/qwen]
prices:
  qwen: {input: 0, output: 0}
`

// DA-C1: each role has its own models, in fallback order, across providers.
func TestParse(t *testing.T) {
	c, err := Parse([]byte(sample), "fractal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := c.Bindings(model.Worker)
	if len(w) != 2 || w[0].Name() != "anthropic/claude-sonnet-4-5-20250929" || w[1].Provider.Kind != OpenAI {
		t.Fatalf("worker bindings %+v", w)
	}
	if w[0].Provider.APIKeyEnv != "ANTHROPIC_API_KEY" || w[0].Provider.BaseURLEnv != "ANTHROPIC_BASE_URL" {
		t.Fatalf("defaults %+v", w[0].Provider)
	}
	if w[1].Provider.URL() != "http://127.0.0.1:8080/v1" {
		t.Fatal(w[1].Provider.URL())
	}
	// Dated snapshot names find their family's price; the config's own
	// price wins; an unknown model has no price rather than a zero one.
	if p, ok := c.PriceOf("claude-sonnet-4-5-20250929"); !ok || p.Input != 3 {
		t.Fatalf("price %+v %v", p, ok)
	}
	if p, ok := c.PriceOf("local/qwen"); !ok || p.Output != 0 {
		t.Fatalf("config price %+v %v", p, ok)
	}
	if _, ok := c.PriceOf("mystery-model"); ok {
		t.Fatal("an unknown model was priced")
	}
	if got := (Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}).Cost(model.Usage{Input: 1_000_000, Output: 100_000, CacheRead: 1_000_000}); got < 4.79 || got > 4.81 {
		t.Fatalf("cost %v", got)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"unknown key", strings.Replace(sample, "version: 1", "version: 1\ncolour: red", 1), "fractal.yaml:2"},
		{"bad kind", strings.Replace(sample, "kind: anthropic", "kind: gemini", 1), "kind must be"},
		{"unknown provider", strings.Replace(sample, "watcher: [local/qwen]", "watcher: [nowhere/qwen]", 1), "no provider named"},
		{"bad ref", strings.Replace(sample, "watcher: [local/qwen]", "watcher: [qwen]", 1), "provider/model"},
		{"missing role", strings.Replace(sample, "  watcher: [local/qwen]\n", "", 1), "watcher has no model"},
		{"unknown role", strings.Replace(sample, "watcher:", "boss: [local/qwen]\n  watcher:", 1), "unknown role"},
		{"negative price", strings.Replace(sample, "input: 0", "input: -1", 1), "negative"},
		{"version", strings.Replace(sample, "version: 1", "version: 2", 1), "version 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.body), "fractal.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("no keys: %v", err)
	}
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("FRACTAL_OPENAI_MODEL", "llama")
	c, err := FromEnv()
	if err != nil || c.Bindings(model.Meta)[0].Name() != "openai/llama" {
		t.Fatalf("%v %+v", err, c)
	}
	t.Setenv("ANTHROPIC_API_KEY", "k")
	c, err = FromEnv()
	if err != nil || c.Bindings(model.Worker)[0].Model != DefaultModels[Anthropic][model.Worker] {
		t.Fatalf("%v", err)
	}
}
