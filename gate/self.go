package gate

import (
	"fmt"
	"path"
	"strings"

	"github.com/fractal-harness/fractal/contract"
)

// ItemKind says whether a self-assessment item is about a check of the
// contract or one of the task's constraints.
type ItemKind string

// The item kinds.
const (
	KindCheck      ItemKind = "check"
	KindConstraint ItemKind = "constraint"
)

// Source is where a self-assessment quote can be verified, and where its
// content came from.
type Source struct {
	// File is the run-relative path of the file that holds the quote.
	File string `json:"file"`
	// Line is the 1-based line on which the quote begins.
	Line int `json:"line"`
	// Origin is the provenance tag: where the quoted content came from —
	// an input file's name, a URL, or "computed" for what the worker
	// derived itself. Memory and general knowledge are not origins (DA-B3).
	Origin string `json:"origin"`
}

// SelfItem is one line of the worker's self-assessment on declare_done
// (DA-B1): one check or constraint, whether it passes, and the evidence.
type SelfItem struct {
	Kind ItemKind `json:"kind"`
	// Index is the 1-based number of the check (in contract order) or of
	// the constraint (in the order given to CheckSelfAssessment) — the
	// numbering the model sees in its instructions.
	Index  int    `json:"index"`
	Pass   bool   `json:"pass"`
	Quote  string `json:"quote"` // words copied from Source.File
	Source Source `json:"source"`
}

// nonSources are provenance tags that name no source the host can follow:
// memory and general knowledge are explicitly not sources (DA-B3).
// Compared after trimming and lower-casing.
var nonSources = map[string]bool{
	"": true, "-": true, "n/a": true, "na": true, "none": true, "unknown": true,
	"memory": true, "my memory": true, "training": true, "training data": true,
	"general knowledge": true, "common knowledge": true, "domain knowledge": true,
	"background knowledge": true, "prior knowledge": true, "world knowledge": true,
	"assumption": true, "assumed": true, "model": true, "llm": true, "self": true,
}

