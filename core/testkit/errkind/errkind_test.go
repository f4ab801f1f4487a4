package errkind

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"corral/core/errs"
)

type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// want runs Want as a test would, on a goroutine of its own so that a
// failure can end it.
func want(t *testing.T, err error, k errs.Kind, what ...any) (*errs.Error, string) {
	r := &recorder{TB: t}
	var e *errs.Error
	done := make(chan struct{})
	go func() { defer close(done); e = Want(r, err, k, what...) }()
	<-done
	return e, r.failed
}

func TestWant(t *testing.T) {
	denied := errs.New(errs.Denied, "/x", "That is outside your folder.")
	if e, failed := want(t, fmt.Errorf("read: %w", denied), errs.Denied); e != denied || failed != "" {
		t.Errorf("a wrapped error of the kind: %v, %q", e, failed)
	}
	if _, failed := want(t, denied, errs.NotFound, "Read ", "a.txt"); failed != `Read a.txt: error That is outside your folder. (kind "denied"), want kind "not_found"` {
		t.Errorf("another kind: %q", failed)
	}
	if _, failed := want(t, nil, errs.Denied); failed != `got no error, want kind "denied"` {
		t.Errorf("no error: %q", failed)
	}
	if e, failed := want(t, nil, ""); e != nil || failed != "" {
		t.Errorf("no error, none wanted: %v, %q", e, failed)
	}
	if _, failed := want(t, denied, ""); failed != `error That is outside your folder. (kind "denied"), want kind ""` {
		t.Errorf("an error, none wanted: %q", failed)
	}
	if _, failed := want(t, errors.New("boom"), errs.Denied); failed == "" {
		t.Error("a foreign error passed as denied")
	}
}
