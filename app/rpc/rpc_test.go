package rpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"corral/core/errs"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		frame  string
		code   int // 0: valid
		method string
		notify bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"file.read","params":{"path":"a"}}`, 0, "file.read", false},
		{`{"jsonrpc":"2.0","method":"x"}`, 0, "x", true},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, 0, "x", false},
		{`{"jsonrpc":"2.0","id":"abc","method":"x","params":null}`, 0, "x", false},
		{`  {"jsonrpc":"2.0","id":-1.5e3,"method":"x"}`, 0, "x", false},
		{``, CodeParse, "", false},
		{`{"jsonrpc":"2.0"`, CodeParse, "", false},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", CodeParse, "", false},
		{` [1]`, CodeInvalidRequest, "", false},
		{`null`, CodeInvalidRequest, "", false},
		{`42`, CodeInvalidRequest, "", false},
		{`{"id":1,"method":"x"}`, CodeInvalidRequest, "", false},
		{`{"jsonrpc":"2.0","id":true,"method":"x"}`, CodeInvalidRequest, "", false},
		{`{"jsonrpc":"2.0","id":[1],"method":"x"}`, CodeInvalidRequest, "", false},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, CodeInvalidRequest, "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`, CodeInvalidParams, "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":"p"}`, CodeInvalidParams, "", false},
		{`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 300) + `","method":"x"}`, CodeInvalidRequest, "", false},
	} {
		req, id, err := Parse([]byte(tc.frame))
		if tc.code != 0 {
			if err == nil || err.Code != tc.code {
				t.Errorf("%.60q: got %v, want code %d", tc.frame, err, tc.code)
			}
			if id == nil {
				t.Errorf("%.60q: nil answer id", tc.frame)
			}
			continue
		}
		if err != nil {
			t.Errorf("%.60q: %v", tc.frame, err)
			continue
		}
		if req.Method != tc.method || req.IsNotification() != tc.notify {
			t.Errorf("%.60q: got %+v", tc.frame, req)
		}
	}
}

func TestDecodeParams(t *testing.T) {
	var v struct {
		Path  string `json:"path"`
		Limit int    `json:"limit"`
	}
	if err := DecodeParams(json.RawMessage(`{"path":"a","limit":3}`), &v); err != nil || v.Path != "a" || v.Limit != 3 {
		t.Fatalf("%v %+v", err, v)
	}
	for _, p := range []string{`{"pth":"a"}`, `{"limit":"3"}`, `{"limit":1.5}`, `{"path":null,"x":1}`} {
		err := DecodeParams(json.RawMessage(p), &v)
		if errs.KindOf(err) != errs.InvalidParams {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestDecodeParamsSays: the sentence names the parameter and what it must
// be, and a required parameter that is absent or null is missing while ""
// is a value.
func TestDecodeParamsSays(t *testing.T) {
	type args struct {
		Path    string            `json:"path" rpc:"required"`
		Content string            `json:"content" rpc:"required"`
		Offset  int               `json:"offset"`
		Env     map[string]string `json:"env"`
		Ratio   float64           `json:"ratio"`
		Any     map[string]any    `json:"any"`
		Since   time.Time         `json:"since"`
	}
	for _, c := range []struct{ params, want string }{
		{`{"path":"a","content":""}`, ""},
		{`{"path":"a"}`, `The parameter "content" is missing.`},
		{`{"path":"a","content":null}`, `The parameter "content" is missing.`},
		{``, `The parameter "path" is missing.`},
		{`{"path":"a","content":"x","offset":1.5}`, `Parameter "offset" must be a whole number.`},
		{`{"path":"a","content":"x","env":{"FOO":1}}`, `Parameter "env" must be an object whose values are strings.`},
		{`{"path":"a","content":"x","ratio":"1"}`, `Parameter "ratio" must be a number.`},
		{`{"path":1,"content":"x"}`, `Parameter "path" must be a string.`},
		{`{"Path":"a","CONTENT":"x"}`, ""}, // as encoding/json matches names
		{`{"path":"a","content":"x","any":[1]}`, `Parameter "any" must be an object.`},
		// A type's own decoder (time.Time's) refuses in Go's words; the
		// sentence names the parameter instead.
		{`{"path":"a","content":"x","since":"2026-01-02T15:04:05Z"}`, ""},
		{`{"path":"a","content":"x","since":"yesterday"}`, `Parameter "since" must be a time such as 2026-01-02T15:04:05Z.`},
		{`{"path":"a","content":"x","SINCE":12}`, `Parameter "since" must be a time such as 2026-01-02T15:04:05Z.`},
		{`{"path":"a","content":"x"} {"path":"b"}`, `The parameters could not be read: send them as one JSON object.`},
	} {
		var a args
		err := DecodeParams(json.RawMessage(c.params), &a)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.params, err)
			}
			continue
		}
		if e := errs.As(err); e.Kind != errs.InvalidParams || e.Msg != c.want {
			t.Errorf("%s: %v, want %q", c.params, err, c.want)
		}
	}
}

