package wire

import (
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
