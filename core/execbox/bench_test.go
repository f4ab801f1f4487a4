package execbox

import (
	"bytes"
	"testing"
)

// BenchmarkRunTrue runs `true` through Runner.Run: validation, scope
// preparation, pipes, limits and cgroup while bwrap waits, output capture.
func BenchmarkRunTrue(b *testing.B) {
	bx := newBox(b)
	r := newRunner(b, bx.opts())
	s := bx.spec("true")
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.Run(b.Context(), s)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

// BenchmarkBwrapPlain runs the same bwrap argv directly through os/exec
// (Runner.Plain: descriptors filled in beforehand, no limits): the floor
// Runner.Run's overhead is measured against.
func BenchmarkBwrapPlain(b *testing.B) {
	bx := newBox(b)
	r := newRunner(b, bx.opts())
	s := bx.spec("true")
	if _, err := r.Run(b.Context(), s); err != nil { // create playground and share link
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		cmd, cleanup, err := r.Plain(s)
		if err != nil {
			b.Fatal(err)
		}
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err = cmd.Run()
		cleanup()
		if err != nil {
			b.Fatalf("%v: %s", err, errOut.String())
		}
	}
}
