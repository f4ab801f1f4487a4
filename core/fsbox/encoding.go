package fsbox

import (
	"bytes"
	"io"
	"unicode/utf8"

	"corral/core/errs"
)

// Encodings Read reports for text that is not UTF-8 (ReadResult.Encoding).
const (
	Windows1252 = "windows-1252"
	Latin1      = "iso-8859-1"
)

// MaxBase64Bytes is how many bytes of a file ReadBase64 returns per call.
const MaxBase64Bytes = 4 << 20

// cp1252 maps bytes 0x80–0x9F of windows-1252 to their runes; 0 marks
// the five bytes windows-1252 leaves undefined.
var cp1252 = [32]rune{
	'€', 0, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0, 'Ž', 0,
	0, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0, 'ž', 'Ÿ',
}

// eightBit says which 8-bit encoding head, the start of a file that is
// not UTF-8, is taken to be in: windows-1252 (a superset of Latin-1's
// printable characters, what most such files are), or iso-8859-1 when
// head uses a byte windows-1252 leaves undefined. "" means binary: a NUL
// byte, or a control character text does not have (anything below 0x20
// but tab, line feed, vertical tab, form feed, carriage return and escape).
//
// Not guaranteed: the guess is right. Any byte sequence is valid in both
// encodings, so a file in another 8-bit encoding (KOI8-R, ISO-8859-2, …)
// comes out as the wrong letters, and a binary file without such control
// characters in its first 8 KiB comes out as text.
func eightBit(head []byte) string {
	enc := Windows1252
	for _, b := range head {
		switch {
		case b < 0x20 && b != '\t' && b != '\n' && b != '\v' && b != '\f' && b != '\r' && b != 0x1b:
			return ""
		case b >= 0x80 && b <= 0x9f && cp1252[b-0x80] == 0:
			enc = Latin1
		}
	}
	return enc
}

// decode8 turns b, in the 8-bit encoding enc, into UTF-8. A byte
// windows-1252 leaves undefined becomes the Latin-1 control character of
// the same number.
func decode8(b []byte, enc string) string {
	out := make([]byte, 0, len(b)+len(b)/8)
	for _, c := range b {
		switch {
		case c < 0x80:
			out = append(out, c)
		case c <= 0x9f && enc == Windows1252 && cp1252[c-0x80] != 0:
			out = utf8.AppendRune(out, cp1252[c-0x80])
		default:
			out = utf8.AppendRune(out, rune(c))
		}
	}
	return contentString(out)
}

// ReadBase64 returns up to limit bytes (0 or more than MaxBase64Bytes:
// MaxBase64Bytes) of the regular file rel of d from byte offset, whatever
// they hold, as a result of type "binary" (the transport sends Data in
// base64). An offset past the end answers invalid_params.
func (d Dir) ReadBase64(rel string, offset int64, limit int) (ReadResult, error) {
	name, slash, err := d.name(rel)
	if err != nil {
		return ReadResult{}, err
	}
	v := d.Visible(name)
	if offset < 0 || limit < 0 {
		return ReadResult{}, errs.New(errs.InvalidParams, v, "The offset and limit must not be negative.")
	}
	if limit == 0 || limit > MaxBase64Bytes {
		limit = MaxBase64Bytes
	}
	f, fi, err := d.openRegular(name, slash)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()
	if offset > 0 && offset >= fi.Size() {
		return ReadResult{}, errs.New(errs.InvalidParams, v, "%s has %d bytes, so there is no byte %d to start from.", v, fi.Size(), offset)
	}
	var buf bytes.Buffer
	buf.Grow(int(min(int64(limit), max(fi.Size()-offset, 0))) + 1)
	if _, err := io.Copy(&buf, io.LimitReader(io.NewSectionReader(f, offset, int64(limit)+1), int64(limit)+1)); err != nil {
		return ReadResult{}, d.fail(err, name)
	}
	data := buf.Bytes()
	more := len(data) > limit
	if more {
		data = data[:limit]
	}
	return ReadResult{Type: "binary", Path: v, Bytes: fi.Size(), Encoding: "base64", Offset: offset, Data: data, Truncated: more}, nil
}
