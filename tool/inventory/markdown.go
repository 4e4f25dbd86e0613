package inventory

import (
	"fmt"
	"strings"
)

// maxParts is how many zip parts the details of one file list.
const maxParts = 200

// Markdown writes the inventory.md page for items: a header, the warnings
// (every Problem and every risk, see Item.Risks), a table of the files
// with their key facts, and a section of details per file.
func Markdown(items []Item) string {
	var b strings.Builder
	writeSummary(&b, items)
	writeWarnings(&b, items)
	writeTable(&b, items)
	writeDetails(&b, items)
	return b.String()
}

func writeSummary(b *strings.Builder, items []Item) {
	var total int64
	files := 0
	for _, it := range items {
		total += it.Size
		if it.Kind != KindFolder {
			files++
		}
	}
	b.WriteString("# Inventory of the input files\n\n")
	fmt.Fprintf(b, "%s, %s in all. For each file: what it is (by its content, not its name), "+
		"what it holds, and what a reading of its text or cells alone would miss. "+
		"Read the warnings before relying on any of these files.\n\n", count(files, "file"), humanSize(total))
}

// markdownParts splits Markdown's output so that a caller with a size
// limit can keep the warnings and the table and drop the details.
func markdownParts(items []Item) (head, details string) {
	var b strings.Builder
	writeSummary(&b, items)
	writeWarnings(&b, items)
	writeTable(&b, items)
	head = b.String()
	b.Reset()
	writeDetails(&b, items)
	return head, b.String()
}

func writeWarnings(b *strings.Builder, items []Item) {
	b.WriteString("## Warnings\n\n")
	n := 0
	for _, it := range items {
		if it.Problem != "" {
			fmt.Fprintf(b, "- %s — **could not be fully read**: %s.\n", code(it.Path), sentence(it.Problem))
			n++
		}
		for _, r := range it.Risks() {
			fmt.Fprintf(b, "- %s — %s.\n", code(it.Path), sentence(r))
			n++
		}
	}
	if n == 0 {
		b.WriteString("None: every file was read, and nothing in them is hidden from a reading of their text or cells.\n")
	}
	b.WriteString("\n")
}

func writeTable(b *strings.Builder, items []Item) {
	b.WriteString("## Files\n\n")
	if len(items) == 0 {
		b.WriteString("(no files)\n\n")
		return
	}
	b.WriteString("| File | Type | Size | Key facts |\n|---|---|---|---|\n")
	for _, it := range items {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", cell(code(it.Path)), cell(kindLabel(&it)), sizeCell(it), cell(keyFacts(it)))
	}
	b.WriteString("\n")
}

func sizeCell(it Item) string {
	switch it.Kind {
	case KindSymlink, KindSpecial, KindFolder:
		return "—"
	}
	return humanSize(it.Size)
}