func TestFromError(t *testing.T) {
	e := FromError(errs.New(errs.NotFound, "a.txt", "That file was not found: a.txt."))
	if e.Code != CodeServer || e.Data.Kind != "not_found" || e.Data.Path != "a.txt" {
		t.Errorf("%+v", e)
	}
	if e := FromError(errs.New(errs.InvalidParams, "", "x")); e.Code != CodeInvalidParams {
		t.Errorf("%+v", e)
	}
	if e := FromError(json.Unmarshal([]byte("x"), new(int))); e.Data.Kind != "io" || strings.Contains(e.Message, "json") {
		t.Errorf("foreign errors must not leak their text: %+v", e)
	}
}

// FuzzParse: no frame panics Parse, every failure has a valid JSON answer,
// and every success names a method and an object (or no) params.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"file.read","params":{"path":"a"}}`,
		`[{"jsonrpc":"2.0"}]`, `{"jsonrpc":"2.0","method":"x"}`, `{`, "\x00", `{"id":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"file.read","params":{"path":"caf\udcff.txt"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		req, id, err := Parse(frame)
		if err != nil {
			out := Fail(id, err)
			if !json.Valid(out) || !utf8.Valid(out) {
				t.Fatalf("invalid answer %q", out)
			}
			return
		}
		if req.Method == "" {
			t.Fatal("empty method accepted")
		}
		if req.Params != nil && req.Params[0] != '{' {
			t.Fatalf("params %q accepted", req.Params)
		}
		if out, err := AppendResult(nil, id, map[string]string{"ok": "yes"}); err != nil || !json.Valid(out) {
			t.Fatalf("result with id %q: %v", id, err)
		}
	})
}

// TestFramesKeepAmpersands: a URL in a result or notification reads as
// written; "\u0026" would end up verbatim in what agents copy.
func TestFramesKeepAmpersands(t *testing.T) {
	url := "http://127.0.0.1:8765/files/out?path=output/a.md&token=v1.x"
	res, _ := AppendResult(nil, json.RawMessage(`1`), map[string]string{"url": url})
	note, _ := Notify("x", map[string]string{"url": url})
	fail := Fail(json.RawMessage(`1`), &Error{Code: 1, Message: "a & b <c>"})
	for _, b := range [][]byte{res, note, fail} {
		if bytes.Contains(b, []byte(`\u0026`)) || !json.Valid(b) || bytes.HasSuffix(b, []byte("\n")) {
			t.Errorf("frame %s", b)
		}
	}
}

// FuzzDecodeParams: no params panic the decoder, and whatever it accepts
// holds every required parameter.
func FuzzDecodeParams(f *testing.F) {
	f.Add([]byte(`{"path":"a","content":""}`))
	f.Add([]byte(`{"Path":"a","CONTENT":null,"content":"x"}`))
	f.Add([]byte(`{"path":"a","content":"x","env":{"A":1},"offset":1.5}`))
	f.Add([]byte(`{"path":"caf\udcff.txt","content":"x"}`))
	f.Add([]byte(`{"path":"\ud83d\ude00","content":"\ud83d","env":{"\udc00":"x"}}`))
	f.Add([]byte(`{"path":"a","content":"x","since":"yesterday"}`))
	f.Add([]byte(`{"path":"a","content":"x"`))
	f.Fuzz(func(t *testing.T, params []byte) {
		var a struct {
			Path    string            `json:"path" rpc:"required"`
			Content string            `json:"content" rpc:"required"`
			Offset  int               `json:"offset"`
			Env     map[string]string `json:"env"`
			Any     map[string]any    `json:"any"`
			Since   time.Time         `json:"since"`
		}
		if err := DecodeParams(json.RawMessage(params), &a); err != nil {
			// A polite sentence, never the decoder's own words.
			msg := errs.As(err).Msg
			for _, goWords := range []string{"json:", "UnmarshalJSON", "parsing time", "invalid character", "unexpected end"} {
				if strings.Contains(msg, goWords) {
					t.Fatalf("%q: the answer says %q", params, msg)
				}
			}
			return
		}
		if LoneSurrogate(params) {
			t.Fatalf("accepted %q, which holds a lone surrogate", params)
		}
		var given map[string]json.RawMessage
		if err := json.Unmarshal(params, &given); err != nil && len(params) > 0 {
			t.Fatalf("accepted %q, which is not an object: %v", params, err)
		}
		for _, name := range []string{"path", "content"} {
			ok := false
			for k, v := range given {
				if strings.EqualFold(k, name) && string(v) != "null" {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("accepted %q without %s", params, name)
			}
		}
	})
}

// BenchmarkDecodeParams is file.read's params through DecodeParams beside
// decodeCareful, the way every call went before decodeFast, in one run.
func BenchmarkDecodeParams(b *testing.B) {
	type context struct {
		UserID string `json:"user_id"`
	}
	type args struct {
		Context  *context `json:"context"`
		Reason   string   `json:"reason"`
		Path     string   `json:"path" rpc:"required"`
		Offset   int      `json:"offset"`
		Limit    int      `json:"limit"`
		Encoding string   `json:"encoding"`
	}
	for _, c := range []struct{ name, params string }{
		{"path", `{"path":"notes/todo.txt"}`},
		{"path+reason+context", `{"path":"notes/todo.txt","reason":"to see what is left","context":{"user_id":"alice"}}`},
	} {
		for _, way := range []struct {
			name   string
			decode func(json.RawMessage, any) error
		}{{"careful", decodeCareful}, {"DecodeParams", DecodeParams}} {
			b.Run(c.name+"/"+way.name, func(b *testing.B) {
				for b.Loop() {
					var a args
					if err := way.decode(json.RawMessage(c.params), &a); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// fuzzArgs has a parameter of every sort decodeFast meets: required,
// numbers, a map, a list, anything, and a struct that may hide an unknown
// name one level down.
type fuzzArgs struct {
	Path    string            `json:"path" rpc:"required"`
	Content *string           `json:"content" rpc:"required"`
	Offset  int               `json:"offset"`
	Ratio   float64           `json:"ratio"`
	Env     map[string]string `json:"env"`
	Args    []string          `json:"args"`
	Any     any               `json:"any"`
	Context *fuzzContext      `json:"context"`
	Inline  fuzzContext       `json:"inline"`
	Skipped string            `json:"-"`
	hidden  string
}

type fuzzContext struct {
	UserID string `json:"user_id" rpc:"required"` // ignored below the top level
	Depth  *fuzzContext
}

// FuzzDecodeFastAgrees: whatever decodeFast accepts, decodeCareful (the
// careful path, which words every error) accepts with the same value;
// whatever it refuses it leaves as it was, defaults included.
func FuzzDecodeFastAgrees(f *testing.F) {
	for _, s := range []string{
		`{"path":"a","content":""}`, `{"path":"a"}`, `{"path":"a","content":null}`, `{}`, ``, `null`, `[]`,
		`{"Path":"a","CONTENT":"x"}`, `{"path":"a","content":"x","path":null}`, `{"path":"a","content":"x","PATH":"b"}`,
		`{"p\u0061th":"a","content":"x"}`, `{"path":"a","content":"x","offset":1.5}`, `{"path":"a","content":"x","offset":"1"}`,
		`{"path":"a","content":"x","env":{"A":"1"},"args":["x","y"],"any":{"k":[1,{"z":null}]}}`,
		`{"path":"a","content":"x","context":{"user_id":"u","depth":{"user_id":"v","x":1}}}`,
		`{"path":"a","content":"x","context":{"user_id":"u","x":1}}`, `{"path":"a","content":"x","context":null}`,
		`{"path":"a","content":"x","inline":{"USER_ID":"u"}}`, `{"path":"a","content":"x","context":5}`,
		`{"path":"a","content":"x","-":"y"}`, `{"path":"a","content":"x","skipped":"y"}`, `{"path":"a","content":"x","hidden":"y"}`,
		`{"path":"a","content":"x"} {"x":1}`, `{"path":"a","content":"x"}x`, ` {"path" : "a" , "content" : "x" } `,
		"{\"path\":\"a\",\"content\":\"x\",\"ratio\":1e3}", `{"path":"a\"b\\","content":"}{,"}`, `{"path":"\u212aa","content":"x"}`,
		`{"pat\u212a":"a","content":"x"}`, `{"path":"a","content":"x",}`, `{"path":"a","content":"x"`, `{"path":"a" "content":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		def := "default"
		before := fuzzArgs{Offset: 7, Content: &def, Env: map[string]string{"KEEP": "1"}}
		fast := before
		fast.Env = map[string]string{"KEEP": "1"}
		if !decodeFast(params, &fast) {
			if !reflect.DeepEqual(fast, before) {
				t.Fatalf("%q: refused but changed the value to %+v", params, fast)
			}
			return
		}
		careful := before
		careful.Env = map[string]string{"KEEP": "1"}
		if err := decodeCareful(params, &careful); err != nil {
			t.Fatalf("%q: decodeFast accepted what decodeCareful refuses: %v", params, err)
		}
		if !reflect.DeepEqual(fast, careful) {
			t.Fatalf("%q: decodeFast gave %+v, decodeCareful %+v", params, fast, careful)
		}
	})
}

