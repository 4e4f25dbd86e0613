package inventory

import (
	"fmt"
	"strconv"
	"strings"
)

// maxListed is how many names a warning spells out before "and N more".
const maxListed = 5

// Risks lists, in plain sentences, what in the file a reading of its text
// or cells would silently miss or get wrong (DA-B2): pages that are only
// images, pictures, charts and objects whose content is in no cell, hidden
// sheets, text that is not UTF-8, CSV rows of the wrong width, and so on.
// The Problem, if any, is not repeated here.
func (it Item) Risks() []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if it.Mismatch != "" {
		add("%s: a program that trusts the name will fail or read nonsense", it.Mismatch)
	}
	switch it.Kind {
	case KindEmpty:
		add("the file is empty")
	case KindBinary:
		if it.Problem == "" {
			add("its content is in an unknown binary format: nothing in it can be read as text")
		}
	case KindSymlink:
		add("it is a symlink to %q; it was not followed, so what it points to was not inventoried", it.Target)
	case KindSpecial:
		add("it is a device, socket or pipe, not a file; it was not read")
	}
	if s := it.Spreadsheet; s != nil {
		out = append(out, spreadsheetRisks(s)...)
	}
	if d := it.Document; d != nil {
		out = append(out, documentRisks(d)...)
	}
	if p := it.Presentation; p != nil {
		out = append(out, presentationRisks(p)...)
	}
	if p := it.PDF; p != nil {
		out = append(out, pdfRisks(p)...)
	}
	if t := it.Text; t != nil {
		out = append(out, textRisks(t, it.Kind)...)
	}
	return out
}

func spreadsheetRisks(s *Spreadsheet) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	for _, sh := range s.Sheets {
		switch sh.State {
		case "hidden":
			add("sheet %q is hidden: a person opening the workbook does not see it, but its data is there", sh.Name)
		case "veryHidden":
			add("sheet %q is very hidden (only a macro or the code editor can show it): a person opening the workbook does not see it, but its data is there", sh.Name)
		}
		if sh.Chartsheet {
			add("sheet %q is a chart sheet: it holds a chart and no cells", sh.Name)
		}
		if n := len(sh.Pictures); n > 0 {
			var ps []string
			for _, p := range sh.Pictures {
				ps = append(ps, pictureLabel(p))
			}
			add("sheet %q holds %s (%s): what %s is in no cell", sh.Name, count(n, "picture"), list(ps), pl(n, "it shows", "they show"))
		}
		if n := len(sh.Charts); n > 0 {
			add("sheet %q holds %s (%s): a chart shows its data as a drawing; read the cells it is drawn from, and its titles and labels, separately", sh.Name, count(n, "chart"), list(sh.Charts))
		}
		if n := len(sh.Objects); n > 0 {
			add("sheet %q holds %s (%s): %s content is in no cell and must be opened on its own", sh.Name, count(n, "embedded object"), list(sh.Objects), pl(n, "its", "their"))
		}
		if sh.TextBoxes > 0 {
			add("sheet %q has %s: %s text is in no cell", sh.Name, count(sh.TextBoxes, "text box"), pl(sh.TextBoxes, "its", "their"))
		}
		if sh.Comments > 0 {
			add("sheet %q has %s: %s text is not in the cells", sh.Name, count(sh.Comments, "cell comment"), pl(sh.Comments, "its", "their"))
		}
		if sh.FormulasNoValue > 0 {
			add("sheet %q has %s with no stored result: a program that reads values without calculating sees empty cells there", sh.Name, count(sh.FormulasNoValue, "formula"))
		}
	}
	if n := len(s.Charts); n > 0 {
		add("the workbook holds %s no sheet shows directly (%s)", count(n, "chart"), list(s.Charts))
	}
	if n := len(s.Objects); n > 0 {
		add("the workbook holds %s no sheet lists (%s): %s content is in no cell", count(n, "embedded object or file"), list(s.Objects), pl(n, "its", "their"))
	}
	if n := len(s.ExternalLinks); n > 0 {
		add("the workbook copies values from %s: those values are as of the last update and may be out of date", count(n, "other workbook"))
	}
	if n := len(s.Linked); n > 0 {
		add("the workbook shows %s it does not contain (%s): %s content is not in the file", count(n, "linked file"), list(s.Linked), pl(n, "its", "their"))
	}
	if s.Macros {
		add("the workbook contains macros: what they compute or change is not visible in the cells")
	}
	return out
}

