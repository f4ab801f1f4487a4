package server

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"corral/core/execbox"
)

// BenchmarkCommandRunTrue compares command.run of `true` over the
// WebSocket (auth, JSON-RPC, scope, audit, limits, bubblewrap) with plain
// bwrap given the same isolation flags and run directly, in one run.
// Goal: corral_ms ≤ 1.5 × bwrap_ms.
func BenchmarkCommandRunTrue(b *testing.B) {
	h := start(b, "")
	alice := h.dial(aliceKey)
	ctx := context.Background()
	if _, err := alice.Call(ctx, "command.run", m("command", "true")); err != nil { // creates playground, share link
		b.Fatal(err)
	}
	runner, err := execbox.NewRunner(execbox.Options{})
	if err != nil {
		b.Fatal(err)
	}
	spec := execbox.Spec{Command: "true", ScopeDir: filepath.Join(h.base, "alice"), ShareDir: filepath.Join(h.base, "share"), User: "alice", Timeout: time.Minute}
	var corral, plain time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		if _, err := alice.Call(ctx, "command.run", m("command", "true")); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		cmd, cleanup, err := runner.Plain(spec)
		if err != nil {
			b.Fatal(err)
		}
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err = cmd.Run()
		cleanup()
		if err != nil {
			b.Fatalf("plain bwrap: %v %s", err, errOut.String())
		}
		corral += t1.Sub(t0)
		plain += time.Since(t1)
		n++
	}
	cm := float64(corral.Microseconds()) / float64(n) / 1000
	pm := float64(plain.Microseconds()) / float64(n) / 1000
	b.ReportMetric(cm, "corral_ms")
	b.ReportMetric(pm, "bwrap_ms")
	b.ReportMetric(cm/pm, "ratio")
}
