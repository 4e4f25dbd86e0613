package inventory

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/xuri/excelize/v2"
)

func contains(t *testing.T, what, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("%s does not contain %q:\n%s", what, sub, s)
	}
}

func risksOf(it Item) string { return strings.Join(it.Risks(), "\n") }

// DA-B2: a workbook's picture, hidden sheet, formula without a stored
// result, chart, text box and comment are named, with their sheet and
// cell, because none of them is in the cell values a program reads.
func TestSpreadsheet(t *testing.T) {
	pic := makePNG(t, 8, 6)
	it := inventoryOf(t, "book.xlsx", makeXLSX(t, pic))
	if it.Kind != KindXLSX || it.Problem != "" {
		t.Fatalf("kind %s, problem %q", it.Kind, it.Problem)
	}
	s := it.Spreadsheet
	if s == nil || len(s.Sheets) != 2 {
		t.Fatalf("spreadsheet %+v", s)
	}
	data, secret := s.Sheets[0], s.Sheets[1]
	if data.Name != "Data" || data.State != "visible" || secret.Name != "Secret" || secret.State != "hidden" {
		t.Errorf("sheets %q/%s, %q/%s", data.Name, data.State, secret.Name, secret.State)
	}
	if data.Part != "xl/worksheets/sheet1.xml" {
		t.Errorf("part %q", data.Part)
	}
	if data.Formulas != 1 || data.FormulasNoValue != 1 {
		t.Errorf("formulas %d, without value %d; want 1, 1", data.Formulas, data.FormulasNoValue)
	}
	if data.UsedRange != "A1:B6" || data.Rows != 5 || data.Columns != 2 || data.MergedCells != 1 || data.Comments != 1 {
		t.Errorf("used %s rows %d cols %d merged %d comments %d", data.UsedRange, data.Rows, data.Columns, data.MergedCells, data.Comments)
	}
	if len(data.Pictures) != 1 {
		t.Fatalf("pictures %+v", data.Pictures)
	}
	p := data.Pictures[0]
	want := Picture{Cell: "D2", Name: "Logo", AltText: "company logo", Format: ".png", Part: "xl/media/image1.png", Bytes: len(pic), Width: 8, Height: 6}
	if p != want {
		t.Errorf("picture %+v, want %+v", p, want)
	}
	if !slices.Equal(data.Charts, []string{"xl/charts/chart1.xml"}) || data.TextBoxes != 1 {
		t.Errorf("charts %v, text boxes %d", data.Charts, data.TextBoxes)
	}
	if len(s.Charts) != 0 || len(s.Objects) != 0 {
		t.Errorf("unplaced charts %v objects %v", s.Charts, s.Objects)
	}
	if len(s.DefinedNames) != 1 || s.DefinedNames[0].Name != "Total" || s.DefinedNames[0].RefersTo != "Data!$B$4" {
		t.Errorf("defined names %+v", s.DefinedNames)
	}
	if !slices.ContainsFunc(it.Parts, func(p Part) bool { return p.Name == "xl/media/image1.png" && p.Size == int64(len(pic)) }) {
		t.Errorf("parts do not list the image with its size: %+v", it.Parts)
	}
	r := risksOf(it)
	for _, sub := range []string{
		`sheet "Data" holds 1 picture (D2 "Logo" PNG)`,
		`sheet "Secret" is hidden`,
		`sheet "Data" holds 1 chart`,
		`sheet "Data" has 1 text box`,
		`sheet "Data" has 1 formula with no stored result`,
	} {
		contains(t, "risks", r, sub)
	}
	md := Markdown([]Item{it})
	contains(t, "markdown", md, "Picture on sheet `Data` at D2, named \"Logo\"")
	contains(t, "markdown", md, "stored as `xl/media/image1.png`")
}

