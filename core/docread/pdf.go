package docread

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/ledongthuc/pdf"
)

// Bounds of the PDF page tree walk.
const (
	maxPDFPages    = 100000
	maxPDFTreeWalk = 200000 // page tree nodes visited, cycles included
	maxPDFTreeDeep = 64
)

// extractPDF writes each page's text after a "=== Page N ===" marker.
// github.com/ledongthuc/pdf parses the file, its streams and fonts; the
// page tree walk and the text layout (where lines break, where words
// part) are done here.
func extractPDF(data []byte, w *textWriter) (n int, err error) {
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if strings.Contains(err.Error(), "encrypt") || strings.Contains(err.Error(), "password") {
			return 0, &Error{Encrypted, "The document could not be read: it is encrypted (password-protected)."}
		}
		return 0, errLooksDamaged
	}
	pages := pdfPages(r)
	if len(pages) == 0 {
		return 0, damaged("it has no pages.")
	}
	for i, p := range pages {
		if err := w.marker(fmt.Sprintf("=== Page %d ===", i+1)); err != nil {
			return len(pages), err
		}
		if err := pdfPageText(p, w); err != nil {
			return len(pages), err
		}
	}
	return len(pages), nil
}

// pdfPages walks the page tree in order, bounded against cycles and lies
// in /Count.
func pdfPages(r *pdf.Reader) []pdf.Value {
	var out []pdf.Value
	visits := 0
	var walk func(v pdf.Value, depth int)
	walk = func(v pdf.Value, depth int) {
		visits++
		if depth > maxPDFTreeDeep || visits > maxPDFTreeWalk || len(out) >= maxPDFPages {
			return
		}
		kids := v.Key("Kids")
		if v.Key("Type").Name() == "Page" || (kids.Kind() != pdf.Array && v.Key("Contents").Kind() != pdf.Null) {
			out = append(out, v)
			return
		}
		for i := 0; i < kids.Len(); i++ {
			walk(kids.Index(i), depth+1)
		}
	}
	walk(r.Trailer().Key("Root").Key("Pages"), 0)
	return out
}

// textState follows the text and graphics state a content stream sets,
// enough to know where each piece of text starts.
type textState struct {
	w        *textWriter
	fonts    map[string]*pdf.Font
	page     pdf.Page
	font     *pdf.Font
	enc      pdf.TextEncoding
	simple   bool // one byte per glyph, widths from /Widths
	size     float64
	leading  float64
	charSp   float64
	wordSp   float64
	hScale   float64
	ctm      matrix
	ctmStack []matrix
	tm, tlm  matrix
	// Where the previous text ended, in device space, and its font size
	// there; started is false before the page's first text.
	lastX, lastY, lastSize float64
	started                bool
}

type matrix [6]float64 // a b c d e f

var identity = matrix{1, 0, 0, 1, 0, 0}

