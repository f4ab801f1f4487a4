//go:build linux

package execbox

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"corral/core/execbox/execboxtest"
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

// BenchmarkRunLayers runs `true` through Runner.Run on overlays
// (Spec.LayerDir, the layers removed after each run) and without, in the
// same loop: what the overlay helper and its mounts cost.
func BenchmarkRunLayers(b *testing.B) {
	bx := newBox(b)
	opts := bx.opts()
	opts.NetInit = execboxtest.NetInit(b)
	r := newRunner(b, opts)
	run := filepath.Join(bx.corral, "versions", "run")
	if err := r.ProbeOverlay(b.Context(), run); err != nil {
		b.Fatal(err)
	}
	s := bx.spec("true")
	var with, without time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		s.LayerDir = filepath.Join(run, "x")
		res, err := r.Run(b.Context(), s)
		if err != nil || res.ExitCode != 0 || len(res.Layers) != 2 {
			b.Fatalf("%+v %v", res, err)
		}
		RemoveLayers(s.LayerDir)
		t1 := time.Now()
		s.LayerDir = ""
		if res, err := r.Run(b.Context(), s); err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v %v", res, err)
		}
		with += t1.Sub(t0)
		without += time.Since(t1)
		n++
	}
	b.ReportMetric(float64(with.Microseconds())/float64(n)/1000, "layers_ms")
	b.ReportMetric(float64(without.Microseconds())/float64(n)/1000, "plain_run_ms")
	b.ReportMetric(float64(with)/float64(without), "ratio")
}
