package inventory

// Fixtures for the DA-B2 tests, all made in Go at test time: no binary
// fixture is committed, and nothing needs to be installed.

import (
	"archive/zip"
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/xuri/excelize/v2"
)

// makePNG draws a small w×h PNG.
func makePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		for y := 0; y < h; y++ {
			img.Set(x, y, color.RGBA{uint8(10 * x), uint8(20 * y), 200, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// makeXLSX builds a workbook with excelize: a visible sheet "Data" with
// values, a formula (with no stored result, as excelize writes it), a
// merged range, a comment, a chart, a text box and an embedded PNG at D2
// named "Logo"; a hidden sheet "Secret"; a defined name.
func makeXLSX(t *testing.T, pic []byte) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.SetSheetName("Sheet1", "Data"))
	for _, cv := range []struct {
		cell string
		v    any
	}{{"A1", "region"}, {"B1", "total"}, {"A2", "north"}, {"B2", 10}, {"A3", "south"}, {"B3", 20}, {"A4", "all"}} {
		must(f.SetCellValue("Data", cv.cell, cv.v))
	}
	must(f.SetCellFormula("Data", "B4", "SUM(B2:B3)"))
	must(f.MergeCell("Data", "A6", "C6"))
	must(f.SetCellValue("Data", "A6", "merged note"))
	must(f.AddComment("Data", excelize.Comment{Cell: "A1", Author: "analyst", Text: "regions from the 2024 list"}))
	must(f.AddPictureFromBytes("Data", "D2", &excelize.Picture{
		Extension: ".png",
		File:      pic,
		Format:    &excelize.GraphicOptions{Name: "Logo", AltText: "company logo"},
	}))
	must(f.AddChart("Data", "H2", &excelize.Chart{
		Type: excelize.Col,
		Series: []excelize.ChartSeries{{
			Name: "Data!$B$1", Categories: "Data!$A$2:$A$3", Values: "Data!$B$2:$B$3",
		}},
	}))
	must(f.AddShape("Data", &excelize.Shape{
		Cell: "F10", Type: "rect",
		Paragraph: []excelize.RichTextRun{{Text: "Figures exclude Q4"}},
	}))
	_, err := f.NewSheet("Secret")
	must(err)
	must(f.SetCellValue("Secret", "A1", "hidden value"))
	must(f.SetSheetVisible("Secret", false))
	must(f.SetDefinedName(&excelize.DefinedName{Name: "Total", RefersTo: "Data!$B$4"}))
	buf, err := f.WriteToBuffer()
	must(err)
	return buf.Bytes()
}

// makeZip writes a zip archive holding files (name -> content), in the
// order given by names.
func makeZip(t *testing.T, names []string, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const (
	nsW = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`
	nsR = `xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`
	nsA = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"`
	nsP = `xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`
)

func rels(body string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + body + `</Relationships>`
}

// makeDOCX builds a docx-like package: three paragraphs (two with text,
// one empty), a table, a picture in word/media and an object in
// word/embeddings.
func makeDOCX(t *testing.T, pic []byte) []byte {
	t.Helper()
	files := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"_rels/.rels": rels(`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>`),
		"word/document.xml": `<?xml version="1.0"?><w:document ` + nsW + ` ` + nsR + `><w:body>` +
			`<w:p><w:r><w:t>Quarterly sales</w:t></w:r></w:p>` +
			`<w:p></w:p>` +
			`<w:tbl><w:tr><w:tc><w:p><w:r><w:t xml:space="preserve">  </w:t></w:r></w:p></w:tc></w:tr></w:tbl>` +
			`<w:p><w:r><w:t>See the chart</w:t></w:r><w:r><w:drawing/></w:r></w:p>` +
			`</w:body></w:document>`,
		"word/_rels/document.xml.rels":   rels(`<Relationship Id="rId5" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/image1.png"/>`),
		"word/media/image1.png":          string(pic),
		"word/embeddings/oleObject1.bin": "not really an OLE object",
	}
	return makeZip(t, []string{"[Content_Types].xml", "_rels/.rels", "word/document.xml", "word/_rels/document.xml.rels",
		"word/media/image1.png", "word/embeddings/oleObject1.bin"}, files)
}

// makePPTX builds a pptx-like package whose slide list shows slide2.xml
// first: slide 1 (slide2.xml) has text, slide 2 (slide1.xml) only a
// picture and speaker notes, slide 3 is hidden.
func makePPTX(t *testing.T, pic []byte) []byte {
	t.Helper()
	slide := func(show, body string) string {
		return `<?xml version="1.0"?><p:sld ` + nsP + ` ` + nsA + ` ` + nsR + show + `><p:cSld><p:spTree>` + body + `</p:spTree></p:cSld></p:sld>`
	}
	text := `<p:sp><p:txBody><a:p><a:r><a:t>Market overview</a:t></a:r></a:p></p:txBody></p:sp>`
	picture := `<p:pic><p:blipFill><a:blip r:embed="rId2"/></p:blipFill></p:pic>`
	files := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
		"_rels/.rels":         rels(`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="ppt/presentation.xml"/>`),
		"ppt/presentation.xml": `<?xml version="1.0"?><p:presentation ` + nsP + ` ` + nsR + `><p:sldIdLst>` +
			`<p:sldId id="256" r:id="rId8"/><p:sldId id="257" r:id="rId7"/><p:sldId id="258" r:id="rId9"/></p:sldIdLst></p:presentation>`,
		"ppt/_rels/presentation.xml.rels": rels(
			`<Relationship Id="rId7" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide1.xml"/>` +
				`<Relationship Id="rId8" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide2.xml"/>` +
				`<Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="/ppt/slides/slide3.xml"/>`),
		"ppt/slides/slide1.xml": slide("", picture),
		"ppt/slides/_rels/slide1.xml.rels": rels(
			`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="../media/image1.png"/>` +
				`<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide" Target="../notesSlides/notesSlide1.xml"/>`),
		"ppt/slides/slide2.xml":           slide("", text),
		"ppt/slides/slide3.xml":           slide(` show="0"`, text),
		"ppt/notesSlides/notesSlide1.xml": `<?xml version="1.0"?><p:notes ` + nsP + `/>`,
		"ppt/media/image1.png":            string(pic),
	}
	return makeZip(t, []string{"[Content_Types].xml", "_rels/.rels", "ppt/presentation.xml", "ppt/_rels/presentation.xml.rels",
		"ppt/slides/slide1.xml", "ppt/slides/_rels/slide1.xml.rels", "ppt/slides/slide2.xml", "ppt/slides/slide3.xml",
		"ppt/notesSlides/notesSlide1.xml", "ppt/media/image1.png"}, files)
}