// DA-B2: a docx is a zip; its parts, media and embedded objects are
// listed, and the paragraphs with text counted.
func TestDocument(t *testing.T) {
	it := inventoryOf(t, "memo.docx", makeDOCX(t, makePNG(t, 4, 4)))
	if it.Kind != KindDOCX || it.Problem != "" {
		t.Fatalf("kind %s, problem %q", it.Kind, it.Problem)
	}
	d := it.Document
	if d.Paragraphs != 4 || d.TextParagraphs != 2 || d.Tables != 1 || d.Drawings != 1 {
		t.Errorf("paragraphs %d with text %d tables %d drawings %d", d.Paragraphs, d.TextParagraphs, d.Tables, d.Drawings)
	}
	if d.Characters != len("Quarterly sales")+len("See the chart")-3 {
		t.Errorf("characters %d", d.Characters)
	}
	if len(d.Media) != 1 || d.Media[0].Name != "word/media/image1.png" {
		t.Errorf("media %+v", d.Media)
	}
	if len(d.Embeddings) != 1 || d.Embeddings[0].Name != "word/embeddings/oleObject1.bin" {
		t.Errorf("embeddings %+v", d.Embeddings)
	}
	if len(it.Parts) != 6 {
		t.Errorf("parts %+v", it.Parts)
	}
	r := risksOf(it)
	contains(t, "risks", r, "holds 1 picture (word/media/image1.png)")
	contains(t, "risks", r, "holds 1 embedded object or file (word/embeddings/oleObject1.bin)")
}

// DA-B2: a document with pictures and no text at all is flagged as a
// probable scan.
func TestDocumentOnlyPictures(t *testing.T) {
	pic := makePNG(t, 4, 4)
	files := map[string]string{
		"_rels/.rels":           rels(`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>`),
		"word/document.xml":     `<w:document ` + nsW + `><w:body><w:p><w:r><w:drawing/></w:r></w:p></w:body></w:document>`,
		"word/media/image1.png": string(pic),
	}
	it := inventoryOf(t, "scan.docx", makeZip(t, []string{"_rels/.rels", "word/document.xml", "word/media/image1.png"}, files))
	contains(t, "risks", risksOf(it), "no text, only pictures")
}

// DA-B2: slides in show order; a slide with only a picture is flagged, as
// is a hidden slide; notes are seen.
func TestPresentation(t *testing.T) {
	it := inventoryOf(t, "deck.pptx", makePPTX(t, makePNG(t, 4, 4)))
	if it.Kind != KindPPTX || it.Problem != "" {
		t.Fatalf("kind %s, problem %q", it.Kind, it.Problem)
	}
	p := it.Presentation
	if len(p.Slides) != 3 || p.Notes != 1 {
		t.Fatalf("slides %+v notes %d", p.Slides, p.Notes)
	}
	s1, s2, s3 := p.Slides[0], p.Slides[1], p.Slides[2]
	if s1.Part != "ppt/slides/slide2.xml" || s1.Characters == 0 || s1.ImageOnly {
		t.Errorf("slide 1 %+v", s1)
	}
	if s2.Part != "ppt/slides/slide1.xml" || !s2.ImageOnly || s2.Pictures != 1 || !s2.HasNotes {
		t.Errorf("slide 2 %+v", s2)
	}
	if s3.Part != "ppt/slides/slide3.xml" || !s3.Hidden {
		t.Errorf("slide 3 %+v", s3)
	}
	r := risksOf(it)
	contains(t, "risks", r, "slide 2 holds only pictures and no text")
	contains(t, "risks", r, "slide 3 is hidden")
}

// DA-B2: page 1 has extractable text, page 2 is a scan (an image and no
// text) and is reported as image-only.
func TestPDFScannedPage(t *testing.T) {
	it := inventoryOf(t, "report.pdf", makePDF(t, makePNG(t, 20, 10)))
	if it.Kind != KindPDF || it.Problem != "" {
		t.Fatalf("kind %s, problem %q, notes %v", it.Kind, it.Problem, it.Notes)
	}
	p := it.PDF
	if len(p.Pages) != 2 || p.Encrypted {
		t.Fatalf("pdf %+v", p)
	}
	p1, p2 := p.Pages[0], p.Pages[1]
	if p1.Characters != len("Revenue grew 12 percent") || p1.ImageOnly || p1.Images != 0 {
		t.Errorf("page 1 %+v", p1)
	}
	if p2.Characters != 0 || p2.Images != 1 || !p2.ImageOnly || p2.Blank {
		t.Errorf("page 2 %+v", p2)
	}
	contains(t, "risks", risksOf(it), "page 2 holds only images and no text (1 of 2 pages)")
	md := Markdown([]Item{it})
	contains(t, "markdown", md, "| 1 | 23 | 0 |  |")
	contains(t, "markdown", md, "| 2 | 0 | 1 | only images, no text (scanned) |")
}

