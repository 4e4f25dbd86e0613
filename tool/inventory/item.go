package inventory

// Kind is the type of a file, detected from its content (DA-B2): the first
// bytes and, for zip archives, the parts inside. The extension only
// separates kinds the content cannot (CSV from Markdown from plain text).
type Kind string

// The kinds of file the inventory tells apart.
const (
	KindXLSX     Kind = "xlsx"     // Excel workbook (zip with xl/workbook.xml)
	KindXLSM     Kind = "xlsm"     // Excel workbook with macros
	KindDOCX     Kind = "docx"     // Word document (zip with word/document.xml)
	KindDOCM     Kind = "docm"     // Word document with macros
	KindPPTX     Kind = "pptx"     // PowerPoint presentation (zip with ppt/presentation.xml)
	KindPPTM     Kind = "pptm"     // PowerPoint presentation with macros
	KindZip      Kind = "zip"      // any other zip archive
	KindPDF      Kind = "pdf"      // starts with %PDF-
	KindCSV      Kind = "csv"      // text named .csv
	KindTSV      Kind = "tsv"      // text named .tsv or .tab
	KindMarkdown Kind = "markdown" // text named .md or .markdown
	KindText     Kind = "text"     // any other text
	KindImage    Kind = "image"    // PNG, JPEG, GIF, BMP, TIFF, WebP
	KindOLE      Kind = "ole"      // legacy Office file (.xls, .doc, .ppt) or a password-protected Office file
	KindBinary   Kind = "binary"   // none of the above
	KindEmpty    Kind = "empty"    // zero bytes
	KindSymlink  Kind = "symlink"  // listed, not followed
	KindSpecial  Kind = "special"  // device, socket or named pipe: not read
	KindFolder   Kind = "folder"   // only for a folder that could not be listed
)

// Item is what the inventory found about one file. Exactly one of the
// per-type fields (Spreadsheet, Document, Presentation, PDF, Text, Image)
// is set when the file could be read as that type; Parts is set for every
// zip archive.
type Item struct {
	// Path is relative to the folder inventoried, with "/" separators
	// (run-relative when the inventory tool made it).
	Path string `json:"path"`
	Size int64  `json:"size"`
	Kind Kind   `json:"kind"`
	// Target is where a symlink points; it is not followed.
	Target string `json:"target,omitempty"`
	// Problem says in plain words why the file, or part of it, could not
	// be read. It is not an error of the inventory: the other files are
	// still inventoried.
	Problem string `json:"problem,omitempty"`
	// Mismatch says that the content is not what the file's name says,
	// for example a file named .pdf that holds HTML.
	Mismatch string `json:"mismatch,omitempty"`
	// Notes are facts worth knowing that are neither problems nor risks,
	// such as "encrypted, but opens without a password".
	Notes []string `json:"notes,omitempty"`

	Parts        []Part        `json:"parts,omitempty"`
	Spreadsheet  *Spreadsheet  `json:"spreadsheet,omitempty"`
	Document     *Document     `json:"document,omitempty"`
	Presentation *Presentation `json:"presentation,omitempty"`
	PDF          *PDF          `json:"pdf,omitempty"`
	Text         *Text         `json:"text,omitempty"`
	Image        *Image        `json:"image,omitempty"`
}

// Part is one member of a zip archive.
type Part struct {
	Name       string `json:"name"`
	Size       int64  `json:"size"`       // uncompressed
	Compressed int64  `json:"compressed"` // stored
}

// Spreadsheet is what an Excel workbook holds besides its cell values.
type Spreadsheet struct {
	Sheets       []Sheet       `json:"sheets"`
	DefinedNames []DefinedName `json:"defined_names,omitempty"`
	// Charts and Objects are chart and embedded-object parts that no
	// sheet refers to (those a sheet refers to are listed on the sheet).
	Charts  []string `json:"charts,omitempty"`
	Objects []string `json:"objects,omitempty"`
	// Media are the image parts (xl/media/*).
	Media []Part `json:"media,omitempty"`
	// ExternalLinks are parts holding values copied from other workbooks.
	ExternalLinks []string `json:"external_links,omitempty"`
	// Linked are targets of relationships that point outside the file
	// (linked pictures, linked objects), other than hyperlinks.
	Linked []string `json:"linked,omitempty"`
	Macros bool     `json:"macros,omitempty"`
	// FormulasChecked is false when the workbook had more cells than the
	// inventory checks for formulas (MaxFormulaCells); Formulas counts
	// are then lower bounds.
	FormulasChecked bool `json:"formulas_checked"`
}

