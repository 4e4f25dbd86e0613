package inventory

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// walkXML streams the XML in r to fn, token by token, skipping the
// mc:Fallback branches of markup-compatibility blocks (they repeat the
// mc:Choice branch in an older form, and would count everything twice).
func walkXML(ctx context.Context, r io.Reader, fn func(tok xml.Token) error) error {
	dec := xml.NewDecoder(r)
	dec.Strict = false
	for n := 0; ; n++ {
		if n%8192 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "Fallback" && strings.Contains(se.Name.Space, "markup-compatibility") {
			if err := dec.Skip(); err != nil {
				return err
			}
			continue
		}
		if err := fn(tok); err != nil {
			return err
		}
	}
}

// inNS reports whether a name is in the namespace whose URI ends in one of
// the given suffixes (transitional and strict Office Open XML differ in
// the prefix of the URI only).
func inNS(n xml.Name, suffixes ...string) bool {
	for _, s := range suffixes {
		if strings.HasSuffix(n.Space, s) {
			return true
		}
	}
	return false
}

var (
	nsWord    = []string{"wordprocessingml/2006/main", "wordprocessingml/main"}
	nsDrawing = []string{"drawingml/2006/main", "drawingml/main"}
	nsPres    = []string{"presentationml/2006/main", "presentationml/main"}
)

// visible counts the characters of s that are not white space.
func visible(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// inspectDOCX examines a Word document: the paragraphs of its main part
// that hold text, and the media, embedded objects and charts it carries.
func inspectDOCX(ctx context.Context, p *pkg, main string, it *Item) error {
	d := &Document{
		Media:      p.under(path.Dir(main) + "/media/"),
		Embeddings: p.under(path.Dir(main) + "/embeddings/"),
		Charts:     namesUnder(p, path.Dir(main)+"/charts/", "chart"),
		Linked:     p.linked(),
		Macros:     p.has(path.Dir(main) + "/vbaProject.bin"),
	}
	it.Document = d
	r, cut, err := p.open(main)
	if err != nil {
		return fmt.Errorf("the document text could not be read: %v", err)
	}
	defer r.Close()
	d.Truncated = cut
	var (
		paras  []int // visible characters of each open paragraph
		inText int   // depth inside w:t
	)
	err = walkXML(ctx, r, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			if !inNS(t.Name, nsWord...) {
				return nil
			}
			switch t.Name.Local {
			case "p":
				paras = append(paras, 0)
			case "t":
				inText++
			case "tbl":
				d.Tables++
			case "drawing", "pict", "object":
				d.Drawings++
			}
		case xml.EndElement:
			if !inNS(t.Name, nsWord...) {
				return nil
			}
			switch t.Name.Local {
			case "p":
				if len(paras) == 0 {
					return nil
				}
				d.Paragraphs++
				if paras[len(paras)-1] > 0 {
					d.TextParagraphs++
				}
				paras = paras[:len(paras)-1]
			case "t":
				inText--
			}
		case xml.CharData:
			if inText > 0 {
				n := visible(string(t))
				d.Characters += n
				if len(paras) > 0 {
					paras[len(paras)-1] += n
				}
			}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the document text (%s) could not be read to the end: %v", main, err)
	}
	return nil
}

// inspectPPTX examines a presentation: each slide in show order, with its
// text, pictures, charts and objects, and its speaker notes.
func inspectPPTX(ctx context.Context, p *pkg, main string, it *Item) error {
	dir := path.Dir(main) + "/"
	pr := &Presentation{
		Media:      p.under(dir + "media/"),
		Embeddings: p.under(dir + "embeddings/"),
		Charts:     namesUnder(p, dir+"charts/", "chart"),
		Linked:     p.linked(),
		Macros:     p.has(dir + "vbaProject.bin"),
	}
	it.Presentation = pr
	slides, err := slideOrder(ctx, p, main)
	if err != nil {
		return err
	}
	var problems []string
	for i, part := range slides {
		s := Slide{Number: i + 1, Part: part}
		if err := inspectSlide(ctx, p, &s); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			problems = append(problems, fmt.Sprintf("slide %d could not be read (%v)", s.Number, err))
		}
		if s.HasNotes {
			pr.Notes++
		}
		pr.Slides = append(pr.Slides, s)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// slideOrder lists the slide parts in show order: the presentation's slide
// list, through its relationships; failing that, the slide parts sorted by
// their number.
func slideOrder(ctx context.Context, p *pkg, main string) ([]string, error) {
	rs, err := p.rels(main)
	if err == nil {
		byID := map[string]string{}
		for _, r := range rs {
			if relIs(r, "slide") && !r.External {
				byID[r.ID] = r.Target
			}
		}
		var ids []string
		if rc, _, err := p.open(main); err == nil {
			err = walkXML(ctx, rc, func(tok xml.Token) error {
				if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "sldId" {
					for _, a := range se.Attr {
						if a.Name.Local == "id" && strings.Contains(a.Name.Space, "relationships") {
							ids = append(ids, a.Value)
						}
					}
				}
				return nil
			})
			rc.Close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var out []string
			for _, id := range ids {
				if t, ok := byID[id]; ok && p.has(t) {
					out = append(out, t)
				}
			}
			if err == nil && len(out) > 0 {
				return out, nil
			}
		}
	}
	var out []string
	for _, pt := range p.under(path.Dir(main) + "/slides/") {
		if m := path.Base(pt.Name); strings.HasPrefix(m, "slide") && strings.HasSuffix(m, ".xml") && path.Dir(pt.Name) == path.Dir(main)+"/slides" {
			out = append(out, pt.Name)
		}
	}
	num := func(s string) int {
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(path.Base(s), "slide"), ".xml"))
		return n
	}
	sort.Slice(out, func(i, j int) bool { return num(out[i]) < num(out[j]) })
	return out, nil
}

// inspectSlide counts a slide's text, pictures, charts and objects.
func inspectSlide(ctx context.Context, p *pkg, s *Slide) error {
	if rs, err := p.rels(s.Part); err == nil {
		for _, r := range rs {
			if relIs(r, "notesSlide") {
				s.HasNotes = true
			}
		}
	}
	r, _, err := p.open(s.Part)
	if err != nil {
		return err
	}
	defer r.Close()
	inText := 0
	err = walkXML(ctx, r, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case t.Name.Local == "sld" && inNS(t.Name, nsPres...):
				for _, a := range t.Attr {
					if a.Name.Local == "show" && (a.Value == "0" || a.Value == "false") {
						s.Hidden = true
					}
				}
			case t.Name.Local == "t" && inNS(t.Name, nsDrawing...):
				inText++
			case t.Name.Local == "pic" && inNS(t.Name, nsPres...):
				s.Pictures++
			case t.Name.Local == "chart" && strings.Contains(t.Name.Space, "chart"):
				s.Charts++
			case t.Name.Local == "oleObj" && inNS(t.Name, nsPres...):
				s.Objects++
			}
		case xml.EndElement:
			if t.Name.Local == "t" && inNS(t.Name, nsDrawing...) {
				inText--
			}
		case xml.CharData:
			if inText > 0 {
				s.Characters += visible(string(t))
			}
		}
		return nil
	})
	s.ImageOnly = s.Characters == 0 && s.Pictures > 0
	return err
}