// textPageJSON is a one-page PDF with one line of text, in pdfcpu's JSON
// form for api.Create.
const textPageJSON = `{"pages": {"1": {"content": {"text": [
  {"value": "Revenue grew 12 percent", "pos": [72, 720], "font": {"name": "Helvetica", "size": 12}}
]}}}}`

// makePDF builds, with pdfcpu, a PDF whose page 1 has text and whose page
// 2 is a scan: an image (pic) and no text.
func makePDF(t *testing.T, pic []byte) []byte {
	t.Helper()
	conf := pdfConfig() // also keeps pdfcpu from writing a config folder
	var text bytes.Buffer
	if err := api.Create(nil, strings.NewReader(textPageJSON), &text, conf); err != nil {
		t.Fatalf("create text page: %v", err)
	}
	var both bytes.Buffer
	if err := api.ImportImages(bytes.NewReader(text.Bytes()), &both, []io.Reader{bytes.NewReader(pic)}, nil, pdfConfig()); err != nil {
		t.Fatalf("append scanned page: %v", err)
	}
	return both.Bytes()
}

// encryptPDF encrypts src with AES-256; an empty user password opens it
// without one.
func encryptPDF(t *testing.T, src []byte, userPW string) []byte {
	t.Helper()
	pdfConfig()
	conf := model.NewAESConfiguration(userPW, "owner-secret", 256)
	var out bytes.Buffer
	if err := api.Encrypt(bytes.NewReader(src), &out, conf); err != nil {
		t.Fatalf("encrypt: %v", err)
	}
	return out.Bytes()
}

// writeFile writes content to dir/rel, making folders.
func writeFile(t *testing.T, dir, rel string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// inventoryOf writes content to a temporary file named name and
// inventories it; it fails the test on an error, which a bad file must
// never cause.
func inventoryOf(t *testing.T, name string, content []byte) Item {
	t.Helper()
	p := writeFile(t, t.TempDir(), name, content)
	it, err := Inventory(t.Context(), p)
	if err != nil {
		t.Fatalf("Inventory(%s): %v", name, err)
	}
	return it
}
