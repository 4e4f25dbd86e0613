package inventory

import (
	"bytes"
	"image"
	_ "image/gif" // register decoders for DecodeConfig
	_ "image/jpeg"
	_ "image/png"
	"io"
	"os"
)

// inspectImage records an image file's format and, when a decoder for it
// is linked in (PNG, JPEG, GIF, WebP), its size in pixels.
func inspectImage(f *os.File, it *Item, format string) {
	it.Image = &Image{Format: format}
	if c, _, err := image.DecodeConfig(io.NewSectionReader(f, 0, it.Size)); err == nil {
		it.Image.Width, it.Image.Height = c.Width, c.Height
	} else if format == "PNG" || format == "JPEG" || format == "GIF" {
		it.Problem = "this " + format + " image could not be decoded (it may be damaged or cut short)"
	}
}

// imageSize is the size in pixels of an image held in b, if known.
func imageSize(b []byte) (w, h int) {
	if c, _, err := image.DecodeConfig(bytes.NewReader(b)); err == nil {
		return c.Width, c.Height
	}
	return 0, 0
}
