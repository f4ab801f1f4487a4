package fsbox

import (
	"testing"
	"unicode/utf8"
)

// FuzzDecode8: whatever the bytes, eightBit and decode8 never fail, the
// text is valid UTF-8 with one character per byte, and a line ending
// stays where it was.
func FuzzDecode8(f *testing.F) {
	for _, s := range []string{"caf\xe9\n", "\x93q\x94 \x80", "a\x81b", "", "\x00\x01", "plain ascii\r\n", "\xff\xfe\xfd"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		enc := eightBit(b)
		if enc == "" {
			enc = Windows1252
		}
		s := decode8(b, enc)
		if !utf8.ValidString(s) {
			t.Fatalf("decode8(%q) = %q: not UTF-8", b, s)
		}
		if n := utf8.RuneCountInString(s); n != len(b) {
			t.Fatalf("decode8(%q) = %q: %d characters for %d bytes", b, s, n, len(b))
		}
		i := 0
		for _, r := range s {
			if (r == '\n') != (b[i] == '\n') {
				t.Fatalf("decode8(%q): line ending moved at byte %d", b, i)
			}
			i++
		}
	})
}