// keyFacts is the one-line summary of a file for the table.
func keyFacts(it Item) string {
	var f []string
	if it.Problem != "" {
		f = append(f, "NOT FULLY READ")
	}
	switch {
	case it.Spreadsheet != nil:
		s := it.Spreadsheet
		hidden, pics, charts, objs, formulas := 0, 0, len(s.Charts), len(s.Objects), 0
		for _, sh := range s.Sheets {
			if sh.State != "visible" {
				hidden++
			}
			pics += len(sh.Pictures)
			charts += len(sh.Charts)
			objs += len(sh.Objects)
			formulas += sh.Formulas
		}
		sheets := count(len(s.Sheets), "sheet")
		if hidden > 0 {
			sheets += fmt.Sprintf(" (%d hidden)", hidden)
		}
		f = append(f, sheets)
		if formulas > 0 {
			f = append(f, count(formulas, "formula"))
		}
		for _, x := range []struct {
			n    int
			noun string
		}{{pics, "picture"}, {charts, "chart"}, {objs, "embedded object"}} {
			if x.n > 0 {
				f = append(f, count(x.n, x.noun))
			}
		}
	case it.Document != nil:
		d := it.Document
		f = append(f, count(d.TextParagraphs, "paragraph")+" with text")
		if d.Tables > 0 {
			f = append(f, count(d.Tables, "table"))
		}
		if n := len(d.Media); n > 0 {
			f = append(f, count(n, "picture"))
		}
		if n := len(d.Embeddings); n > 0 {
			f = append(f, count(n, "embedded object"))
		}
	case it.Presentation != nil:
		p := it.Presentation
		s := count(len(p.Slides), "slide")
		only := 0
		for _, sl := range p.Slides {
			if sl.ImageOnly {
				only++
			}
		}
		if only > 0 {
			s += fmt.Sprintf(" (%d only pictures)", only)
		}
		f = append(f, s)
		if p.Notes > 0 {
			f = append(f, fmt.Sprintf("notes on %d", p.Notes))
		}
		if n := len(p.Embeddings); n > 0 {
			f = append(f, count(n, "embedded object"))
		}
	case it.PDF != nil:
		p := it.PDF
		if p.Encrypted {
			f = append(f, "encrypted")
		}
		if len(p.Pages) > 0 {
			text, only := 0, 0
			for _, pg := range p.Pages {
				if pg.Characters > 0 {
					text++
				}
				if pg.ImageOnly {
					only++
				}
			}
			s := count(len(p.Pages), "page") + fmt.Sprintf(": %d with text", text)
			if only > 0 {
				s += fmt.Sprintf(", %d only images (scanned)", only)
			}
			f = append(f, s)
		}
	case it.Text != nil:
		t := it.Text
		f = append(f, count(t.Lines, "line"))
		if c := t.CSV; c != nil {
			f = append(f, count(c.HeaderColumns, "column"))
			if c.RaggedRows > 0 {
				f = append(f, count(c.RaggedRows, "ragged row"))
			}
		}
		f = append(f, t.Encoding)
	case it.Image != nil:
		if it.Image.Width > 0 {
			f = append(f, fmt.Sprintf("%d×%d pixels", it.Image.Width, it.Image.Height))
		}
	case it.Kind == KindSymlink:
		f = append(f, "→ "+it.Target+" (not followed)")
	}
	if it.Kind == KindZip && len(it.Parts) > 0 {
		f = append(f, count(len(it.Parts), "part"))
	}
	if it.Mismatch != "" {
		f = append(f, "name does not match content")
	}
	return strings.Join(f, "; ")
}

func writeDetails(b *strings.Builder, items []Item) {
	b.WriteString("## Details\n")
	for _, it := range items {
		fmt.Fprintf(b, "\n### %s\n\n", code(it.Path))
		fmt.Fprintf(b, "- Type: %s\n", kindLabel(&it))
		switch it.Kind {
		case KindSymlink:
			fmt.Fprintf(b, "- Points to: %s (not followed)\n", code(it.Target))
		case KindSpecial, KindFolder:
		default:
			if it.Size < 1024 {
				fmt.Fprintf(b, "- Size: %s\n", humanSize(it.Size))
			} else {
				fmt.Fprintf(b, "- Size: %s (%d bytes)\n", humanSize(it.Size), it.Size)
			}
		}
		if it.Problem != "" {
			fmt.Fprintf(b, "- Problem: %s.\n", sentence(it.Problem))
		}
		if it.Mismatch != "" {
			fmt.Fprintf(b, "- Name and content differ: %s.\n", it.Mismatch)
		}
		for _, n := range it.Notes {
			fmt.Fprintf(b, "- Note: %s.\n", n)
		}
		switch {
		case it.Spreadsheet != nil:
			spreadsheetDetails(b, it.Spreadsheet)
		case it.Document != nil:
			documentDetails(b, it.Document)
		case it.Presentation != nil:
			presentationDetails(b, it.Presentation)
		case it.PDF != nil:
			pdfDetails(b, it.PDF)
		case it.Text != nil:
			textDetails(b, it.Text)
		case it.Image != nil && it.Image.Width > 0:
			fmt.Fprintf(b, "- Pixels: %d × %d\n", it.Image.Width, it.Image.Height)
		}
		if len(it.Parts) > 0 {
			partsDetails(b, it.Parts)
		}
	}
}

