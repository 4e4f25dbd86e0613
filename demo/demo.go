// Package demo bundles `fractal demo`: a one-page leadership brief from
// three small inputs, starting from the person's words (task.md), with a
// scripted model playing every role. task.yaml is the same task as agreed
// contracts, for `fractal run demo/task.yaml`.
package demo

import "embed"

// Files holds task.md, task.yaml, script.yaml and inputs/.
//
//go:embed task.md task.yaml script.yaml inputs
var Files embed.FS
