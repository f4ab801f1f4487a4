package visible

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, text, line string }{
		// ordinary text is unchanged
		{"notes/todo.md", "notes/todo.md", "notes/todo.md"},
		{"café ünïcode 😀", "café ünïcode 😀", "café ünïcode 😀"},
		{"a\tb\nc", "a\tb\nc", `a\tb\nc`},
		// terminal and bidi tricks
		{"\x1b[2J\x1b[31mok", `\x1b[2J\x1b[31mok`, `\x1b[2J\x1b[31mok`},
		{"invoice_\u202Efdp.exe", `invoice_\u202efdp.exe`, `invoice_\u202efdp.exe`},
		{"a\u2066b\u2069", `a\u2066b\u2069`, `a\u2066b\u2069`},
		{"zero\u200bwidth\ufeff", `zero\u200bwidth\ufeff`, `zero\u200bwidth\ufeff`},
		{"cr\rover", `cr\rover`, `cr\rover`},
		{"c1\u0085\u009b", `c1\x85\x9b`, `c1\x85\x9b`},
		{"nul\x00del\x7f", `nul\x00del\x7f`, `nul\x00del\x7f`},
		{"sep\u2028", `sep\u2028`, `sep\u2028`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
	} {
		if got := Text(tc.in); got != tc.text {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
	}
}

func TestCut(t *testing.T) {
	if got := Cut("short", 10); got != "short" {
		t.Errorf("Cut short: %q", got)
	}
	got := Cut(strings.Repeat("é", 300), 200)
	if !strings.HasPrefix(got, strings.Repeat("é", 200)+"…") || !strings.Contains(got, "cut: 200 more bytes") {
		t.Errorf("Cut long: %q", got[len(got)-40:])
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[31m", "\u202e", "a\tb\nc", "\xff\xfe", "\u0085", "x\u200d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Line(s)
		if !utf8.ValidString(out) || Needs(out) {
			t.Fatalf("Line(%q) = %q still holds hidden characters", s, out)
		}
		if txt := Text(s); !utf8.ValidString(txt) || Needs(strings.NewReplacer("\t", "", "\n", "").Replace(txt)) {
			t.Fatalf("Text(%q) = %q still holds hidden characters", s, txt)
		}
		if !Needs(s) && out != s {
			t.Fatalf("Line changed clean text %q to %q", s, out)
		}
	})
}