func spreadsheetDetails(b *strings.Builder, s *Spreadsheet) {
	b.WriteString("\n| Sheet | State | Used range | Recorded range | Rows | Columns | Cells | Formulas | Formulas without result | Merged ranges | Pictures | Charts | Objects | Text boxes | Comments |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, sh := range s.Sheets {
		state := sh.State
		if sh.Chartsheet {
			state += ", chart sheet"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n",
			cell(sh.Name), state, orDash(sh.UsedRange), orDash(sh.Dimension), sh.Rows, sh.Columns, sh.Cells,
			sh.Formulas, sh.FormulasNoValue, sh.MergedCells, len(sh.Pictures), len(sh.Charts), len(sh.Objects), sh.TextBoxes, sh.Comments)
	}
	b.WriteString("\n")
	if !s.FormulasChecked {
		fmt.Fprintf(b, "- Formulas were looked for in the first %d cells only; the formula counts are lower bounds.\n", MaxFormulaCells)
	}
	for _, sh := range s.Sheets {
		if sh.Problem != "" {
			fmt.Fprintf(b, "- Sheet %s: %s.\n", code(sh.Name), sentence(sh.Problem))
		}
		for _, p := range sh.Pictures {
			fmt.Fprintf(b, "- Picture on sheet %s at %s", code(sh.Name), p.Cell)
			if p.InCell {
				b.WriteString(" (in the cell)")
			}
			if p.Name != "" {
				fmt.Fprintf(b, ", named %q", p.Name)
			}
			if p.AltText != "" {
				fmt.Fprintf(b, ", alt text %q", p.AltText)
			}
			fmt.Fprintf(b, ": %s, %s", strings.TrimPrefix(strings.ToUpper(p.Format), "."), humanSize(int64(p.Bytes)))
			if p.Width > 0 {
				fmt.Fprintf(b, ", %d×%d pixels", p.Width, p.Height)
			}
			if p.Part != "" {
				fmt.Fprintf(b, ", stored as %s", code(p.Part))
			}
			b.WriteString("\n")
		}
		for _, c := range sh.Charts {
			fmt.Fprintf(b, "- Chart on sheet %s: %s\n", code(sh.Name), code(c))
		}
		for _, o := range sh.Objects {
			fmt.Fprintf(b, "- Embedded object on sheet %s: %s\n", code(sh.Name), code(o))
		}
	}
	for _, c := range s.Charts {
		fmt.Fprintf(b, "- Chart not placed on a sheet: %s\n", code(c))
	}
	for _, o := range s.Objects {
		fmt.Fprintf(b, "- Embedded object or file not placed on a sheet: %s\n", code(o))
	}
	if len(s.DefinedNames) > 0 {
		b.WriteString("- Defined names:\n")
		for _, d := range s.DefinedNames {
			fmt.Fprintf(b, "  - %s = %s (%s)\n", code(d.Name), code(d.RefersTo), scope(d.Scope))
		}
	}
	for _, l := range s.ExternalLinks {
		fmt.Fprintf(b, "- Values copied from another workbook: %s\n", code(l))
	}
	for _, l := range s.Linked {
		fmt.Fprintf(b, "- Linked, not stored in the file: %s\n", code(l))
	}
	if s.Macros {
		b.WriteString("- Contains macros.\n")
	}
}

func scope(s string) string {
	if s == "" || s == "Workbook" {
		return "whole workbook"
	}
	return "sheet " + s
}

func documentDetails(b *strings.Builder, d *Document) {
	fmt.Fprintf(b, "- Paragraphs: %d, of which %d with text (%d visible characters)\n", d.Paragraphs, d.TextParagraphs, d.Characters)
	fmt.Fprintf(b, "- Tables: %d; pictures, charts and shapes placed in the text: %d\n", d.Tables, d.Drawings)
	partLines(b, "Picture", d.Media)
	partLines(b, "Embedded object or file", d.Embeddings)
	for _, c := range d.Charts {
		fmt.Fprintf(b, "- Chart: %s\n", code(c))
	}
	for _, l := range d.Linked {
		fmt.Fprintf(b, "- Linked, not stored in the file: %s\n", code(l))
	}
	if d.Macros {
		b.WriteString("- Contains macros.\n")
	}
}

func presentationDetails(b *strings.Builder, p *Presentation) {
	b.WriteString("\n| Slide | Visible characters | Pictures | Charts | Objects | Notes | Remarks |\n|---|---|---|---|---|---|---|\n")
	for _, s := range p.Slides {
		var r []string
		if s.ImageOnly {
			r = append(r, "only pictures, no text")
		}
		if s.Hidden {
			r = append(r, "hidden")
		}
		fmt.Fprintf(b, "| %d | %d | %d | %d | %d | %s | %s |\n", s.Number, s.Characters, s.Pictures, s.Charts, s.Objects, yesNo(s.HasNotes), strings.Join(r, ", "))
	}
	b.WriteString("\n")
	partLines(b, "Picture or media file", p.Media)
	partLines(b, "Embedded object or file", p.Embeddings)
	for _, c := range p.Charts {
		fmt.Fprintf(b, "- Chart: %s\n", code(c))
	}
	for _, l := range p.Linked {
		fmt.Fprintf(b, "- Linked, not stored in the file: %s\n", code(l))
	}
	if p.Macros {
		b.WriteString("- Contains macros.\n")
	}
}

