package linediff

import (
	"slices"
	"testing"
)

func TestChanged(t *testing.T) {
	for _, tc := range []struct {
		before, after  string
		removed, added []string
	}{
		{"a\nb\n", "a\nb\n", nil, nil},
		{"a\nb\n", "b\na\n", nil, nil},
		{"a\nb\n", "a\nc\n", []string{"b"}, []string{"c"}},
		{"a\na\n", "a\n", []string{"a"}, nil},
		{"x = 1\n", "x = 1\ny = 2\ny = 2\n", nil, []string{"y = 2", "y = 2"}},
	} {
		removed, added := Changed(tc.before, tc.after)
		if !slices.Equal(removed, tc.removed) || !slices.Equal(added, tc.added) {
			t.Errorf("Changed(%q, %q) = %q, %q; want %q, %q", tc.before, tc.after, removed, added, tc.removed, tc.added)
		}
	}
}
