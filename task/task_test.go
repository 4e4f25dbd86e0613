package task

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fractal-harness/fractal/policy"
)

const good = `title: T
model: script:s.yaml
inputs: [inputs/a.csv]
policy: {pool: 2, retry_count: 0, replan: false, model_timeout: 5m}
contracts:
  - name: main
    intent: do it
    checks:
      - {kind: file_exists, path: out.md}
`

// F-D3.5: a task file is the discussion's written outcome: contracts with
// checks, inputs, policy overrides.
func TestParse(t *testing.T) {
	fsys := fstest.MapFS{"inputs/a.csv": {Data: []byte("x,y\n")}}
	spec, err := Parse([]byte(good), "t.yaml", fsys, "/base")
	if err != nil {
		t.Fatal(err)
	}
	tk := spec.Task
	if spec.Model != "script:/base/s.yaml" || len(tk.Contracts) != 1 || !tk.Contracts[0].Contract.IDValid() {
		t.Fatalf("%+v", spec)
	}
	if tk.Inputs[0].Name != "a.csv" || string(tk.Inputs[0].Data) != "x,y\n" {
		t.Fatalf("inputs %+v", tk.Inputs)
	}
	p := tk.Policy
	if p.Pool != 2 || p.RetryCount != 0 || p.Permissions.Replan || !p.Permissions.Reassign || p.MaxDepth != policy.Default().MaxDepth || p.ModelTimeout.Minutes() != 5 {
		t.Fatalf("policy %+v", p)
	}
}

// Bad task files: one clear error naming the file and, for YAML errors,
// the line.
func TestParseErrors(t *testing.T) {
	fsys := fstest.MapFS{"inputs/a.csv": {Data: []byte("x")}}
	cases := []struct{ name, body, want string }{
		{"unknown key", strings.Replace(good, "title: T", "title: T\ncolour: red", 1), "t.yaml:2:"},
		{"wrong type", strings.Replace(good, "pool: 2", "pool: many", 1), "t.yaml:4"},
		{"no contracts", "title: T\n", "no contracts"},
		{"bad check", strings.Replace(good, "path: out.md", "path: /etc/passwd", 1), "contract 1 (main)"},
		{"bad name", strings.Replace(good, "name: main", "name: a/b", 1), "letters, digits"},
		{"missing input", strings.Replace(good, "inputs/a.csv", "inputs/b.csv", 1), "inputs/b.csv"},
		{"escaping input", strings.Replace(good, "inputs/a.csv", "../secret", 1), "../secret"},
		{"bad policy", strings.Replace(good, "pool: 2", "pool: 0", 1), "pool"},
		{"bad mode", strings.Replace(good, "pool: 2", "mode: sometimes", 1), "mode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.body), "t.yaml", fsys, "")
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line containing %q", err, c.want)
			}
		})
	}
}