// TestDecodeFastTakesUsualCalls: the usual params take the one-pass path
// (else FuzzDecodeFastAgrees would pass with no fast path at all), and
// what it leaves to the careful path is what that path words.
func TestDecodeFastTakesUsualCalls(t *testing.T) {
	for _, p := range []string{
		`{"path":"a","content":""}`,
		` {"Path" : "a" , "content":"x", "offset": 3, "env": {"A": "1"}, "args": [], "any": null} `,
		`{"path":"a","content":"x","context":{"user_id":"u","depth":{"user_id":"v"}},"inline":{}}`,
	} {
		var a fuzzArgs
		if !decodeFast([]byte(p), &a) {
			t.Errorf("%s: left to the careful path", p)
		}
	}
	for _, p := range []string{
		`{"path":"a"}`, `{"path":"a","content":null}`, `{"path":"a","content":"x","context":{"x":1}}`,
		`{"p\u0061th":"a","content":"x"}`, `{"path":"a","content":"x","offset":"1"}`, `{"path":"a","content":"x"}x`,
	} {
		var a fuzzArgs
		if decodeFast([]byte(p), &a) {
			t.Errorf("%s: taken by the fast path", p)
		}
	}
}

// FuzzAppendString: AppendString writes what Marshal writes for every
// string, escapes, invalid UTF-8 and U+2028 included, wherever they fall
// in the eight-byte steps.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{
		"", "plain text that is longer than eight bytes\n", "a\"b\\c\x00\x1f\x7f<>&", "\xff\xfe caf\xc3\xa9 \xe2\x80\xa8\xe2\x80\xa9",
		"12345678\"", "1234567\\", "1234567\xe2\x80\xa8", "\t\r\n\b\f", strings.Repeat("0123456789abcde\n", 64),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s, Marshal %s", s, got[1:], want)
		}
	})
}

