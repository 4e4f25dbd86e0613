//go:build tools

package tools

import (
	_ "github.com/goccy/go-yaml"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/goleak"
	_ "pgregory.net/rapid"
)