// DA-B2: an encrypted PDF is a Problem in plain words, not an error; one
// that opens without a password is read and noted.
func TestPDFEncrypted(t *testing.T) {
	src := makePDF(t, makePNG(t, 20, 10))
	it := inventoryOf(t, "locked.pdf", encryptPDF(t, src, "user-secret"))
	if !it.PDF.Encrypted || !strings.Contains(it.Problem, "encrypted") || !strings.Contains(it.Problem, "cannot be read") {
		t.Errorf("locked: encrypted %v problem %q", it.PDF.Encrypted, it.Problem)
	}
	open := inventoryOf(t, "open.pdf", encryptPDF(t, src, ""))
	if open.Problem != "" || !open.PDF.Encrypted || len(open.PDF.Pages) != 2 || !open.PDF.Pages[1].ImageOnly || open.PDF.Pages[0].Characters == 0 {
		t.Errorf("open: %+v problem %q", open.PDF, open.Problem)
	}
	contains(t, "notes", strings.Join(open.Notes, "\n"), "opens without a password")
}

// DA-B2: damaged inputs record a Problem and never fail the inventory.
func TestDamagedFiles(t *testing.T) {
	pdf := makePDF(t, makePNG(t, 20, 10))
	xlsx := makeXLSX(t, makePNG(t, 4, 4))
	// Damage the data of one part: the directory is intact, the part's
	// checksum is not.
	flipped := bytes.Clone(xlsx)
	zr, err := zip.NewReader(bytes.NewReader(xlsx), int64(len(xlsx)))
	if err != nil {
		t.Fatal(err)
	}
	for _, zf := range zr.File {
		if zf.Name == "xl/styles.xml" {
			off, err := zf.DataOffset()
			if err != nil {
				t.Fatal(err)
			}
			flipped[off+5] ^= 0xFF
		}
	}
	tests := []struct {
		name    string
		content []byte
		kind    Kind
		problem string
	}{
		{"corrupt.xlsx", []byte("PK\x03\x04 this is no zip archive"), KindXLSX, "damaged or cut short"},
		{"corrupt.zip", []byte("PK\x03\x04 this is no zip archive"), KindZip, "damaged or cut short"},
		{"cut.xlsx", xlsx[:len(xlsx)/2], KindXLSX, "damaged or cut short"},
		{"flipped.xlsx", flipped, KindXLSX, "damaged"},
		{"half.pdf", pdf[:len(pdf)/2], KindPDF, "cut short"},
		{"nearly.pdf", pdf[:len(pdf)-40], KindPDF, "cut short"},
		{"head.pdf", pdf[:100], KindPDF, "cut short"},
		{"legacy.xls", append(bytes.Clone(oleMagic), make([]byte, 600)...), KindOLE, "legacy Office file"},
		{"protected.xlsx", append(append(bytes.Clone(oleMagic), make([]byte, 100)...), utf16le("EncryptedPackage")...), KindOLE, "protected by a password"},
		{"broken.png", []byte("\x89PNG\r\n\x1a\nnot really"), KindImage, "could not be decoded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it := inventoryOf(t, tc.name, tc.content)
			if it.Kind != tc.kind || !strings.Contains(it.Problem, tc.problem) {
				t.Errorf("kind %s problem %q; want %s, %q", it.Kind, it.Problem, tc.kind, tc.problem)
			}
			contains(t, "markdown", Markdown([]Item{it}), "**could not be fully read**")
			if tc.name == "flipped.xlsx" {
				// excelize cannot open it; the package still names the
				// sheets and what they carry.
				if s := it.Spreadsheet; s == nil || len(s.Sheets) != 2 || s.Sheets[1].State != "hidden" || len(s.Sheets[0].Charts) != 1 {
					t.Errorf("sheets from the package: %+v", s)
				}
			}
		})
	}
}

