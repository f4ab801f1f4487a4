package capture

import "testing"

func TestCompleteUTF8(t *testing.T) {
	for in, want := range map[string]int{
		"":              0,
		"abc":           3,
		"é":             2,
		"a\xc3":         1,
		"a\xe2\x82":     1,
		"a\xe2\x82\xac": 4,
		"\xf0\x9f\x98":  0,
		"\xff":          1,
		"a\x80":         2,
	} {
		if got := completeUTF8([]byte(in)); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}
