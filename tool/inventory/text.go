package inventory

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Encodings a Text can report.
const (
	EncodingUTF8    = "UTF-8"
	EncodingUTF16LE = "UTF-16LE"
	EncodingUTF16BE = "UTF-16BE"
	EncodingUnknown = "not UTF-8"
)

// maxRaggedExamples is how many ragged CSV rows an item names.
const maxRaggedExamples = 5

// inspectText examines a text file: encoding, lines, line ends and, for
// CSV and TSV, the shape of the records.
func inspectText(ctx context.Context, f *os.File, it *Item) error {
	sr := io.NewSectionReader(f, 0, it.Size)
	head := make([]byte, 3)
	n, _ := io.ReadFull(sr, head)
	head = head[:n]
	t := &Text{Encoding: EncodingUTF8}
	it.Text = t

	var (
		body    io.Reader // the text as UTF-8, or as raw bytes when it is not
		decoded string    // the text of a UTF-16 file, decoded
	)
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		t.BOM = true
		body = io.NewSectionReader(f, 3, it.Size-3)
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		t.BOM = true
		raw, err := io.ReadAll(io.NewSectionReader(f, 2, it.Size-2))
		if err != nil {
			it.Problem = "this file could not be read (" + plainIOError(err) + ")"
			return nil
		}
		be := head[0] == 0xFE
		t.Encoding = EncodingUTF16LE
		if be {
			t.Encoding = EncodingUTF16BE
		}
		if len(raw)%2 != 0 {
			it.Problem = "this UTF-16 text has an odd number of bytes: it is cut short or not UTF-16"
			raw = raw[:len(raw)-1]
		}
		u := make([]uint16, len(raw)/2)
		for i := range u {
			if be {
				u[i] = uint16(raw[2*i])<<8 | uint16(raw[2*i+1])
			} else {
				u[i] = uint16(raw[2*i+1])<<8 | uint16(raw[2*i])
			}
		}
		decoded = string(utf16.Decode(u))
		body = strings.NewReader(decoded)
	default:
		body = io.NewSectionReader(f, 0, it.Size)
	}

	if err := scanText(ctx, body, t); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		it.Problem = "this file could not be read to the end (" + plainIOError(err) + ")"
		return nil
	}
	if t.Encoding == EncodingUTF8 {
		t.UTF8 = t.InvalidBytes == 0
		if !t.UTF8 {
			t.Encoding = EncodingUnknown
		}
	}

	if it.Kind != KindCSV && it.Kind != KindTSV {
		return nil
	}
	// A second pass for the records: encoding/csv streams, so a big file
	// is not held in memory.
	var records io.Reader
	switch {
	case t.Encoding == EncodingUTF16LE || t.Encoding == EncodingUTF16BE:
		records = strings.NewReader(decoded)
	case t.BOM:
		records = io.NewSectionReader(f, 3, it.Size-3)
	default:
		records = io.NewSectionReader(f, 0, it.Size)
	}
	c, err := scanCSV(ctx, records, it.Kind == KindTSV)
	if err != nil {
		return err
	}
	t.CSV = c
	return nil
}

// scanText reads r once, counting lines, line ends, NUL and bytes that are
// not UTF-8, without holding the file in memory.
func scanText(ctx context.Context, r io.Reader, t *Text) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		lf, crlf, cr int
		pendingCR    bool
		last         byte
		any          bool
		buf          = make([]byte, 64<<10)
		carry        int // bytes of an incomplete rune kept from the last chunk
		chunks       int
	)
	for {
		n, err := br.Read(buf[carry:])
		n += carry
		eof := err == io.EOF
		if err != nil && !eof {
			return err
		}
		if chunks++; chunks%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b := buf[:n]
		i := 0
		for i < len(b) {
			c := b[i]
			if pendingCR {
				pendingCR = false
				if c == '\n' {
					crlf++
					last = c
					i++
					continue
				}
				cr++
			}
			if c < utf8.RuneSelf {
				switch c {
				case '\n':
					lf++
				case '\r':
					pendingCR = true
				case 0:
					t.NUL = true
				}
				last, any = c, true
				i++
				continue
			}
			if !eof && !utf8.FullRune(b[i:]) {
				break // finish the rune with the next chunk
			}
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				t.InvalidBytes++
				if t.FirstInvalidLine == 0 {
					t.FirstInvalidLine = lf + crlf + cr + 1
				}
			}
			last, any = b[i+size-1], true
			i += size
		}
		carry = copy(buf, b[i:])
		if eof {
			break
		}
	}
	if pendingCR {
		cr++
	}
	t.Lines = lf + crlf + cr
	if any && last != '\n' && last != '\r' {
		t.Lines++ // a last line without a line end
	}
	kinds := 0
	for _, k := range []int{lf, crlf, cr} {
		if k > 0 {
			kinds++
		}
	}
	switch {
	case kinds > 1:
		t.LineEnd = "mixed"
	case lf > 0:
		t.LineEnd = "LF"
	case crlf > 0:
		t.LineEnd = "CRLF"
	case cr > 0:
		t.LineEnd = "CR"
	default:
		t.LineEnd = "none"
	}
	return nil
}

// scanCSV reads the records of r: the separator (for .csv, the most
// frequent of , ; tab | on the first line), the header's width, and the
// records of another width.
func scanCSV(ctx context.Context, r io.Reader, tsv bool) (*CSV, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	sep := '\t'
	if !tsv {
		first, _ := br.Peek(64 << 10)
		if i := bytes.IndexAny(first, "\r\n"); i >= 0 {
			first = first[:i]
		}
		sep = guessSeparator(first)
	}
	c := &CSV{Separator: string(sep)}
	cr := csv.NewReader(br)
	cr.Comma = sep
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				c.ParseError = fmt.Sprintf("line %d: %v", pe.Line, pe.Err)
			} else {
				c.ParseError = err.Error()
			}
			break
		}
		c.Records++
		if c.Records%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if c.Records == 1 {
			c.HeaderColumns = len(rec)
			continue
		}
		if len(rec) != c.HeaderColumns {
			c.RaggedRows++
			if len(c.RaggedExamples) < maxRaggedExamples {
				line, _ := cr.FieldPos(0)
				c.RaggedExamples = append(c.RaggedExamples, RaggedRow{Line: line, Fields: len(rec)})
			}
		}
	}
	return c, nil
}

// guessSeparator picks the separator of a CSV header line: the most
// frequent of , ; tab | outside double quotes, "," on a tie or none.
func guessSeparator(line []byte) rune {
	counts := map[byte]int{}
	quoted := false
	for _, b := range line {
		switch {
		case b == '"':
			quoted = !quoted
		case !quoted && (b == ',' || b == ';' || b == '\t' || b == '|'):
			counts[b]++
		}
	}
	best := byte(',')
	for _, b := range []byte{';', '\t', '|'} {
		if counts[b] > counts[best] {
			best = b
		}
	}
	return rune(best)
}
