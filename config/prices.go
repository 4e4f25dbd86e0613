package config

import "strings"

// PricesAsOf dates the shipped price table. Prices change: set your own
// under prices: in fractal.yaml; the config's entries win.
const PricesAsOf = "2025-10-01"

// shipped is USD per million tokens, as the providers published them on
// PricesAsOf. Cache writes are Anthropic's 5-minute rate (1.25× input),
// cache reads 0.1× input; OpenAI's cached input is its own column.
var shipped = map[string]Price{
	"claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
	"claude-3-5-haiku":  {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
	"gpt-5":             {Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5-mini":        {Input: 0.25, Output: 2, CacheRead: 0.025},
	"gpt-5-nano":        {Input: 0.05, Output: 0.4, CacheRead: 0.005},
	"gpt-4.1":           {Input: 2, Output: 8, CacheRead: 0.5},
	"gpt-4.1-mini":      {Input: 0.4, Output: 1.6, CacheRead: 0.1},
	"gpt-4o":            {Input: 2.5, Output: 10, CacheRead: 1.25},
	"gpt-4o-mini":       {Input: 0.15, Output: 0.6, CacheRead: 0.075},
	// The scripted model costs nothing.
	"script": {},
}

// ShippedPrice looks m up in the shipped table by the longest matching
// prefix ("claude-sonnet-4-5-20250929" → "claude-sonnet-4-5").
func ShippedPrice(m string) (Price, bool) {
	best := ""
	for k := range shipped {
		if (m == k || strings.HasPrefix(m, k+"-")) && len(k) > len(best) {
			best = k
		}
	}
	if best == "" {
		return Price{}, false
	}
	return shipped[best], true
}

// ShippedModels lists the models of the shipped table.
func ShippedModels() []string {
	var out []string
	for k := range shipped {
		out = append(out, k)
	}
	return out
}
