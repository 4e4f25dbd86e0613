package inventory

import "strconv"

// A PDF page's text is drawn by text-showing operators in its content
// stream. pdfcpu decodes the stream (pdfcpu.ExtractPageContent) but does
// not interpret it, so this file scans the decoded operators: it is a
// lexer for content streams, not a PDF parser (objects, cross references,
// filters and encryption are pdfcpu's).

// textFont tells how many bytes a font uses per character code: 2 for a
// composite (Type0) font, which almost always uses a two-byte encoding
// such as Identity-H, and 1 otherwise.
type textFont func(name string) int

// xobject resolves a named XObject drawn by "Do": for a form, its decoded
// content and the functions to look up its own fonts and XObjects.
type xobject func(name string) (form *formXObject, isImage bool)

type formXObject struct {
	content []byte
	fonts   textFont
	xobjs   xobject
	id      int // object number, to stop cycles
}

// textState is the part of the graphics state the scan needs.
type textState struct {
	bytesPerCode int // of the current font
	invisible    bool
}

// pageText is what a content stream shows.
type pageText struct {
	chars, invisible int // character codes shown; those in an invisible render mode
	inlineImages     int
	imageDraws       int
	truncated        bool // stopped at the nesting limit or a form cycle
}

// maxFormDepth bounds the nesting of forms drawing forms.
const maxFormDepth = 12

// scanContent counts the text and inline images of a content stream and
// of the forms it draws.
func scanContent(content []byte, fonts textFont, xobjs xobject, out *pageText) {
	scan(content, fonts, xobjs, textState{bytesPerCode: 1}, out, map[int]bool{}, 0)
}

func scan(b []byte, fonts textFont, xobjs xobject, st textState, out *pageText, active map[int]bool, depth int) {
	var (
		stack    []textState // q/Q
		operands []operand
		arrayBuf []operand // strings inside the array being read
		inArray  int
	)
	show := func(n int) {
		codes := n / max(st.bytesPerCode, 1)
		if n > 0 && codes == 0 {
			codes = 1
		}
		out.chars += codes
		if st.invisible {
			out.invisible += codes
		}
	}
	lx := lexer{b: b}
	for {
		tok, ok := lx.next()
		if !ok {
			return
		}
		switch tok.kind {
		case tokArrayOpen:
			inArray++
			continue
		case tokArrayClose:
			if inArray > 0 {
				inArray--
			}
			if inArray == 0 {
				operands = append(operands, operand{kind: tokArrayClose, arr: arrayBuf})
				arrayBuf = nil
			}
			continue
		case tokOperator:
		default:
			if inArray > 0 {
				if tok.kind == tokString {
					arrayBuf = append(arrayBuf, operand{kind: tokString, n: tok.n})
				}
				continue
			}
			operands = append(operands, operand{kind: tok.kind, n: tok.n, s: tok.s})
			continue
		}
		switch tok.s {
		case "q":
			stack = append(stack, st)
		case "Q":
			if len(stack) > 0 {
				st = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			}
		case "Tf":
			if len(operands) >= 2 && operands[len(operands)-2].kind == tokName && fonts != nil {
				st.bytesPerCode = fonts(operands[len(operands)-2].s)
			}
		case "Tr":
			if len(operands) >= 1 && operands[len(operands)-1].kind == tokNumber {
				mode, err := strconv.ParseFloat(operands[len(operands)-1].s, 64)
				st.invisible = err == nil && (mode == 3 || mode == 7)
			}
		case "Tj", "'":
			if len(operands) >= 1 && operands[len(operands)-1].kind == tokString {
				show(operands[len(operands)-1].n)
			}
		case `"`:
			if len(operands) >= 3 && operands[len(operands)-1].kind == tokString {
				show(operands[len(operands)-1].n)
			}
		case "TJ":
			if len(operands) >= 1 && operands[len(operands)-1].kind == tokArrayClose {
				for _, s := range operands[len(operands)-1].arr {
					show(s.n)
				}
			}
		case "BI":
			out.inlineImages++
			lx.skipInlineImage()
		case "Do":
			if len(operands) >= 1 && operands[len(operands)-1].kind == tokName && xobjs != nil {
				form, isImage := xobjs(operands[len(operands)-1].s)
				switch {
				case isImage:
					out.imageDraws++
				case form != nil:
					if depth >= maxFormDepth || active[form.id] {
						out.truncated = true
						break
					}
					active[form.id] = true
					scan(form.content, form.fonts, form.xobjs, st, out, active, depth+1)
					delete(active, form.id)
				}
			}
		}
		operands = operands[:0]
	}
}

