package patch

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// Diff's output applies with this package's own reader and gives the
// new text back, for edits at the start, middle and end, with and without
// a final newline.
func TestDiffRoundTrip(t *testing.T) {
	var long strings.Builder
	for i := range 40 {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	l := long.String()
	cases := []struct{ old, new string }{
		{"a\nb\nc\n", "a\nB\nc\n"},
		{"", "new\n"},
		{"gone\n", ""},
		{"a\nb", "a\nb\n"},
		{l, strings.Replace(strings.Replace(l, "line 2\n", "two\n", 1), "line 30\n", "", 1) + "tail"},
		{l, "head\n" + l},
	}
	for i, c := range cases {
		d := Diff("f.txt", "f.txt", []byte(c.old), []byte(c.new))
		if d == "" {
			t.Fatalf("case %d: empty diff", i)
		}
		p, err := Parse(d)
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, d)
		}
		r, err := p.Files[0].Apply(context.Background(), []byte(c.old))
		if err != nil {
			t.Fatalf("case %d: apply: %v\n%s", i, err, d)
		}
		if string(r.Content) != c.new {
			t.Errorf("case %d: got %q, want %q\n%s", i, r.Content, c.new, d)
		}
	}
	if d := Diff("x", "x", []byte("same"), []byte("same")); d != "" {
		t.Errorf("equal texts: %q", d)
	}
}