// selfWriting is a result that writes itself through AppendString.
type selfWriting struct {
	S string `json:"s"`
}

func (r selfWriting) AppendJSON(b []byte) []byte {
	return append(AppendString(append(b, `{"s":`...), r.S), '}')
}

type notSelfWriting selfWriting

// TestAppendResultSelfWriting: an Appender's answer is the frame encoding
// would write, whatever the id; an id it cannot copy goes the long way.
func TestAppendResultSelfWriting(t *testing.T) {
	for _, id := range []string{`1`, `-2.5e3`, `"abc"`, `"a b"`, `"\u0041"`, `null`, `{}`, `x`, ``, `"é"`} {
		got, gerr := AppendResult([]byte("pre"), json.RawMessage(id), selfWriting{"a\"<&>\u2028\xff"})
		want, werr := AppendResult([]byte("pre"), json.RawMessage(id), notSelfWriting{"a\"<&>\u2028\xff"})
		if string(got) != string(want) || (gerr == nil) != (werr == nil) {
			t.Errorf("id %s: %s (%v), want %s (%v)", id, got, gerr, want, werr)
		}
	}
}

// TestParseAnswersTheIdOfANonUTF8Frame: a request whose text is not
// UTF-8 is refused with the id it carries, not null: a client waits for
// that id (red team: `corral call` with the byte 0xff in a path waited
// for ever; it failed on the old code, which answered null). An id that
// is itself not UTF-8, too long or not an id is answered null.
func TestParseAnswersTheIdOfANonUTF8Frame(t *testing.T) {
	for frame, want := range map[string]string{
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"file.write\",\"params\":{\"path\":\"u\xff\"}}": "7",
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x\xff\"}":                                  `"a"`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\",\"method\":\"x\"}":                                  "null",
		"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"x\xff\"}":                                   "null",
		"{\"jsonrpc\":\"2.0\",\"id\":\"" + strings.Repeat("i", 300) + "\",\"method\":\"\xff\"}":    "null",
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"\xff\"":                                        "null",
		"\xff": "null",
	} {
		_, id, err := Parse([]byte(frame))
		if err == nil || err.Code != CodeParse || string(id) != want {
			t.Errorf("%.50q: answered %v with id %s, want a parse error to %s", frame, err, id, want)
		}
	}
}