// Sheet is one sheet of a workbook.
type Sheet struct {
	Name string `json:"name"`
	// State is "visible", "hidden" or "veryHidden" (hidden so that only a
	// macro can show it again).
	State string `json:"state"`
	// Part is the zip part holding the sheet, such as xl/worksheets/sheet1.xml.
	Part string `json:"part,omitempty"`
	// Chartsheet is a sheet that holds only a chart and no cells.
	Chartsheet bool `json:"chartsheet,omitempty"`
	// Dimension is the used range the file records (may be stale or
	// missing); UsedRange is the range computed from the non-empty cells.
	Dimension string `json:"dimension,omitempty"`
	UsedRange string `json:"used_range,omitempty"`
	Rows      int    `json:"rows"`    // rows with at least one non-empty cell
	Columns   int    `json:"columns"` // widest row, in columns from A
	Cells     int    `json:"cells"`   // non-empty cells
	Formulas  int    `json:"formulas"`
	// FormulasNoValue are formulas with no stored result: a reader that
	// does not calculate (most libraries) sees an empty cell.
	FormulasNoValue int       `json:"formulas_no_value,omitempty"`
	MergedCells     int       `json:"merged_cells"`
	Comments        int       `json:"comments,omitempty"`
	Pictures        []Picture `json:"pictures,omitempty"`
	Charts          []string  `json:"charts,omitempty"`  // chart parts drawn on the sheet
	Objects         []string  `json:"objects,omitempty"` // embedded-object parts on the sheet
	// TextBoxes are drawn shapes holding text, which is in no cell.
	TextBoxes int `json:"text_boxes,omitempty"`
	// Problem says why the sheet's cells could not be read.
	Problem string `json:"problem,omitempty"`
}

// Picture is an image placed on a sheet.
type Picture struct {
	Cell    string `json:"cell"`           // top-left anchor cell
	Name    string `json:"name,omitempty"` // the picture's name in the workbook, such as "Picture 1"
	AltText string `json:"alt_text,omitempty"`
	Format  string `json:"format"`         // file extension, such as ".png"
	Part    string `json:"part,omitempty"` // media part, such as xl/media/image1.png
	Bytes   int    `json:"bytes"`
	Width   int    `json:"width,omitempty"` // pixels, when the format is known
	Height  int    `json:"height,omitempty"`
	InCell  bool   `json:"in_cell,omitempty"` // placed in the cell rather than floating over it
}

// DefinedName is a named range or formula of a workbook.
type DefinedName struct {
	Name     string `json:"name"`
	RefersTo string `json:"refers_to"`
	Scope    string `json:"scope"` // "Workbook" or a sheet name
}

// Document is what a Word document holds.
type Document struct {
	Paragraphs     int `json:"paragraphs"`
	TextParagraphs int `json:"text_paragraphs"` // paragraphs with at least one visible character
	Characters     int `json:"characters"`      // visible (not white space)
	Tables         int `json:"tables"`
	Drawings       int `json:"drawings"` // pictures, charts and shapes placed in the text
	// Media are the image parts (word/media/*), Embeddings the embedded
	// objects and files (word/embeddings/*), Charts the chart parts.
	Media      []Part   `json:"media,omitempty"`
	Embeddings []Part   `json:"embeddings,omitempty"`
	Charts     []string `json:"charts,omitempty"`
	Linked     []string `json:"linked,omitempty"`
	Macros     bool     `json:"macros,omitempty"`
	// Truncated is set when the main text part was larger than the
	// inventory reads (MaxXMLPart); counts are then lower bounds.
	Truncated bool `json:"truncated,omitempty"`
}

// Presentation is what a PowerPoint presentation holds.
type Presentation struct {
	Slides     []Slide  `json:"slides"`
	Notes      int      `json:"notes"` // slides with speaker notes
	Media      []Part   `json:"media,omitempty"`
	Embeddings []Part   `json:"embeddings,omitempty"`
	Charts     []string `json:"charts,omitempty"`
	Linked     []string `json:"linked,omitempty"`
	Macros     bool     `json:"macros,omitempty"`
}

