package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"corral/app/rpc"
	"corral/core/sandbox"
)

var (
	readParams      = []byte(`{"path":"notes/todo.txt","reason":"to see what is left","context":{"user_id":"alice"}}`)
	readParamsPlain = []byte(`{"path":"notes/todo.txt"}`) // what BenchmarkFileRead sends
)

// BenchmarkDecodeReadArgs is file.read's params through Decode (wire
// type, then converted to core's); BenchmarkDecodeReadArgsDirect, the
// reference, decodes the same bytes straight into the wire type, as the
// tagged core type was decoded before.
func BenchmarkDecodeReadArgs(b *testing.B) {
	for b.Loop() {
		if _, err := Decode[sandbox.ReadArgs](readParams); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeReadArgsDirect(b *testing.B) {
	for b.Loop() {
		var a ReadArgs
		if err := rpc.DecodeParams(readParams, &a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeReadArgsPlain(b *testing.B) {
	for b.Loop() {
		if _, err := Decode[sandbox.ReadArgs](readParamsPlain); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadAnswer is the frame of a 4 KiB file.read answer written by
// TextShape.AppendJSON beside encoding/json (the way before), in one run.
func BenchmarkReadAnswer(b *testing.B) {
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 64)
	s := TextShape{Type: "text", Path: "f.txt", Content: content, Bytes: 4096, TotalLines: 64, OutputLines: 64}
	for _, way := range []struct {
		name   string
		result any
	}{{"encoding_json", textShapeOnly(s)}, {"AppendJSON", s}} {
		b.Run(way.name, func(b *testing.B) {
			buf := make([]byte, 0, 8<<10)
			for b.Loop() {
				var err error
				if buf, err = rpc.AppendResult(buf[:0], json.RawMessage(`12`), way.result); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
