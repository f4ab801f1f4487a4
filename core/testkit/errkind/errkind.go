// Package errkind checks, in tests, that an error is a Corral error of a
// given kind (core/errs). It is for tests only.
package errkind

import (
	"fmt"
	"testing"

	"corral/core/errs"
)

// Want fails t (Fatal) unless err is an error of kind k, and returns it
// as an *errs.Error for further checks of its sentence. An empty k wants
// no error (for tables where most cases fail), and returns nil. what, when given,
// names the call that returned err in the failure (as fmt.Sprint).
func Want(t testing.TB, err error, k errs.Kind, what ...any) *errs.Error {
	t.Helper()
	call := ""
	if len(what) > 0 {
		call = fmt.Sprint(what...) + ": "
	}
	if err == nil && k != "" {
		t.Fatalf("%sgot no error, want kind %q", call, k)
		return nil
	}
	if got := errs.KindOf(err); got != k {
		t.Fatalf("%serror %v (kind %q), want kind %q", call, err, got, k) // k "": want no error
		return nil
	}
	return errs.As(err)
}