// DA-B2: text files: line counts, UTF-8 validity, byte-order marks, CSV
// width and ragged rows, separators.
func TestText(t *testing.T) {
	tests := []struct {
		name    string
		content string
		check   func(t *testing.T, it Item)
	}{
		{"ragged.csv", "a,b,c\n1,2,3\n4,5\n\"x,y\",8,9\n6,7,8,9\n", func(t *testing.T, it Item) {
			c := it.Text.CSV
			if it.Kind != KindCSV || c.HeaderColumns != 3 || c.Records != 5 || c.RaggedRows != 2 || it.Text.Lines != 5 {
				t.Errorf("%+v %+v", it.Text, c)
			}
			if !slices.Equal(c.RaggedExamples, []RaggedRow{{3, 2}, {5, 4}}) {
				t.Errorf("examples %+v", c.RaggedExamples)
			}
			contains(t, "risks", risksOf(it), "2 of 4 rows have a different number of fields than the header's 3 (line 3: 2 fields, line 5: 4 fields)")
		}},
		{"even.csv", "a,b\r\n1,2\r\n", func(t *testing.T, it Item) {
			if it.Text.CSV.RaggedRows != 0 || it.Text.Lines != 2 || it.Text.LineEnd != "CRLF" || len(it.Risks()) != 0 {
				t.Errorf("%+v %+v %v", it.Text, it.Text.CSV, it.Risks())
			}
		}},
		{"latin1.txt", "caf\xe9\nna\xefve\nok", func(t *testing.T, it Item) {
			if it.Kind != KindText || it.Text.UTF8 || it.Text.Encoding != EncodingUnknown || it.Text.InvalidBytes != 2 || it.Text.FirstInvalidLine != 1 || it.Text.Lines != 3 {
				t.Errorf("%+v", it.Text)
			}
			contains(t, "risks", risksOf(it), "not UTF-8")
		}},
		{"late.md", "# title\n\nline three \xff\n", func(t *testing.T, it Item) {
			if it.Kind != KindMarkdown || it.Text.FirstInvalidLine != 3 {
				t.Errorf("%s %+v", it.Kind, it.Text)
			}
		}},
		{"bom.csv", "\xef\xbb\xbfregion;total\nnorth;1\n", func(t *testing.T, it Item) {
			if !it.Text.BOM || !it.Text.UTF8 || it.Text.CSV.Separator != ";" || it.Text.CSV.HeaderColumns != 2 {
				t.Errorf("%+v %+v", it.Text, it.Text.CSV)
			}
			r := risksOf(it)
			contains(t, "risks", r, "byte-order mark")
			contains(t, "risks", r, "separated by semicolons")
		}},
		{"tabs.tsv", "a\tb\n1\t2\t3\n", func(t *testing.T, it Item) {
			if it.Kind != KindTSV || it.Text.CSV.Separator != "\t" || it.Text.CSV.RaggedRows != 1 {
				t.Errorf("%+v", it.Text.CSV)
			}
		}},
		{"wide.txt", "\xff\xfeh\x00i\x00\n\x00", func(t *testing.T, it Item) {
			if it.Text.Encoding != EncodingUTF16LE || it.Text.Lines != 1 || it.Text.UTF8 {
				t.Errorf("%+v", it.Text)
			}
			contains(t, "risks", risksOf(it), "UTF-16LE, not UTF-8")
		}},
		{"wide.csv", "\xff\xfea\x00,\x00b\x00\n\x001\x00\n\x00", func(t *testing.T, it Item) {
			if it.Text.Encoding != EncodingUTF16LE || it.Text.CSV == nil || it.Text.CSV.HeaderColumns != 2 || it.Text.CSV.RaggedRows != 1 {
				t.Errorf("%+v %+v", it.Text, it.Text.CSV)
			}
		}},
		{"split.txt", strings.Repeat("é", 40000) + "\n", func(t *testing.T, it Item) {
			// Two-byte characters straddle the 64 KiB read boundary.
			if !it.Text.UTF8 || it.Text.Lines != 1 {
				t.Errorf("%+v", it.Text)
			}
		}},
		{"report.pdf", "<html><body>not a pdf</body></html>\n", func(t *testing.T, it Item) {
			if it.Kind != KindText || !strings.Contains(it.Mismatch, "its name says a PDF but its content is text") {
				t.Errorf("%s %q", it.Kind, it.Mismatch)
			}
			contains(t, "risks", risksOf(it), "a program that trusts the name will fail")
		}},
		{"empty.csv", "", func(t *testing.T, it Item) {
			if it.Kind != KindEmpty {
				t.Errorf("%s", it.Kind)
			}
			contains(t, "risks", risksOf(it), "the file is empty")
		}},
		{"blob.dat", "\x00\x01\x02\x03\x04binary\x00\x00", func(t *testing.T, it Item) {
			if it.Kind != KindBinary {
				t.Errorf("%s", it.Kind)
			}
			contains(t, "risks", risksOf(it), "unknown binary format")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, inventoryOf(t, tc.name, []byte(tc.content)))
		})
	}
}

