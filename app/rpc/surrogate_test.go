package rpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"corral/core/errs"
)

func TestLoneSurrogate(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		lone bool
	}{
		// valid
		{`{"path":"café.txt"}`, false},
		{`{"path":"caf\u00e9.txt"}`, false},
		{`{"path":"\ud83d\ude00.txt"}`, false}, // a pair: 😀
		{`{"path":"\uD83D\uDE00"}`, false},
		// odd but fine: escapes that only look like surrogates
		{`{"path":"\\udcff"}`, false}, // an escaped backslash, then "udcff"
		{`{"path":"\\\ud83d\ude00"}`, false},
		{`{"path":"\ufffd"}`, false}, // U+FFFD itself, sent on purpose
		{`{"path":"\u12"}`, false},   // not JSON; not a surrogate either
		// lone halves
		{`{"path":"caf\udcff.txt"}`, true},
		{`{"path":"caf\udcFF.txt"}`, true},
		{`{"path":"\ud83d.txt"}`, true},
		{`{"path":"\ud83d"}`, true},
		{`{"path":"\ud83d\u0041"}`, true},
		{`{"path":"\ud83d\ud83d\ude00"}`, true},
		{`{"path":"\\\udcff"}`, true},
		{`{"caf\udcff":"x"}`, true}, // in a key
		{`{"a":["x","\ude00"]}`, true},
	} {
		if got := LoneSurrogate([]byte(tc.raw)); got != tc.lone {
			t.Errorf("LoneSurrogate(%s) = %v, want %v", tc.raw, got, tc.lone)
		}
	}
}

// A lone surrogate is refused with invalid_params (-32602 on the wire)
// before anything is decoded; today's decoder would have named
// "caf\ufffd.txt".
func TestDecodeParamsRefusesLoneSurrogates(t *testing.T) {
	var a struct {
		Path string `json:"path" rpc:"required"`
	}
	err := DecodeParams(json.RawMessage(`{"path":"caf\udcff.txt"}`), &a)
	if errs.KindOf(err) != errs.InvalidParams || a.Path != "" {
		t.Fatalf("DecodeParams: %v, path %q", err, a.Path)
	}
	if e := FromError(err); e.Code != CodeInvalidParams || !strings.Contains(e.Message, "surrogate") {
		t.Errorf("on the wire: %+v", e)
	}
	if err := DecodeParams(json.RawMessage(`{"path":"\ud83d\ude00.txt"}`), &a); err != nil || a.Path != "😀.txt" {
		t.Errorf("a surrogate pair: %v %q", err, a.Path)
	}
}

// FuzzLoneSurrogate checks LoneSurrogate against encoding/json itself: on
// valid UTF-8 JSON that neither holds U+FFFD nor escapes it, decoding
// produces U+FFFD exactly when the JSON holds a lone surrogate.
func FuzzLoneSurrogate(f *testing.F) {
	for _, s := range []string{
		`"caf\udcff.txt"`, `"\ud83d\ude00"`, `"\\udcff"`, `"\ud83d"`, `"\ud83d\u0041"`,
		`{"a":"\ud800\udc00","b":"\udfff"}`, `"\ufffd"`, `"plain"`, `"\\\ud83d\ude00"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := LoneSurrogate(raw)
		if !utf8.Valid(raw) || !json.Valid(raw) {
			return
		}
		if bytes.Contains(raw, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`)) {
			return
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		if want := bytes.Contains(b, []byte("\uFFFD")) || bytes.Contains(b, []byte(`\ufffd`)); got != want {
			t.Fatalf("LoneSurrogate(%s) = %v, but decoding gives %s", raw, got, b)
		}
	})
}