// CheckSelfAssessment is the hard gate on declare_done (DA-B1). It refuses
// unless every check of c and every constraint is covered by exactly one
// item that passes, quotes the work, and names a source; and unless every
// quote really is in the file it names, beginning on the line it names.
//
// files maps run-relative paths to contents; the caller reads them. A quote
// is compared after folding white space, typographic quotes, dashes and
// ellipses (see normalize); case and everything else must match. The gate
// proves a quote exists, not that it proves the check: relevance is the
// Reviewer's to judge.
//
// A nil result means the self-assessment passes.
func CheckSelfAssessment(c contract.Contract, constraints []string, items []SelfItem, files map[string]string) []Problem {
	var out []Problem
	add := func(item string, code Code, format string, args ...any) {
		out = append(out, Problem{Item: item, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	norm := map[string]normalized{}
	byPath := map[string]string{}
	for p, content := range files {
		byPath[cleanPath(p)] = content
	}
	type key struct {
		kind ItemKind
		n    int
	}
	first := map[key]int{}
	for i, it := range items {
		label := fmt.Sprintf("%s %d", it.Kind, it.Index)
		var limit int
		switch it.Kind {
		case KindCheck:
			limit = len(c.Checks)
		case KindConstraint:
			limit = len(constraints)
		default:
			add(fmt.Sprintf("item %d", i+1), ESelfUnknown,
				"item %d has kind %q; use \"check\" or \"constraint\"", i+1, it.Kind)
			continue
		}
		if it.Index < 1 || it.Index > limit {
			add(label, ESelfUnknown, "there is no %s %d: the %ss are numbered 1 to %d", it.Kind, it.Index, it.Kind, limit)
			continue
		}
		k := key{it.Kind, it.Index}
		if j, dup := first[k]; dup {
			add(label, ESelfDuplicate, "%s is assessed twice (items %d and %d); give exactly one item per %s", label, j+1, i+1, it.Kind)
			continue
		}
		first[k] = i
		if !it.Pass {
			add(label, ESelfFailed, "you marked %s (%s) as failing; fix the work until it passes, or end the session with blocked and say what stops you",
				label, describe(c, constraints, it.Kind, it.Index))
			continue
		}
		quote := normalize(it.Quote).text
		if quote == "" {
			add(label, ESelfNoQuote, "%s has no quote; copy the words from your files that show it is met", label)
		}
		origin := strings.ToLower(strings.TrimSpace(it.Source.Origin))
		switch {
		case origin == "":
			add(label, ESelfNoSource, "%s has no origin; say where the quoted content came from: an input file's name, a URL, or \"computed\"", label)
		case nonSources[origin]:
			add(label, ESelfNoSource, "%q is not a source: content must come from the task's inputs, a URL you read, or your own computation (\"computed\"), never from memory or general knowledge", it.Source.Origin)
		}
		file := cleanPath(it.Source.File)
		content, exists := byPath[file]
		switch {
		case strings.TrimSpace(it.Source.File) == "":
			add(label, ESelfNoSource, "%s names no file; give the run-relative path of the file that holds the quote", label)
			continue
		case !exists:
			add(label, ESelfNoSource, "%s names %s, which does not exist; give the run-relative path of a file you wrote or read", label, it.Source.File)
			continue
		case it.Source.Line < 1:
			add(label, ESelfNoSource, "%s gives no line; give the 1-based line of %s on which the quote begins", label, file)
		}
		if quote == "" {
			continue
		}
		n, ok := norm[file]
		if !ok {
			n = normalize(content)
			norm[file] = n
		}
		starts := n.startLines(quote)
		switch {
		case len(starts) == 0:
			add(label, ESelfQuoteAbsent, "the quote %q is not in %s (compared ignoring white space and quote style, but case-sensitive); copy the exact words from the file, or fix the file first",
				clip(it.Quote, 80), file)
		case it.Source.Line >= 1 && !containsInt(starts, it.Source.Line):
			add(label, ESelfWrongLine, "the quote is in %s but begins on line %s, not line %d; correct the line",
				file, lineList(starts), it.Source.Line)
		}
	}
	for i := range c.Checks {
		if _, ok := first[key{KindCheck, i + 1}]; !ok {
			add(fmt.Sprintf("check %d", i+1), ESelfMissing, "check %d (%s) has no self-assessment item; add one with pass, quote and source",
				i+1, describe(c, constraints, KindCheck, i+1))
		}
	}
	for i := range constraints {
		if _, ok := first[key{KindConstraint, i + 1}]; !ok {
			add(fmt.Sprintf("constraint %d", i+1), ESelfMissing, "constraint %d (%s) has no self-assessment item; add one with pass, quote and source",
				i+1, describe(c, constraints, KindConstraint, i+1))
		}
	}
	return out
}

// cleanPath makes "./a//b.md" and "a/b.md" the same key.
func cleanPath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	return strings.TrimPrefix(path.Clean(p), "./")
}

// describe names a check or constraint briefly, so a message says which one
// without the model having to count.
func describe(c contract.Contract, constraints []string, k ItemKind, n int) string {
	if k == KindConstraint {
		return clip(constraints[n-1], 60)
	}
	ch := c.Checks[n-1]
	switch {
	case ch.Kind == contract.Rubric:
		return "rubric: " + clip(ch.Text, 60)
	case ch.Text != "":
		return fmt.Sprintf("%s %s %q", ch.Kind, ch.Path, clip(ch.Text, 40))
	case ch.Path != "":
		return string(ch.Kind) + " " + ch.Path
	}
	return string(ch.Kind)
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func lineList(ls []int) string {
	var s []string
	for i, l := range ls {
		if i == 5 {
			s = append(s, "…")
			break
		}
		s = append(s, fmt.Sprint(l))
	}
	return strings.Join(s, " or ")
}
