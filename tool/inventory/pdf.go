package inventory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// maxStream caps what one content stream may decode to.
const maxStream = 64 << 20

var pdfOnce sync.Once

// pdfConfig returns a pdfcpu configuration for reading. pdfcpu otherwise
// creates a configuration folder in the user's home on first use; the
// inventory reads only, needs no user fonts, and must not write outside
// the run, so the folder is switched off (api.DisableConfigDir) once, for
// the whole process, before any pdfcpu call of this package.
func pdfConfig() *model.Configuration {
	pdfOnce.Do(api.DisableConfigDir)
	conf := model.NewDefaultConfiguration()
	conf.Cmd = model.LISTIMAGES
	conf.ValidationMode = model.ValidationRelaxed
	return conf
}

// inspectPDF examines a PDF page by page: characters of text, images, and
// the pages that hold images but no text.
func inspectPDF(ctx context.Context, f *os.File, it *Item) error {
	pd := &PDF{}
	it.PDF = pd
	cut := !endsWithEOF(f, it.Size)

	pc, err := readPDF(io.NewSectionReader(f, 0, it.Size))
	if err != nil {
		switch {
		case errors.Is(err, pdfcpu.ErrWrongPassword):
			pd.Encrypted = true
			it.Problem = "the PDF is encrypted and needs a password to open; its text and images cannot be read"
		case errors.Is(err, pdfcpu.ErrUnsupportedEncryptionFeature):
			pd.Encrypted = true
			it.Problem = "the PDF is encrypted with a method the PDF reader does not support; its text and images cannot be read"
		case cut:
			it.Problem = "the PDF is cut short (it does not end with the %%EOF marker) and could not be read (" + err.Error() + ")"
		default:
			it.Problem = "the PDF is damaged and could not be read (" + err.Error() + ")"
		}
		return nil
	}
	pd.Encrypted = pc.Encrypt != nil
	if pd.Encrypted {
		it.Notes = append(it.Notes, "the PDF is encrypted but opens without a password")
	}
	pd.Version = pc.VersionString()
	if cut {
		appendProblem(it, "the PDF does not end with the %%EOF marker: it may be cut short, and pages or content at its end may be missing")
	}
	if err := api.ValidateContext(pc); err != nil {
		it.Notes = append(it.Notes, "the PDF does not fully follow the PDF standard ("+err.Error()+"); what could be read is listed")
	}
	optimized := true
	if err := api.OptimizeContext(pc); err != nil {
		optimized = false
		it.Notes = append(it.Notes, "the PDF reader could not index its images ("+err.Error()+"); images were counted from the drawing operators instead")
	}
	if fields := pc.Form.ArrayEntry("Fields"); len(fields) > 0 {
		pd.Form = true
	}
	if aa, err := pc.ListAttachments(); err == nil {
		for _, a := range aa {
			name := a.FileName
			if name == "" {
				name = a.ID
			}
			pd.Attachments = append(pd.Attachments, name)
		}
	}

	if pc.PageCount == 0 {
		appendProblem(it, "no page of the PDF could be read")
	}
	for n := 1; n <= pc.PageCount; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		pd.Pages = append(pd.Pages, inspectPage(pc, n, optimized))
	}
	var bad []string
	for _, pg := range pd.Pages {
		if pg.Problem != "" {
			bad = append(bad, fmt.Sprintf("page %d: %s", pg.Number, pg.Problem))
		}
	}
	if len(bad) > 0 {
		appendProblem(it, "some pages could not be examined ("+strings.Join(bad, "; ")+")")
	}
	return nil
}

// readPDF reads a PDF's structure with pdfcpu, turning its internal
// panics into errors.
func readPDF(rs io.ReadSeeker) (pc *model.Context, err error) {
	defer func() {
		if r := recover(); r != nil {
			pc, err = nil, fmt.Errorf("the PDF reader failed: %v", r)
		}
	}()
	return api.ReadContext(rs, pdfConfig())
}

// endsWithEOF reports whether the last KiB of the file holds the %%EOF
// marker every complete PDF ends with.
func endsWithEOF(f *os.File, size int64) bool {
	n := min(size, 1024)
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, size-n); err != nil && err != io.EOF {
		return false
	}
	return bytes.Contains(tail, []byte("%%EOF"))
}

