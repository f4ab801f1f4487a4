// Package visible makes text an agent influenced safe to show a person:
// paths that failed validation, commands, patterns, reasons, user agents,
// file names. The text is stored as received; only what is shown passes
// through here.
//
// Guaranteed: the result of Text and Line holds no C0 or C1 control
// character (Text keeps tab and newline), no DEL, no invalid UTF-8, no
// line or paragraph separator and no Unicode format character (category
// Cf: bidi embeddings, overrides and isolates such as U+202E, zero-width
// joiners, the BOM). Each is replaced by an escape a person can read and
// an agent cannot use to move the cursor, recolour a terminal or reorder
// the line: "\x1b", "\x85", "\u202e", "\xff" for an invalid byte. So an
// ANSI sequence shows as the text "\x1b[31m", inert. Cut says when it
// cuts.
//
// Not guaranteed: a backslash in the text is left as it is, so an agent
// can write a literal "\u202e" that looks like an escaped one (it is
// equally harmless); look-alike letters (Cyrillic а for Latin a) and
// combining marks are shown as they are; markup (HTML, Pango) is not
// escaped here — each surface that renders markup escapes it itself.
package visible

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s with every control and format character made visible as
// an escape; tab and newline are kept (for multi-line commands).
func Text(s string) string { return escape(s, false) }

// Line is Text for a one-line place (a table cell, a terminal column):
// tab, newline and carriage return are made visible too.
func Line(s string) string { return escape(s, true) }

// Hidden reports whether Text would change s: whether s holds a character
// a person cannot see or that reorders what they see (tab and newline
// aside). A command that must read as it runs is refused when it does.
func Hidden(s string) bool { return Text(s) != s }

// Needs reports whether Line would change s.
func Needs(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return true
			}
		}
		if hidden(r) || r == '\t' || r == '\n' {
			return true
		}
	}
	return false
}

func hidden(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' || r >= 0x7f && r < 0xa0 ||
		r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Cf, r)
}

func escape(s string, line bool) string {
	if !Needs(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !line && (r == '\t' || r == '\n'):
			b.WriteByte(byte(r))
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Cut returns s cut to at most n runes; when it cuts, it says so and by
// how much: "…(cut: 1234 more bytes)". It never splits a rune.
func Cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	end, count := 0, 0
	for i := range s {
		if count == n {
			end = i
			break
		}
		count++
	}
	return fmt.Sprintf("%s…(cut: %d more bytes)", s[:end], len(s)-end)
}