func pdfDetails(b *strings.Builder, p *PDF) {
	if p.Version != "" {
		fmt.Fprintf(b, "- PDF version: %s\n", p.Version)
	}
	fmt.Fprintf(b, "- Encrypted: %s\n", yesNo(p.Encrypted))
	if p.Form {
		b.WriteString("- Has form fields.\n")
	}
	for _, a := range p.Attachments {
		fmt.Fprintf(b, "- Attached file: %s\n", code(a))
	}
	if len(p.Pages) == 0 {
		return
	}
	b.WriteString("\n| Page | Text characters | Images | Remarks |\n|---|---|---|---|\n")
	for _, pg := range p.Pages {
		var r []string
		switch {
		case pg.ImageOnly:
			r = append(r, "only images, no text (scanned)")
		case pg.Blank:
			r = append(r, "no text, no images")
		}
		if pg.InvisibleCharacters > 0 {
			r = append(r, fmt.Sprintf("%d invisible (OCR layer)", pg.InvisibleCharacters))
		}
		if pg.InlineImages > 0 {
			r = append(r, fmt.Sprintf("%d of the images written inline", pg.InlineImages))
		}
		if pg.Problem != "" {
			r = append(r, pg.Problem)
		}
		fmt.Fprintf(b, "| %d | %d | %d | %s |\n", pg.Number, pg.Characters, pg.Images+pg.InlineImages, cell(strings.Join(r, "; ")))
	}
	b.WriteString("\n")
}

func textDetails(b *strings.Builder, t *Text) {
	fmt.Fprintf(b, "- Lines: %d (line ends: %s)\n", t.Lines, t.LineEnd)
	enc := t.Encoding
	if t.BOM {
		enc += ", with a byte-order mark"
	}
	if t.InvalidBytes > 0 {
		enc += fmt.Sprintf(" (%s that are not UTF-8, the first on line %d)", count(t.InvalidBytes, "byte"), t.FirstInvalidLine)
	}
	fmt.Fprintf(b, "- Encoding: %s\n", enc)
	if t.NUL {
		b.WriteString("- Holds NUL bytes.\n")
	}
	if c := t.CSV; c != nil {
		fmt.Fprintf(b, "- Separator: %s; header columns: %d; records (header included): %d\n", sepName(c.Separator), c.HeaderColumns, c.Records)
		fmt.Fprintf(b, "- Rows with a different number of fields than the header: %d\n", c.RaggedRows)
		for _, r := range c.RaggedExamples {
			fmt.Fprintf(b, "  - line %d: %s\n", r.Line, count(r.Fields, "field"))
		}
		if c.ParseError != "" {
			fmt.Fprintf(b, "- Reading stopped at %s\n", c.ParseError)
		}
	}
}

func partLines(b *strings.Builder, what string, ps []Part) {
	for _, p := range ps {
		fmt.Fprintf(b, "- %s: %s (%s)\n", what, code(p.Name), humanSize(p.Size))
	}
}

func partsDetails(b *strings.Builder, ps []Part) {
	fmt.Fprintf(b, "- Zip parts (%d, sizes uncompressed):\n", len(ps))
	for i, p := range ps {
		if i == maxParts {
			fmt.Fprintf(b, "  - … and %d more\n", len(ps)-maxParts)
			break
		}
		fmt.Fprintf(b, "  - %s — %s\n", code(p.Name), humanSize(p.Size))
	}
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// code writes s as a Markdown code span, with a fence longer than any run
// of backticks inside it; line breaks are written as \n and \r.
func code(s string) string {
	s = strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s) // a name may hold a line break
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// cell makes s safe inside a table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// sentence makes a problem or risk read as one sentence: no final period
// (the caller adds it), no line breaks.
func sentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.TrimRight(s, ".")
}
