package wire

import (
	"reflect"
	"testing"

	"corral/core/errs"
	"corral/core/sandbox"
)

// TestFrom: params MCP hands over decoded, as the wire type the method
// declares, reach the method as its core type field by field (the
// context and pointers included), a wire-only type as it is, and a value
// of any other type is refused rather than read as empty params.
func TestFrom(t *testing.T) {
	t.Parallel()
	old := "o"
	w := EditArgs{Context: &Context{UserID: "ann"}, Reason: "r", Path: "a.txt", OldText: &old, Edits: []Replacement{{Old: "x", New: "y", All: true}}, DryRun: true}
	got, err := From[sandbox.EditArgs](w)
	if err != nil || got.Path != "a.txt" || got.Context == nil || got.Context.UserID != "ann" || *got.OldText != "o" || len(got.Edits) != 1 || got.Edits[0].Old != "x" || !got.Edits[0].All || !got.DryRun {
		t.Errorf("From[sandbox.EditArgs](%+v) = %+v, %v", w, got, err)
	}
	if got, err := From[sandbox.ReadArgs](ReadArgs{Path: "b", Tail: 3}); err != nil || !reflect.DeepEqual(got, sandbox.ReadArgs{Path: "b", Tail: 3}) {
		t.Errorf("From[sandbox.ReadArgs] = %+v, %v", got, err)
	}
	if got, err := From[LinkArgs](LinkArgs{Path: "c"}); err != nil || got.Path != "c" {
		t.Errorf("From[LinkArgs] = %+v, %v", got, err)
	}
	if _, err := From[sandbox.ReadArgs](StatArgs{Path: "d"}); errs.KindOf(err) != errs.IO {
		t.Errorf("From[sandbox.ReadArgs](StatArgs) = %v, want an io error", err)
	}
	if _, err := From[sandbox.ReadArgs](nil); errs.KindOf(err) != errs.IO {
		t.Errorf("From[sandbox.ReadArgs](nil) = %v, want an io error", err)
	}
}