// Slide is one slide, numbered in show order.
type Slide struct {
	Number     int    `json:"number"`
	Part       string `json:"part"`
	Characters int    `json:"characters"` // visible (not white space)
	Pictures   int    `json:"pictures"`
	Charts     int    `json:"charts,omitempty"`
	Objects    int    `json:"objects,omitempty"`
	Hidden     bool   `json:"hidden,omitempty"`
	HasNotes   bool   `json:"has_notes,omitempty"`
	// ImageOnly: pictures and no text, so a reading of the text misses
	// everything the slide says.
	ImageOnly bool `json:"image_only,omitempty"`
}

// PDF is what a PDF file holds, page by page.
type PDF struct {
	Version   string `json:"version,omitempty"`
	Encrypted bool   `json:"encrypted,omitempty"`
	Pages     []Page `json:"pages"`
	// Form is set when the PDF has fillable form fields: their values are
	// not part of the page text counted here.
	Form bool `json:"form,omitempty"`
	// Attachments are files embedded in the PDF.
	Attachments []string `json:"attachments,omitempty"`
}

// Page is one PDF page.
type Page struct {
	Number int `json:"number"`
	// Characters are the characters the page's text operators show, in
	// its content and in the forms it draws. Characters drawn in
	// "invisible" mode (an OCR layer over a scan) are counted in
	// InvisibleCharacters as well.
	Characters          int `json:"characters"`
	InvisibleCharacters int `json:"invisible_characters,omitempty"`
	// Images are the image objects pdfcpu lists for the page (thumbnails
	// excluded); InlineImages are images written into the content itself.
	Images       int `json:"images"`
	InlineImages int `json:"inline_images,omitempty"`
	// ImageOnly: at least one image and no text, the mark of a scanned
	// page. Its text cannot be read without OCR.
	ImageOnly bool `json:"image_only,omitempty"`
	// Blank: neither text nor images. Either the page is empty or its
	// text is drawn as shapes, which cannot be read either.
	Blank bool `json:"blank,omitempty"`
	// Problem says why the page could not be examined.
	Problem string `json:"problem,omitempty"`
}

// Text is what a text file (CSV, TSV, Markdown, plain text) holds.
type Text struct {
	Lines int  `json:"lines"`
	UTF8  bool `json:"utf8"` // the whole file is valid UTF-8
	// Encoding is "UTF-8", "UTF-16LE", "UTF-16BE" or "unknown (not
	// UTF-8)"; BOM tells whether the file starts with a byte-order mark.
	Encoding string `json:"encoding"`
	BOM      bool   `json:"bom,omitempty"`
	// FirstInvalidLine is the line of the first byte that is not UTF-8
	// (0 if none).
	FirstInvalidLine int    `json:"first_invalid_line,omitempty"`
	InvalidBytes     int    `json:"invalid_bytes,omitempty"`
	NUL              bool   `json:"nul,omitempty"` // holds NUL bytes
	LineEnd          string `json:"line_end"`      // "LF", "CRLF", "CR", "mixed" or "none"
	CSV              *CSV   `json:"csv,omitempty"`
}

// CSV is the shape of a CSV or TSV file.
type CSV struct {
	Separator     string `json:"separator"` // ",", ";", "\t" or "|"
	HeaderColumns int    `json:"header_columns"`
	Records       int    `json:"records"` // including the header
	// RaggedRows are records whose number of fields differs from the
	// header's; RaggedExamples give the first few.
	RaggedRows     int         `json:"ragged_rows"`
	RaggedExamples []RaggedRow `json:"ragged_examples,omitempty"`
	// ParseError says where reading stopped, if it did.
	ParseError string `json:"parse_error,omitempty"`
}

// RaggedRow is a CSV record with a different number of fields than the
// header.
type RaggedRow struct {
	Line   int `json:"line"`
	Fields int `json:"fields"`
}

// Image is a picture file.
type Image struct {
	Format string `json:"format"` // "PNG", "JPEG", "GIF", "BMP", "TIFF" or "WebP"
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
}
