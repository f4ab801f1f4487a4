package docread

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxRTFDepth bounds how deeply RTF groups may nest.
const maxRTFDepth = 512

// rtfSkip are destinations whose text is not part of the document body.
var rtfSkip = map[string]bool{
	"fonttbl": true, "colortbl": true, "stylesheet": true, "info": true, "pict": true,
	"object": true, "header": true, "headerl": true, "headerr": true, "headerf": true,
	"footer": true, "footerl": true, "footerr": true, "footerf": true, "listtable": true,
	"listoverridetable": true, "revtbl": true, "rsidtbl": true, "generator": true,
	"xmlnstbl": true, "themedata": true, "colorschememapping": true, "datastore": true,
	"latentstyles": true, "fldinst": true, "filetbl": true, "nonshppict": true,
	"pgdsctbl": true, "protusertbl": true, "mmathPr": true, "footnote": true,
	"annotation": true, "atnid": true, "atnauthor": true, "bkmkstart": true, "bkmkend": true,
	"shpinst": true, "blipuid": true, "listtext": false,
}

// rtfChars are control words that stand for one character.
var rtfChars = map[string]string{
	"tab": "\t", "cell": "\t", "nestcell": "\t", "emdash": "—", "endash": "–",
	"bullet": "•", "lquote": "‘", "rquote": "’", "ldblquote": "“", "rdblquote": "”",
	"emspace": " ", "enspace": " ", "qmspace": " ",
}

// cp1252 maps the bytes 0x80–0x9F of Windows-1252; the rest of the high
// half is Latin-1.
var cp1252 = [32]rune{
	'€', 0xFFFD, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0xFFFD, 'Ž', 0xFFFD,
	0xFFFD, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0xFFFD, 'ž', 'Ÿ',
}

func winByte(b byte) rune {
	if b >= 0x80 && b < 0xA0 {
		return cp1252[b-0x80]
	}
	return rune(b)
}

type rtfGroup struct {
	skip bool // a destination whose text is not shown
	uc   int  // characters to skip after \uN
}

// extractRTF writes the body text of an RTF document. It reads the group
// structure, control words and symbols of the RTF 1.9 specification; text
// in \'hh escapes and plain bytes is read as Windows-1252.
func extractRTF(data []byte, w *textWriter) error {
	if !strings.HasPrefix(string(data[:min(len(data), 5)]), `{\rtf`) {
		return damaged("it is not an RTF document.")
	}
	var (
		stack = make([]rtfGroup, 1, 16)
		run   strings.Builder
		skipN int  // fallback characters still to skip after \uN
		high  rune // a pending UTF-16 high surrogate
	)
	stack[0] = rtfGroup{uc: 1}
	flush := func() error {
		if run.Len() == 0 {
			return nil
		}
		err := w.text(run.String())
		run.Reset()
		return err
	}
	emit := func(r rune) {
		if stack[len(stack)-1].skip {
			return
		}
		if skipN > 0 {
			skipN--
			return
		}
		run.WriteRune(r)
	}
	newline := func() error {
		if stack[len(stack)-1].skip {
			return nil
		}
		err := flush()
		w.newline()
		return err
	}
	for i := 0; i < len(data); {
		c := data[i]
		switch c {
		case '{':
			if len(stack) >= maxRTFDepth {
				return damaged("its groups nest more than %d deep.", maxRTFDepth)
			}
			stack = append(stack, stack[len(stack)-1])
			skipN = 0
			i++
		case '}':
			stack = stack[:len(stack)-1]
			skipN = 0
			i++
			if len(stack) == 1 {
				return flush() // the end of the document; anything after is ignored
			}
		case '\r', '\n':
			i++
		case '\\':
			i++
			if i >= len(data) {
				return flush()
			}
			c = data[i]
			if !isASCIILetter(c) {
				i++
				switch c {
				case '\\', '{', '}':
					emit(rune(c))
				case '\'':
					if i+2 <= len(data) {
						if v, err := strconv.ParseUint(string(data[i:i+2]), 16, 8); err == nil {
							emit(winByte(byte(v)))
						}
						i += 2
					}
				case '*':
					stack[len(stack)-1].skip = true
				case '~':
					emit('\u00a0')
				case '_':
					emit('-')
				case '\r', '\n':
					if err := newline(); err != nil {
						return err
					}
				}
				continue
			}
			start := i
			for i < len(data) && isASCIILetter(data[i]) && i-start < 32 {
				i++
			}
			word := string(data[start:i])
			numStart := i
			if i < len(data) && data[i] == '-' {
				i++
			}
			for i < len(data) && data[i] >= '0' && data[i] <= '9' && i-numStart < 11 {
				i++
			}
			num, hasNum := 0, i > numStart
			if hasNum {
				n, err := strconv.Atoi(string(data[numStart:i]))
				if err != nil {
					hasNum = false
				} else {
					num = n
				}
			}
			if i < len(data) && data[i] == ' ' {
				i++
			}
			top := &stack[len(stack)-1]
			switch {
			case word == "bin" && hasNum:
				i += min(max(num, 0), len(data)-i)
			case word == "u" && hasNum:
				r := rune(num)
				if r < 0 {
					r += 65536
				}
				switch {
				case r >= 0xD800 && r < 0xDC00:
					high = r
				case r >= 0xDC00 && r < 0xE000 && high != 0:
					r = 0x10000 + (high-0xD800)<<10 + (r - 0xDC00)
					high = 0
					emit(r)
				default:
					if !utf8.ValidRune(r) {
						r = utf8.RuneError
					}
					emit(r)
				}
				if !top.skip {
					skipN = top.uc
				}
			case word == "uc" && hasNum:
				top.uc = min(max(num, 0), 16)
			case word == "par" || word == "line" || word == "row" || word == "sect" || word == "page" || word == "nestrow":
				if err := newline(); err != nil {
					return err
				}
			case rtfSkip[word]:
				top.skip = true
			case rtfChars[word] != "":
				for _, r := range rtfChars[word] {
					emit(r)
				}
			}
		default:
			if c == '\t' {
				emit('\t')
			} else if c >= 0x20 {
				emit(winByte(c))
			}
			i++
		}
		if run.Len() >= 64<<10 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