type tokKind int

const (
	tokOperator tokKind = iota
	tokNumber
	tokName
	tokString
	tokArrayOpen
	tokArrayClose
	tokDict // << or >>, ignored
)

type token struct {
	kind tokKind
	s    string // operator, number or name (without "/")
	n    int    // bytes of a string once its escapes are decoded
}

type operand struct {
	kind tokKind
	s    string
	n    int
	arr  []operand
}

// lexer splits a content stream into tokens (ISO 32000-1, 7.2 and 8.9.7).
type lexer struct {
	b []byte
	i int
}

func isSpace(c byte) bool {
	return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

func isDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func (l *lexer) next() (token, bool) {
	for l.i < len(l.b) {
		c := l.b[l.i]
		switch {
		case isSpace(c):
			l.i++
		case c == '%':
			for l.i < len(l.b) && l.b[l.i] != '\n' && l.b[l.i] != '\r' {
				l.i++
			}
		case c == '(':
			return token{kind: tokString, n: l.literal()}, true
		case c == '<':
			if l.i+1 < len(l.b) && l.b[l.i+1] == '<' {
				l.i += 2
				return token{kind: tokDict}, true
			}
			return token{kind: tokString, n: l.hex()}, true
		case c == '>':
			l.i++
			if l.i < len(l.b) && l.b[l.i] == '>' {
				l.i++
			}
			return token{kind: tokDict}, true
		case c == '[':
			l.i++
			return token{kind: tokArrayOpen}, true
		case c == ']':
			l.i++
			return token{kind: tokArrayClose}, true
		case c == '{' || c == '}' || c == ')':
			l.i++ // not valid here; skip
		case c == '/':
			l.i++
			start := l.i
			for l.i < len(l.b) && !isSpace(l.b[l.i]) && !isDelim(l.b[l.i]) {
				l.i++
			}
			return token{kind: tokName, s: string(l.b[start:l.i])}, true
		default:
			start := l.i
			for l.i < len(l.b) && !isSpace(l.b[l.i]) && !isDelim(l.b[l.i]) {
				l.i++
			}
			w := string(l.b[start:l.i])
			if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' {
				return token{kind: tokNumber, s: w}, true
			}
			return token{kind: tokOperator, s: w}, true
		}
	}
	return token{}, false
}

// literal reads a (string) with balanced parentheses and returns how many
// bytes it holds once escapes are decoded.
func (l *lexer) literal() int {
	l.i++ // (
	depth, n := 1, 0
	for l.i < len(l.b) {
		c := l.b[l.i]
		l.i++
		switch c {
		case '\\':
			if l.i >= len(l.b) {
				return n
			}
			e := l.b[l.i]
			l.i++
			switch {
			case e == '\r':
				if l.i < len(l.b) && l.b[l.i] == '\n' {
					l.i++
				}
				continue // line continuation: no byte
			case e == '\n':
				continue
			case e >= '0' && e <= '7':
				for k := 0; k < 2 && l.i < len(l.b) && l.b[l.i] >= '0' && l.b[l.i] <= '7'; k++ {
					l.i++
				}
			}
			n++
		case '(':
			depth++
			n++
		case ')':
			depth--
			if depth == 0 {
				return n
			}
			n++
		default:
			n++
		}
	}
	return n
}

// hex reads a <hex string> and returns how many bytes it holds.
func (l *lexer) hex() int {
	l.i++ // <
	digits := 0
	for l.i < len(l.b) {
		c := l.b[l.i]
		l.i++
		if c == '>' {
			break
		}
		if (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') {
			digits++
		}
	}
	return (digits + 1) / 2
}

// skipInlineImage moves past an inline image's dictionary and data, up to
// and including its EI operator. The data is binary, so EI is recognised
// only between white space (or at the end of the stream).
func (l *lexer) skipInlineImage() {
	// The dictionary runs to the ID operator.
	for {
		tok, ok := l.next()
		if !ok {
			return
		}
		if tok.kind == tokOperator && tok.s == "ID" {
			break
		}
	}
	if l.i < len(l.b) {
		l.i++ // the single white-space byte after ID
	}
	for ; l.i+1 < len(l.b); l.i++ {
		if l.b[l.i] == 'E' && l.b[l.i+1] == 'I' && (l.i == 0 || isSpace(l.b[l.i-1])) &&
			(l.i+2 == len(l.b) || isSpace(l.b[l.i+2]) || isDelim(l.b[l.i+2])) {
			l.i += 2
			return
		}
	}
	l.i = len(l.b)
}