// DA-B2: an image file is recognised by its content, whatever its name.
func TestImage(t *testing.T) {
	it := inventoryOf(t, "photo.jpg", makePNG(t, 5, 3))
	if it.Kind != KindImage || it.Image.Format != "PNG" || it.Image.Width != 5 || it.Image.Height != 3 {
		t.Errorf("%s %+v", it.Kind, it.Image)
	}
	if it.Mismatch != "" {
		t.Errorf("a PNG named .jpg is still an image: %q", it.Mismatch)
	}
}

// DA-B2: Folder lists every file sorted by path, symlinks as such (not
// followed), special files without reading them; a damaged file does not
// stop the others.
func TestFolder(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	writeFile(t, outside, "secret.csv", []byte("secret,data\n"))
	writeFile(t, dir, "b.csv", []byte("x,y\n1,2\n"))
	writeFile(t, dir, "a/z.txt", []byte("hello\n"))
	writeFile(t, dir, "a.txt", []byte("top\n"))
	writeFile(t, dir, "a/broken.pdf", []byte("%PDF-1.7\nnothing else"))
	if err := os.Symlink(filepath.Join(outside, "secret.csv"), filepath.Join(dir, "link.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	items, err := Folder(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.Path+":"+string(it.Kind))
	}
	want := []string{"a.txt:text", "a/broken.pdf:pdf", "a/z.txt:text", "b.csv:csv", "link.csv:symlink", "linkdir:symlink", "pipe:special"}
	if !slices.Equal(got, want) {
		t.Fatalf("items\n got %v\nwant %v", got, want)
	}
	link := items[4]
	if link.Target != filepath.Join(outside, "secret.csv") || link.Text != nil || link.Size != 0 {
		t.Errorf("symlink followed or target missing: %+v", link)
	}
	if items[1].Problem == "" {
		t.Errorf("broken pdf has no problem")
	}
	md := Markdown(items)
	contains(t, "markdown", md, "`link.csv` — it is a symlink to")
	if strings.Contains(md, "secret,data") || strings.Contains(md, "secret.csv`\n\n- Type: CSV") {
		t.Errorf("the symlink's target was read:\n%s", md)
	}
	// Paths are relative to the folder and sorted even across folders:
	// "a.txt" < "a/..." because '.' sorts before '/'.
	if !slices.IsSortedFunc(items, func(a, b Item) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("not sorted: %v", got)
	}
}

// The end of the context stops a walk, between files and before any.
func TestFolderContext(t *testing.T) {
	dir := t.TempDir()
	for i := range 50 {
		writeFile(t, dir, filepath.Join("d", string(rune('a'+i%26))+string(rune('a'+i/26))+".txt"), []byte("x\n"))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Folder(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("Folder after cancel: %v", err)
	}
	if _, err := Inventory(ctx, filepath.Join(dir, "d", "aa.txt")); !errors.Is(err, context.Canceled) {
		t.Errorf("Inventory after cancel: %v", err)
	}
	// Cancelled during the walk: the walk checks between files.
	ctx, cancel = context.WithCancel(t.Context())
	n := 0
	items, err := folder(ctx, cancelAfter{osDir(dir), &n, 10, cancel}, ".", "")
	if !errors.Is(err, context.Canceled) || items != nil {
		t.Errorf("walk went on after cancel: %d items, %v", len(items), err)
	}
	if n > 11 {
		t.Errorf("opened %d files after the cancel at 10", n)
	}
}

// cancelAfter cancels after limit files have been opened.
type cancelAfter struct {
	osDir
	n      *int
	limit  int
	cancel context.CancelFunc
}

func (c cancelAfter) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if *c.n++; *c.n == c.limit {
		c.cancel()
	}
	return c.osDir.OpenFile(name, flag, perm)
}

// Inventory of one path: a folder or a missing file is an error (not an
// Item), with the path in it.
func TestInventoryErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Inventory(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("folder: %v", err)
	}
	missing := filepath.Join(dir, "nope.csv")
	if _, err := Inventory(t.Context(), missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.csv") {
		t.Errorf("missing: %v", err)
	}
	if _, err := Folder(t.Context(), missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing folder: %v", err)
	}
}

