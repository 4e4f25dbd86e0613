package inventory

import (
	"bytes"
	"io"
	"os"
)

// encryptedPackage is the name, in UTF-16LE as the compound file directory
// stores it, of the stream that holds an encrypted Office Open XML file.
var encryptedPackage = utf16le("EncryptedPackage")

func utf16le(s string) []byte {
	b := make([]byte, 0, 2*len(s))
	for _, c := range []byte(s) {
		b = append(b, c, 0)
	}
	return b
}

// inspectOLE examines a compound file (the container of legacy .xls, .doc
// and .ppt files and of password-protected .xlsx, .docx and .pptx files).
// Neither excelize nor anything else here reads these formats, so the item
// always gets a Problem; the directory is searched for the stream name that
// marks an encrypted Office file, to say which case it is.
func inspectOLE(f *os.File, it *Item) {
	// The directory is usually near the start; a few MiB covers it in
	// practice, and a miss only changes the wording.
	buf, err := io.ReadAll(io.NewSectionReader(f, 0, min(it.Size, 8<<20)))
	if err == nil && bytes.Contains(buf, encryptedPackage) {
		it.Problem = "this Office file is protected by a password (encrypted); nothing in it can be read without the password"
		return
	}
	it.Problem = "this is a legacy Office file (.xls, .doc or .ppt, the format before 2007) or another compound file; " +
		"its content cannot be read here: save it as .xlsx, .docx or .pptx (or export to PDF or CSV) to read it"
}