func pictureLabel(p Picture) string {
	var b strings.Builder
	b.WriteString(p.Cell)
	if p.Name != "" {
		fmt.Fprintf(&b, " %q", p.Name)
	}
	if f := strings.TrimPrefix(strings.ToUpper(p.Format), "."); f != "" {
		b.WriteString(" " + f)
	}
	if p.InCell {
		b.WriteString(" in the cell")
	}
	return b.String()
}

func documentRisks(d *Document) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	pics := len(d.Media)
	switch {
	case d.TextParagraphs == 0 && (pics > 0 || d.Drawings > 0):
		add("the document has no text, only pictures or drawings: it is probably a scan; its content cannot be read as text")
	case pics > 0:
		add("the document holds %s (%s): what %s is not in its text", count(pics, "picture"), list(partNames(d.Media)), pl(pics, "it shows", "they show"))
	}
	if n := len(d.Embeddings); n > 0 {
		add("the document holds %s (%s): %s content is not in its text and must be opened on its own", count(n, "embedded object or file"), list(partNames(d.Embeddings)), pl(n, "its", "their"))
	}
	if n := len(d.Charts); n > 0 {
		add("the document holds %s: a chart shows its data as a drawing, not as text", count(n, "chart"))
	}
	if n := len(d.Linked); n > 0 {
		add("the document shows %s it does not contain (%s)", count(n, "linked file"), list(d.Linked))
	}
	if d.Truncated {
		add("the document text is larger than %s; only its start was counted", humanSize(MaxXMLPart))
	}
	if d.Macros {
		add("the document contains macros")
	}
	return out
}

func presentationRisks(p *Presentation) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	var imageOnly, hidden []int
	for _, s := range p.Slides {
		if s.ImageOnly {
			imageOnly = append(imageOnly, s.Number)
		}
		if s.Hidden {
			hidden = append(hidden, s.Number)
		}
	}
	if len(imageOnly) > 0 {
		add("%s only pictures and no text: what %s cannot be read as text", plural(len(imageOnly), "slide %s holds", "slides %s hold", ranges(imageOnly)), pl(len(imageOnly), "it says", "they say"))
	}
	if len(hidden) > 0 {
		add("%s: %s", plural(len(hidden), "slide %s is hidden", "slides %s are hidden", ranges(hidden)),
			pl(len(hidden), "it is skipped in the show, but its content is there", "they are skipped in the show, but their content is there"))
	}
	if n := len(p.Media); n > 0 && len(imageOnly) == 0 {
		add("the presentation holds %s: what %s is not in its text", count(n, "picture or media file"), pl(n, "it shows", "they show"))
	}
	if n := len(p.Embeddings); n > 0 {
		add("the presentation holds %s (%s): %s content is not in its text and must be opened on its own", count(n, "embedded object or file"), list(partNames(p.Embeddings)), pl(n, "its", "their"))
	}
	if n := len(p.Charts); n > 0 {
		add("the presentation holds %s: a chart shows its data as a drawing, not as text", count(n, "chart"))
	}
	if n := len(p.Linked); n > 0 {
		add("the presentation shows %s it does not contain (%s)", count(n, "linked file"), list(p.Linked))
	}
	if p.Macros {
		add("the presentation contains macros")
	}
	return out
}