func (m matrix) mul(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func (m matrix) apply(x, y float64) (float64, float64) {
	return x*m[0] + y*m[2] + m[4], x*m[1] + y*m[3] + m[5]
}

// pdfPageText writes one page's text. A page whose content cannot be
// interpreted contributes what was read before the fault.
func pdfPageText(v pdf.Value, w *textWriter) (err error) {
	p := pdf.Page{V: v}
	contents := v.Key("Contents")
	if contents.Kind() == pdf.Null {
		return nil
	}
	st := &textState{w: w, page: p, fonts: map[string]*pdf.Font{}, ctm: identity, tm: identity, tlm: identity, hScale: 1}
	defer func() {
		if r := recover(); r != nil {
			if r == errFull { // the text is full: stop the whole document
				err = errFull
			}
		}
	}()
	pdf.Interpret(contents, func(stk *pdf.Stack, op string) {
		n := stk.Len()
		args := make([]pdf.Value, n)
		for i := n - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		st.do(op, args)
	})
	w.newline()
	return nil
}

func num(args []pdf.Value, i int) float64 {
	if i >= len(args) {
		return 0
	}
	f := args[i].Float64()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

func (st *textState) do(op string, args []pdf.Value) {
	switch op {
	case "q":
		if len(st.ctmStack) < 256 {
			st.ctmStack = append(st.ctmStack, st.ctm)
		}
	case "Q":
		if k := len(st.ctmStack); k > 0 {
			st.ctm, st.ctmStack = st.ctmStack[k-1], st.ctmStack[:k-1]
		}
	case "cm":
		if len(args) == 6 {
			st.ctm = matrix{num(args, 0), num(args, 1), num(args, 2), num(args, 3), num(args, 4), num(args, 5)}.mul(st.ctm)
		}
	case "BT":
		st.tm, st.tlm = identity, identity
	case "Tf":
		if len(args) == 2 {
			st.setFont(args[0].Name(), num(args, 1))
		}
	case "TL":
		st.leading = num(args, 0)
	case "Tc":
		st.charSp = num(args, 0)
	case "Tw":
		st.wordSp = num(args, 0)
	case "Tz":
		st.hScale = num(args, 0) / 100
	case "Td":
		st.move(num(args, 0), num(args, 1))
	case "TD":
		st.leading = -num(args, 1)
		st.move(num(args, 0), num(args, 1))
	case "Tm":
		if len(args) == 6 {
			st.tlm = matrix{num(args, 0), num(args, 1), num(args, 2), num(args, 3), num(args, 4), num(args, 5)}
			st.tm = st.tlm
		}
	case "T*":
		st.move(0, -st.leading)
	case "'":
		st.move(0, -st.leading)
		if len(args) == 1 {
			st.show(args[0].RawString())
		}
	case "\"":
		if len(args) == 3 {
			st.wordSp, st.charSp = num(args, 0), num(args, 1)
			st.move(0, -st.leading)
			st.show(args[2].RawString())
		}
	case "Tj":
		if len(args) == 1 {
			st.show(args[0].RawString())
		}
	case "TJ":
		if len(args) != 1 {
			return
		}
		a := args[0]
		for i := 0; i < a.Len(); i++ {
			x := a.Index(i)
			switch x.Kind() {
			case pdf.String:
				st.show(x.RawString())
			case pdf.Integer, pdf.Real:
				adj := x.Float64()
				if math.IsNaN(adj) || math.IsInf(adj, 0) {
					continue
				}
				st.tm = matrix{1, 0, 0, 1, -adj / 1000 * st.size * st.hScale, 0}.mul(st.tm)
			}
		}
	}
}

func (st *textState) move(tx, ty float64) {
	st.tlm = matrix{1, 0, 0, 1, tx, ty}.mul(st.tlm)
	st.tm = st.tlm
}

func (st *textState) setFont(name string, size float64) {
	st.size = size
	f, ok := st.fonts[name]
	if !ok {
		if len(st.fonts) > 1024 {
			return
		}
		ff := st.page.Font(name)
		f = &ff
		st.fonts[name] = f
	}
	st.font = f
	st.enc = nil
	st.simple = f.V.Key("Subtype").Name() != "Type0"
}

// show writes a string shown at the current text position, with a line
// break or a space before it when the position says the text does not
// continue the previous run.
func (st *textState) show(raw string) {
	if st.font == nil {
		return
	}
	if st.enc == nil {
		st.enc = st.font.Encoder()
	}
	text := st.enc.Decode(raw)
	trm := matrix{st.size * st.hScale, 0, 0, st.size, 0, 0}.mul(st.tm).mul(st.ctm)
	x, y := trm[4], trm[5]
	size := math.Hypot(trm[2], trm[3]) // the rendered font size
	if size == 0 {
		size = 1
	}
	if st.started {
		dy := math.Abs(y - st.lastY)
		dx := x - st.lastX
		ref := math.Max(size, st.lastSize)
		switch {
		case dy > ref*0.5:
			st.w.newline()
		case dx > ref*0.15 || dx < -ref*2:
			st.w.spaceBefore()
		}
	}
	// Advance the text matrix over the string.
	var adv float64
	if st.simple {
		for i := 0; i < len(raw); i++ {
			gw := st.font.Width(int(raw[i])) / 1000
			if gw == 0 {
				gw = 0.5
			}
			adv += (gw*st.size + st.charSp) * st.hScale
			if raw[i] == ' ' {
				adv += st.wordSp * st.hScale
			}
		}
	} else {
		for range text {
			adv += (0.5*st.size + st.charSp) * st.hScale
		}
	}
	st.tm = matrix{1, 0, 0, 1, adv, 0}.mul(st.tm)
	end := matrix{1, 0, 0, 1, 0, 0}.mul(st.tm).mul(st.ctm)
	st.lastX, st.lastY, st.lastSize, st.started = end[4], y, size, true

	var b strings.Builder
	for _, r := range text {
		switch {
		case r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r == '\t':
			b.WriteByte('\t')
		case r == 0 || unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
	}
	if err := st.w.text(b.String()); err != nil {
		panic(errFull)
	}
}
