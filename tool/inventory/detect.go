package inventory

import (
	"bytes"
	"path"
	"strings"
	"unicode/utf8"
)

// sniffLen is how many leading bytes detection looks at. A PDF may have up
// to 1024 bytes of junk before "%PDF-", which readers accept.
const sniffLen = 1024

// sniff is the first verdict on a file, from its leading bytes alone.
type sniff int

const (
	sniffBinary sniff = iota
	sniffZip
	sniffPDF
	sniffOLE
	sniffImage
	sniffText
)

var oleMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// detect classifies head, the first bytes of a file (up to sniffLen). For
// an image it also returns the format name.
func detect(head []byte) (sniff, string) {
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")),
		bytes.HasPrefix(head, []byte("PK\x05\x06")), // empty archive
		bytes.HasPrefix(head, []byte("PK\x07\x08")): // spanned archive marker
		return sniffZip, ""
	case bytes.Contains(head, []byte("%PDF-")):
		return sniffPDF, ""
	case bytes.HasPrefix(head, oleMagic):
		return sniffOLE, ""
	}
	if f := imageFormat(head); f != "" {
		return sniffImage, f
	}
	if looksText(head) {
		return sniffText, ""
	}
	return sniffBinary, ""
}

// imageFormat names the image format whose signature head starts with.
func imageFormat(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "PNG"
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return "JPEG"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "GIF"
	case bytes.HasPrefix(head, []byte("BM")) && len(head) >= 26:
		return "BMP"
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return "TIFF"
	case len(head) >= 12 && bytes.HasPrefix(head, []byte("RIFF")) && string(head[8:12]) == "WEBP":
		return "WebP"
	}
	return ""
}

// looksText reports whether head reads as text: UTF-8 or UTF-16 with a
// byte-order mark, or, in another 8-bit encoding, bytes that are mostly
// not control characters. NUL bytes without a UTF-16 mark mean binary.
func looksText(head []byte) bool {
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return true
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	if validUTF8Prefix(head) {
		return true
	}
	control := 0
	for _, c := range head {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1A { // 0x1A: DOS end of file
			control++
		}
	}
	return control*20 < len(head) // under 5%
}

// validUTF8Prefix is utf8.Valid for a prefix cut anywhere: an incomplete
// sequence at the very end is allowed.
func validUTF8Prefix(b []byte) bool {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.Valid(b[:len(b)-i]) {
			tail := b[len(b)-i:]
			return i == 0 || (utf8.RuneStart(tail[0]) && !utf8.FullRune(tail))
		}
	}
	return false
}

// textKind separates text kinds by name, which content cannot do reliably.
func textKind(name string) Kind {
	switch strings.ToLower(path.Ext(name)) {
	case ".csv":
		return KindCSV
	case ".tsv", ".tab":
		return KindTSV
	case ".md", ".markdown":
		return KindMarkdown
	}
	return KindText
}

// expected is what a file's extension promises, to compare with what its
// content is. An empty result means the extension promises nothing the
// inventory checks.
func expected(name string) (kinds []Kind, label string) {
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".xlsx", ".xltx":
		return []Kind{KindXLSX, KindXLSM}, "an Excel workbook"
	case ".xlsm", ".xltm":
		return []Kind{KindXLSM, KindXLSX}, "an Excel workbook with macros"
	case ".docx", ".dotx":
		return []Kind{KindDOCX, KindDOCM}, "a Word document"
	case ".docm", ".dotm":
		return []Kind{KindDOCM, KindDOCX}, "a Word document with macros"
	case ".pptx", ".potx", ".ppsx":
		return []Kind{KindPPTX, KindPPTM}, "a PowerPoint presentation"
	case ".pptm", ".ppsm":
		return []Kind{KindPPTM, KindPPTX}, "a PowerPoint presentation with macros"
	case ".xls", ".doc", ".ppt":
		return []Kind{KindOLE}, "a legacy Office file"
	case ".zip":
		return []Kind{KindZip, KindXLSX, KindXLSM, KindDOCX, KindDOCM, KindPPTX, KindPPTM}, "a zip archive"
	case ".pdf":
		return []Kind{KindPDF}, "a PDF"
	case ".csv", ".tsv", ".tab", ".txt", ".md", ".markdown", ".json", ".xml", ".html", ".htm", ".yaml", ".yml":
		return []Kind{KindCSV, KindTSV, KindMarkdown, KindText, KindEmpty}, "text"
	case ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".webp":
		return []Kind{KindImage}, "an image"
	}
	return nil, ""
}

// kindLabel names a kind for a person.
func kindLabel(it *Item) string {
	switch it.Kind {
	case KindXLSX:
		return "Excel workbook"
	case KindXLSM:
		return "Excel workbook with macros"
	case KindDOCX:
		return "Word document"
	case KindDOCM:
		return "Word document with macros"
	case KindPPTX:
		return "PowerPoint presentation"
	case KindPPTM:
		return "PowerPoint presentation with macros"
	case KindZip:
		return "zip archive"
	case KindPDF:
		return "PDF"
	case KindCSV:
		return "CSV text"
	case KindTSV:
		return "tab-separated text"
	case KindMarkdown:
		return "Markdown text"
	case KindText:
		return "text"
	case KindImage:
		if it.Image != nil {
			return it.Image.Format + " image"
		}
		return "image"
	case KindOLE:
		return "legacy or protected Office file"
	case KindBinary:
		return "unknown binary"
	case KindEmpty:
		return "empty file"
	case KindSymlink:
		return "symlink"
	case KindSpecial:
		return "special file"
	case KindFolder:
		return "folder"
	}
	return string(it.Kind)
}
