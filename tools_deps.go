//go:build tools

// Package fractal pins modules that packages under construction use, so
// concurrent work does not race on go.mod. Removed once they are imported.
package fractal

import (
	_ "github.com/anthropics/anthropic-sdk-go/v2"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/pdfcpu/pdfcpu/pkg/api"
	_ "github.com/xuri/excelize/v2"
)