// inspectPage counts one page's text characters and images.
func inspectPage(pc *model.Context, n int, optimized bool) (pg Page) {
	pg.Number = n
	defer func() {
		if r := recover(); r != nil {
			pg.Problem = fmt.Sprintf("the PDF reader failed on it (%v)", r)
		}
	}()
	d, _, inh, err := pc.PageDict(n, true)
	if err != nil || d == nil {
		pg.Problem = fmt.Sprintf("its page object could not be read (%v)", err)
		return pg
	}
	var res types.Dict
	if inh != nil {
		res = inh.Resources
	}
	content, err := pageContent(pc, d, n)
	if err != nil {
		pg.Problem = "its content could not be decoded (" + err.Error() + ")"
	}
	var t pageText
	scanContent(content, fontsOf(pc.XRefTable, res), xobjectsOf(pc.XRefTable, res), &t)
	pg.Characters, pg.InvisibleCharacters, pg.InlineImages = t.chars, t.invisible, t.inlineImages

	pg.Images = t.imageDraws
	if optimized {
		if imgs, err := pdfcpu.ExtractPageImages(pc, n, true); err == nil {
			pg.Images = 0
			for _, img := range imgs {
				if !img.Thumb {
					pg.Images++
				}
			}
		}
	}
	images := pg.Images + pg.InlineImages + t.imageDraws
	pg.ImageOnly = pg.Characters == 0 && images > 0 && pg.Problem == ""
	pg.Blank = pg.Characters == 0 && images == 0 && pg.Problem == ""
	if t.truncated {
		pg.Problem = joinProblem(pg.Problem, "it draws forms nested too deep or in a loop; text inside them was not counted")
	}
	return pg
}

// pageContent returns a page's content. A page's content may be split over
// several streams; pdfcpu.ExtractPageContent joins them without a
// separator, which can glue the last operator of one stream to the first
// of the next, so several streams are decoded and joined here with a line
// break, as ISO 32000-1 (7.8.2) says to read them.
func pageContent(pc *model.Context, d types.Dict, n int) ([]byte, error) {
	o, found := d.Find("Contents")
	if !found || o == nil {
		return nil, nil
	}
	o, err := pc.Dereference(o)
	if err != nil {
		return nil, err
	}
	arr, ok := o.(types.Array)
	if !ok {
		r, err := pdfcpu.ExtractPageContent(pc, n)
		if err != nil {
			return nil, err
		}
		return io.ReadAll(r)
	}
	var out []byte
	for _, e := range arr {
		sd, _, err := pc.DereferenceStreamDict(e)
		if err != nil {
			return out, err
		}
		if sd == nil {
			continue
		}
		if err := sd.DecodeWithLimit(maxStream); err != nil {
			return out, err
		}
		out = append(out, sd.Content...)
		out = append(out, '\n')
	}
	return out, nil
}

// subDict looks up key in a resource dictionary, following references.
func subDict(x *model.XRefTable, res types.Dict, key string) types.Dict {
	if res == nil {
		return nil
	}
	o, found := res.Find(key)
	if !found || o == nil {
		return nil
	}
	d, err := x.DereferenceDict(o)
	if err != nil {
		return nil
	}
	return d
}

// fontsOf tells the bytes per character code of the fonts in res.
func fontsOf(x *model.XRefTable, res types.Dict) textFont {
	fonts := subDict(x, res, "Font")
	return func(name string) int {
		if fonts == nil {
			return 1
		}
		o, found := fonts.Find(name)
		if !found {
			return 1
		}
		fd, err := x.DereferenceDict(o)
		if err != nil || fd == nil {
			return 1
		}
		if st := fd.NameEntry("Subtype"); st != nil && *st == "Type0" {
			return 2
		}
		return 1
	}
}

// xobjectsOf resolves the XObjects in res: images, and forms with their
// decoded content and their own resources (or res, when they have none).
func xobjectsOf(x *model.XRefTable, res types.Dict) xobject {
	xobjs := subDict(x, res, "XObject")
	return func(name string) (*formXObject, bool) {
		if xobjs == nil {
			return nil, false
		}
		o, found := xobjs.Find(name)
		if !found || o == nil {
			return nil, false
		}
		id := 0
		if ref, ok := o.(types.IndirectRef); ok {
			id = ref.ObjectNumber.Value()
		}
		sd, _, err := x.DereferenceStreamDict(o)
		if err != nil || sd == nil {
			return nil, false
		}
		switch st := sd.Dict.NameEntry("Subtype"); {
		case st == nil:
			return nil, false
		case *st == "Image":
			return nil, true
		case *st != "Form":
			return nil, false
		}
		if err := sd.DecodeWithLimit(maxStream); err != nil {
			return nil, false
		}
		formRes := subDict(x, sd.Dict, "Resources")
		if formRes == nil {
			formRes = res
		}
		return &formXObject{
			content: sd.Content,
			fonts:   fontsOf(x, formRes),
			xobjs:   xobjectsOf(x, formRes),
			id:      id,
		}, false
	}
}
