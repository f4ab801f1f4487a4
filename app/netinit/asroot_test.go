package main

import (
	"slices"
	"testing"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		want []record // nil with ok false: refused
		ok   bool
	}{
		{"empty", "", nil, true},
		{"one of each", "b\x00/usr/x\x00i\x00/s/a, b:c\x00o\x00/l\x00/u\x00/w\x00",
			[]record{{'b', []string{"/usr/x"}}, {'i', []string{"/s/a, b:c"}}, {'o', []string{"/l", "/u", "/w"}}}, true},
		{"unknown kind", "x\x00/a\x00", nil, false},
		{"short overlay", "o\x00/l\x00/u\x00", nil, false},
		{"relative path", "i\x00a\x00", nil, false},
		{"comma in an overlay layer", "o\x00/l,x\x00/u\x00/w\x00", nil, false},
		{"missing path", "b\x00", nil, false},
	} {
		got, err := parseSpec([]byte(tc.spec))
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if !slices.EqualFunc(got, tc.want, func(a, b record) bool { return a.kind == b.kind && slices.Equal(a.paths, b.paths) }) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