// Markdown: warnings first, then the table, then details; pipes in names
// do not break the table; no warnings says so.
func TestMarkdown(t *testing.T) {
	clean := []Item{{Path: "a|b.txt", Size: 3, Kind: KindText, Text: &Text{Lines: 1, UTF8: true, Encoding: EncodingUTF8, LineEnd: "LF"}}}
	md := Markdown(clean)
	contains(t, "markdown", md, "None: every file was read")
	contains(t, "markdown", md, "| `a\\|b.txt` | text | 3 bytes | 1 line; UTF-8 |")
	w, f, d := strings.Index(md, "## Warnings"), strings.Index(md, "## Files"), strings.Index(md, "## Details")
	if !(w >= 0 && w < f && f < d) {
		t.Errorf("sections out of order:\n%s", md)
	}
	if got := code("a`b"); got != "`` a`b ``" {
		t.Errorf("code = %q", got)
	}
	if got := ranges([]int{1, 2, 3, 5, 7, 8}); got != "1-3, 5, 7, 8" {
		t.Errorf("ranges = %q", got)
	}
}

// DA-B2: a chart sheet (a chart and no cells) and a very hidden sheet are
// named.
func TestSpreadsheetChartsheetAndVeryHidden(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	for _, c := range []string{"A1", "A2"} {
		if err := f.SetCellValue("Sheet1", c, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.NewSheet("Macro"); err != nil {
		t.Fatal(err)
	}
	// Before the chart sheet: excelize's SetSheetVisible reads every sheet
	// as a worksheet.
	if err := f.SetSheetVisible("Macro", false, true); err != nil {
		t.Fatal(err)
	}
	if err := f.AddChartSheet("Trend", &excelize.Chart{Type: excelize.Line,
		Series: []excelize.ChartSeries{{Name: "Sheet1!$A$1", Values: "Sheet1!$A$1:$A$2"}}}); err != nil {
		t.Fatal(err)
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	it := inventoryOf(t, "trend.xlsx", buf.Bytes())
	if it.Problem != "" {
		t.Fatalf("problem %q", it.Problem)
	}
	var trend, macro *Sheet
	for i := range it.Spreadsheet.Sheets {
		switch sh := &it.Spreadsheet.Sheets[i]; sh.Name {
		case "Trend":
			trend = sh
		case "Macro":
			macro = sh
		}
	}
	if trend == nil || !trend.Chartsheet || len(trend.Charts) != 1 {
		t.Errorf("chart sheet %+v", trend)
	}
	if macro == nil || macro.State != "veryHidden" {
		t.Errorf("very hidden sheet %+v", macro)
	}
	r := risksOf(it)
	contains(t, "risks", r, `sheet "Trend" is a chart sheet`)
	contains(t, "risks", r, `sheet "Macro" is very hidden`)
}
