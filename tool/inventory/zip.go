package inventory

import (
	"archive/zip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// MaxXMLPart is the most the inventory decompresses of one XML part it
// reads (a document body, a slide, a drawing): a guard against a zip bomb.
// Counts from a part cut there are lower bounds, and the item says so.
const MaxXMLPart = 64 << 20

// pkg is an open zip archive, an Office Open XML package or any other.
type pkg struct {
	zr     *zip.Reader
	byName map[string]*zip.File
	types  map[string]string // part name (no leading "/") -> content type, from [Content_Types].xml
}

func openPkg(f *os.File, size int64) (*pkg, error) {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return nil, err
	}
	p := &pkg{zr: zr, byName: map[string]*zip.File{}}
	for _, zf := range zr.File {
		p.byName[zf.Name] = zf
	}
	return p, nil
}

func (p *pkg) has(name string) bool { _, ok := p.byName[name]; return ok }

// parts lists the archive's members, sorted by name, folders left out.
func (p *pkg) parts() []Part {
	out := make([]Part, 0, len(p.zr.File))
	for _, zf := range p.zr.File {
		if strings.HasSuffix(zf.Name, "/") {
			continue
		}
		out = append(out, Part{Name: zf.Name, Size: int64(zf.UncompressedSize64), Compressed: int64(zf.CompressedSize64)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// under lists the parts in folder dir (for example "word/media/"),
// subfolders included.
func (p *pkg) under(dir string) []Part {
	var out []Part
	for _, pt := range p.parts() {
		if strings.HasPrefix(pt.Name, dir) {
			out = append(out, pt)
		}
	}
	return out
}

// open opens a part for reading, cut at MaxXMLPart; cut reports whether
// the part is bigger than that.
func (p *pkg) open(name string) (r io.ReadCloser, cut bool, err error) {
	zf, ok := p.byName[name]
	if !ok {
		return nil, false, fmt.Errorf("part %s is missing", name)
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, false, fmt.Errorf("part %s: %w", name, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(rc, MaxXMLPart), rc}, zf.UncompressedSize64 > MaxXMLPart, nil
}

// readAll reads a small part whole (relationships, content types, the
// workbook and presentation lists).
func (p *pkg) readAll(name string) ([]byte, error) {
	r, cut, err := p.open(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if cut {
		return nil, fmt.Errorf("part %s is larger than %s", name, humanSize(MaxXMLPart))
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("part %s: %w", name, err)
	}
	return b, nil
}

// checkCRC reads every member to the end, so that a damaged or cut-short
// archive shows up even when its directory is intact. It stops at the
// first damaged member.
func (p *pkg) checkCRC(ctx context.Context) error {
	for _, zf := range p.zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		if strings.HasSuffix(zf.Name, "/") {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return fmt.Errorf("part %s: %w", zf.Name, err)
		}
		_, err = io.Copy(io.Discard, io.LimitReader(rc, MaxInspectSize))
		rc.Close()
		if err != nil {
			return fmt.Errorf("part %s: %w", zf.Name, err)
		}
	}
	return nil
}

// rel is one relationship of an Office Open XML part.
type rel struct {
	ID       string
	Type     string // full URI; compare with relIs
	Target   string // resolved part name, or the URI as written when External
	External bool
}

// relIs reports whether a relationship type URI ends in the given kind,
// such as "chart" or "image", whatever the namespace (transitional or
// strict).
func relIs(r rel, kind string) bool { return strings.HasSuffix(r.Type, "/"+kind) }

// rels reads the relationships of part ("" for the package itself). A
// part without relationships has none; a damaged relationships part is an
// error.
func (p *pkg) rels(part string) ([]rel, error) {
	dir, base := path.Split(part)
	name := dir + "_rels/" + base + ".rels"
	if !p.has(name) {
		return nil, nil
	}
	b, err := p.readAll(name)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Rels []struct {
			ID         string `xml:"Id,attr"`
			Type       string `xml:"Type,attr"`
			Target     string `xml:"Target,attr"`
			TargetMode string `xml:"TargetMode,attr"`
		} `xml:"Relationship"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("part %s: %w", name, err)
	}
	out := make([]rel, 0, len(doc.Rels))
	for _, r := range doc.Rels {
		x := rel{ID: r.ID, Type: r.Type, Target: r.Target, External: strings.EqualFold(r.TargetMode, "External")}
		if !x.External {
			x.Target = resolve(dir, r.Target)
		}
		out = append(out, x)
	}
	return out, nil
}

// resolve turns a relationship target into a part name: relative to the
// source part's folder, or from the package root when it starts with "/".
func resolve(dir, target string) string {
	if strings.HasPrefix(target, "/") {
		return strings.TrimPrefix(path.Clean(target), "/")
	}
	return strings.TrimPrefix(path.Clean("/"+dir+target), "/")
}

// contentTypes reads [Content_Types].xml: the overrides by part name.
func (p *pkg) contentTypes() error {
	p.types = map[string]string{}
	if !p.has("[Content_Types].xml") {
		return nil
	}
	b, err := p.readAll("[Content_Types].xml")
	if err != nil {
		return err
	}
	var doc struct {
		Overrides []struct {
			PartName    string `xml:"PartName,attr"`
			ContentType string `xml:"ContentType,attr"`
		} `xml:"Override"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("part [Content_Types].xml: %w", err)
	}
	for _, o := range doc.Overrides {
		p.types[strings.TrimPrefix(o.PartName, "/")] = o.ContentType
	}
	return nil
}

// mainPart finds the package's main part through its officeDocument
// relationship, falling back on the usual names.
func (p *pkg) mainPart() string {
	if rs, err := p.rels(""); err == nil {
		for _, r := range rs {
			if relIs(r, "officeDocument") && !r.External && p.has(r.Target) {
				return r.Target
			}
		}
	}
	for _, n := range []string{"xl/workbook.xml", "word/document.xml", "ppt/presentation.xml"} {
		if p.has(n) {
			return n
		}
	}
	return ""
}

// linked lists every relationship in the package that points outside the
// file, hyperlinks and templates aside: linked pictures, objects and data
// whose content the file does not hold.
func (p *pkg) linked() []string {
	seen := map[string]bool{}
	var out []string
	for _, zf := range p.zr.File {
		dir, base := path.Split(zf.Name) // "x/_rels/y.rels" -> "x/_rels/", "y.rels"
		if !strings.HasSuffix(base, ".rels") || path.Base(dir) != "_rels" {
			continue
		}
		part := strings.TrimPrefix(path.Dir(path.Clean(dir))+"/", "./") + strings.TrimSuffix(base, ".rels")
		rs, err := p.rels(part)
		if err != nil {
			continue
		}
		for _, r := range rs {
			// A hyperlink is not content; a Word document's template
			// path is not either.
			if r.External && !relIs(r, "hyperlink") && !relIs(r, "attachedTemplate") && !seen[r.Target] {
				seen[r.Target] = true
				out = append(out, r.Target)
			}
		}
	}
	sort.Strings(out)
	return out
}

// inspectZip examines a zip archive: its parts, and an Office file inside
// it when there is one.
func inspectZip(ctx context.Context, f *os.File, it *Item) error {
	p, err := openPkg(f, it.Size)
	if err != nil {
		it.Problem = "this zip archive is damaged or cut short (" + zipErr(err) + "); nothing in it can be read"
		if kinds, label := expected(it.Path); len(kinds) > 0 && isOffice(kinds[0]) {
			// It starts like the Office file its name says it is: call it
			// that, damaged, rather than a mismatch.
			it.Kind = kinds[0]
			it.Problem = "this " + strings.TrimPrefix(strings.TrimPrefix(label, "an "), "a ") +
				" (a zip archive inside) is damaged or cut short (" + zipErr(err) + "); nothing in it can be read"
		}
		return nil
	}
	it.Parts = p.parts()
	if err := p.checkCRC(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		it.Problem = "this archive is damaged: " + zipErr(err) + "; what the inventory lists below may be incomplete"
	}
	_ = p.contentTypes() // used only to tell macros; a damaged one is not fatal
	main := p.mainPart()
	macro := strings.Contains(strings.ToLower(p.types[main]), "macroenabled")
	var inspectErr error
	switch {
	case strings.HasPrefix(main, "xl/"):
		it.Kind = pick(macro || p.has("xl/vbaProject.bin"), KindXLSM, KindXLSX)
		inspectErr = inspectXLSX(ctx, f, p, main, it)
	case strings.HasPrefix(main, "word/"):
		it.Kind = pick(macro || p.has("word/vbaProject.bin"), KindDOCM, KindDOCX)
		inspectErr = inspectDOCX(ctx, p, main, it)
	case strings.HasPrefix(main, "ppt/"):
		it.Kind = pick(macro || p.has("ppt/vbaProject.bin"), KindPPTM, KindPPTX)
		inspectErr = inspectPPTX(ctx, p, main, it)
	}
	if inspectErr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		appendProblem(it, inspectErr.Error())
	}
	return nil
}

func isOffice(k Kind) bool {
	switch k {
	case KindXLSX, KindXLSM, KindDOCX, KindDOCM, KindPPTX, KindPPTM:
		return true
	}
	return false
}

func pick(cond bool, a, b Kind) Kind {
	if cond {
		return a
	}
	return b
}

// appendProblem adds a sentence to the item's Problem.
func appendProblem(it *Item, s string) {
	if it.Problem == "" {
		it.Problem = s
		return
	}
	it.Problem += "; " + s
}

// zipErr words an archive/zip error for a person.
func zipErr(err error) string {
	switch {
	case errors.Is(err, zip.ErrFormat):
		return "not a valid zip archive"
	case errors.Is(err, zip.ErrChecksum):
		return "a part fails its checksum"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the file ends too early"
	case errors.Is(err, zip.ErrAlgorithm):
		return "a part uses a compression method that cannot be read"
	}
	return err.Error()
}

// partNames returns the names of parts.
func partNames(ps []Part) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// namesUnder lists part names in dir matching the prefix of the file name
// (for example "xl/charts/" and "chart" match xl/charts/chart1.xml but not
// xl/charts/style1.xml).
func namesUnder(p *pkg, dir, prefix string) []string {
	var out []string
	for _, pt := range p.under(dir) {
		base := path.Base(pt.Name)
		if strings.HasPrefix(base, prefix) && !strings.Contains(strings.TrimPrefix(pt.Name, dir), "/") {
			out = append(out, pt.Name)
		}
	}
	return out
}
