package inventory

import "testing"

// DA-B2: the content-stream scan counts what text operators show, so a
// page's text presence does not depend on one producer's habits.
func TestScanContent(t *testing.T) {
	fonts := func(name string) int {
		if name == "CJK" {
			return 2 // a Type0 font
		}
		return 1
	}
	form := &formXObject{content: []byte("BT /F1 9 Tf (in form) Tj ET"), fonts: fonts, id: 7}
	loop := &formXObject{id: 8}
	xobjs := func(name string) (*formXObject, bool) {
		switch name {
		case "Im0":
			return nil, true
		case "Fm0":
			return form, false
		case "Loop":
			return loop, false
		}
		return nil, false
	}
	loop.content = []byte("/Loop Do (x) Tj")
	loop.xobjs = xobjs

	tests := []struct {
		name                   string
		content                string
		chars, invisible, imgs int
		inline                 int
		truncated              bool
	}{
		{name: "simple", content: "BT /F1 12 Tf 72 700 Td (Hello) Tj ET", chars: 5},
		{name: "escapes", content: `BT (a\(b\)c\\d\101\n\
e) Tj ET`, chars: 10},
		{name: "nested parentheses", content: "BT (f(o)o) Tj ET", chars: 5},
		{name: "hex", content: "BT <48656C6C6F> Tj <414> Tj ET", chars: 7},
		{name: "TJ array", content: "BT [(Hel) -20 (lo) 10 <2121>] TJ ET", chars: 7},
		{name: "quote operators", content: "BT (ab) ' 1 2 (cde) \" ET", chars: 5},
		{name: "type0 font", content: "BT /CJK 10 Tf <00410042> Tj /F1 10 Tf (ab) Tj ET", chars: 4},
		{name: "invisible OCR layer", content: "BT 3 Tr (scan text) Tj 0 Tr (x) Tj ET", chars: 10, invisible: 9},
		{name: "render mode restored by Q", content: "q BT 3 Tr ET Q BT (seen) Tj ET", chars: 4},
		{name: "image only", content: "q 100 0 0 100 0 0 cm /Im0 Do Q", imgs: 1},
		{name: "inline image with EI in its data", content: "BI /W 2 /H 2 /BPC 8 /CS /G ID \x00EIx\xffEI\x01 EI Q BT (t) Tj ET", chars: 1, inline: 1},
		{name: "form text", content: "/Fm0 Do", chars: 7},
		{name: "form loop stops", content: "/Loop Do", chars: 1, truncated: true},
		{name: "comments and dicts", content: "% (not) Tj\n/P <</MCID 0>> BDC BT (ok) Tj ET EMC", chars: 2},
		{name: "unterminated string", content: "BT (abc", chars: 0},
		{name: "no text", content: "0 0 m 100 100 l S"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out pageText
			scanContent([]byte(tc.content), fonts, xobjs, &out)
			if out.chars != tc.chars || out.invisible != tc.invisible || out.imageDraws != tc.imgs || out.inlineImages != tc.inline || out.truncated != tc.truncated {
				t.Errorf("got chars %d invisible %d images %d inline %d truncated %v; want %d %d %d %d %v",
					out.chars, out.invisible, out.imageDraws, out.inlineImages, out.truncated,
					tc.chars, tc.invisible, tc.imgs, tc.inline, tc.truncated)
			}
		})
	}
}
