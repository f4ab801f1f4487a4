package wire

import (
	"encoding/json"
	"reflect"
	"testing"

	"corral/app/rpc"
)

// textShapeOnly has TextShape's fields and tags but not its AppendJSON:
// encoding/json writes it, as the reference.
type textShapeOnly TextShape

// FuzzTextShapeJSON: file.read's text answer written by AppendJSON is the
// frame encoding/json writes, byte for byte.
func FuzzTextShapeJSON(f *testing.F) {
	f.Add("text", "notes/a.txt", "line one\nline \"two\" <&>\n", int64(24), 2, 2, false, "", "")
	f.Add("text", "caf\xc3\xa9/\xff", "\x00\t\u2028", int64(-1), 9, 1, true, "lines", "windows-1252")
	f.Fuzz(func(t *testing.T, typ, path, content string, size int64, total, out int, truncated bool, by, enc string) {
		s := TextShape{typ, path, content, size, total, out, truncated, nil, enc}
		if by != "" {
			s.TruncatedBy = &by
		}
		id := json.RawMessage(`7`)
		got, err := rpc.AppendResult(nil, id, s)
		want, werr := rpc.AppendResult(nil, id, textShapeOnly(s))
		if err != nil || werr != nil || string(got) != string(want) {
			t.Fatalf("AppendJSON wrote\n%s (%v)\nencoding/json\n%s (%v)", got, err, want, werr)
		}
	})
}

// TestTextShapeFields: AppendJSON writes every field; one added to
// TextShape must be added there too (this count fails first).
func TestTextShapeFields(t *testing.T) {
	if n := reflect.TypeFor[TextShape]().NumField(); n != 9 {
		t.Fatalf("TextShape has %d fields; AppendJSON writes 9", n)
	}
}
