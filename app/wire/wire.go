// Package wire is the JSON form of Corral's method parameters and results.
package wire

import (
	"encoding/json"

	"corral/app/rpc"
)

// Decode reads a method's params into A.
func Decode[A any](params json.RawMessage) (A, error) {
	var a A
	err := rpc.DecodeParams(params, &a)
	return a, err
}

// Encode returns v in its wire form.
func Encode(v any) any { return v }