func pdfRisks(p *PDF) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	var imageOnly, blank, ocr []int
	for _, pg := range p.Pages {
		switch {
		case pg.ImageOnly:
			imageOnly = append(imageOnly, pg.Number)
		case pg.Blank:
			blank = append(blank, pg.Number)
		case pg.Characters > 0 && pg.InvisibleCharacters == pg.Characters:
			ocr = append(ocr, pg.Number)
		}
	}
	if len(imageOnly) > 0 {
		add("%s images and no text (%d of %d pages): %s, whose text cannot be read without OCR",
			plural(len(imageOnly), "page %s holds only", "pages %s hold only", ranges(imageOnly)), len(imageOnly), len(p.Pages),
			pl(len(imageOnly), "a scanned page", "scanned pages"))
	}
	if len(blank) > 0 {
		add("%s neither text nor images: empty, or the text is drawn as shapes, which cannot be read either", plural(len(blank), "page %s has", "pages %s have", ranges(blank)))
	}
	if len(ocr) > 0 {
		add("%s only invisible text over the page (an OCR layer on a scan): that text was recognised by a machine and may have errors", plural(len(ocr), "page %s has", "pages %s have", ranges(ocr)))
	}
	if p.Form {
		add("the PDF has form fields: values typed into them are not part of the page text counted here")
	}
	if n := len(p.Attachments); n > 0 {
		add("the PDF carries %s (%s): %s", count(n, "attached file"), list(p.Attachments),
			pl(n, "it is not part of its pages and must be opened on its own", "they are not part of its pages and must be opened on their own"))
	}
	return out
}

func textRisks(t *Text, k Kind) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	switch t.Encoding {
	case EncodingUnknown:
		add("the text is not UTF-8 (%s %s not, the first on line %d): it is in another encoding, probably Windows-1252 or Latin-1; a program that assumes UTF-8 garbles or refuses it",
			count(t.InvalidBytes, "byte"), pl(t.InvalidBytes, "is", "are"), t.FirstInvalidLine)
	case EncodingUTF16LE, EncodingUTF16BE:
		add("the text is %s, not UTF-8: many programs take it for binary data", t.Encoding)
	}
	if t.NUL {
		add("the text holds NUL bytes: some programs stop reading at the first")
	}
	c := t.CSV
	if c == nil {
		return out
	}
	if t.BOM && t.Encoding == EncodingUTF8 {
		add("the file starts with a byte-order mark: some programs keep it as part of the first column's name")
	}
	if k == KindCSV && c.Separator != "," {
		add("the fields are separated by %s, not commas: a program expecting commas sees a single column", sepName(c.Separator))
	}
	if c.RaggedRows > 0 {
		var ex []string
		for _, r := range c.RaggedExamples {
			ex = append(ex, fmt.Sprintf("line %d: %s", r.Line, count(r.Fields, "field")))
		}
		add("%d of %d rows %s a different number of fields than the header's %d (%s): columns may be shifted or cut",
			c.RaggedRows, c.Records-1, pl(c.RaggedRows, "has", "have"), c.HeaderColumns, list(ex))
	}
	if c.ParseError != "" {
		add("reading the rows stopped at %s: the rows after it were not checked", c.ParseError)
	}
	return out
}

func sepName(s string) string {
	switch s {
	case "\t":
		return "tabs"
	case ";":
		return "semicolons"
	case "|":
		return "vertical bars"
	}
	return strconv.Quote(s)
}

// count writes "1 picture", "3 pictures".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if i := strings.Index(noun, " or "); i > 0 { // "embedded object or file"
		return count(n, noun[:i]) + " or " + strings.TrimPrefix(count(n, noun[i+4:]), strconv.Itoa(n)+" ")
	}
	if strings.HasSuffix(noun, "x") || strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// pl picks the singular or plural wording.
func pl(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// plural picks the singular or plural sentence start and fills in what.
func plural(n int, one, many, what string) string {
	if n == 1 {
		return fmt.Sprintf(one, what)
	}
	return fmt.Sprintf(many, what)
}

// list joins names, up to maxListed of them.
func list(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(names)-maxListed)
}

// ranges writes page or slide numbers as "2, 5-7, 9".
func ranges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.Itoa(ns[i]))
		case j == i+1:
			parts = append(parts, strconv.Itoa(ns[i]), strconv.Itoa(ns[j]))
		default:
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
