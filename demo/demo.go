// Package demo bundles the task, inputs and scripted model of `fractal
// demo`: a one-page leadership brief from three small inputs.
package demo

import "embed"

// Files holds task.yaml, script.yaml and inputs/.
//
//go:embed task.yaml script.yaml inputs
var Files embed.FS
