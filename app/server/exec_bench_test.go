package server

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"corral/app/client"
	"corral/app/wire"
	"corral/core/execbox"
	"corral/core/execbox/execboxtest"
)

// BenchmarkCommandRunTrue compares command.run of `true` over the
// WebSocket (auth, JSON-RPC, scope, audit, limits, bubblewrap) with plain
// bwrap given the same isolation flags and run directly, in one run.
// Goal: corral_ms ≤ 1.5 × bwrap_ms.
func BenchmarkCommandRunTrue(b *testing.B) {
	h := start(b, "")
	alice := h.dial(aliceKey)
	rpcCall[any](b, alice, "command.run", m("command", "true")) // creates playground, share link
	againstBwrap(b, alice, m("command", "true"), filepath.Join(h.base, "alice"), filepath.Join(h.base, "share"))
}

// againstBwrap runs command.run with params and plain bubblewrap running
// `true` in the same scope alternately, b.N times each, and reports both
// times and their ratio.
func againstBwrap(b *testing.B, c *client.Client, params map[string]any, scope, share string) {
	b.Helper()
	ctx := context.Background()
	runner, err := execbox.NewRunner(execbox.Options{NetInit: execboxtest.NetInit(b)}) // as root, no sandbox starts without it
	if err != nil {
		b.Fatal(err)
	}
	spec := execbox.Spec{Command: "true", ScopeDir: scope, ShareDir: share, User: "alice", Timeout: time.Minute}
	var corral, plain time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		var r wire.RunResult
		if err := c.CallInto(ctx, "command.run", params, &r); err != nil || r.ExitCode != 0 {
			b.Fatal(err, r)
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

// BenchmarkCommandRunTrueVersions is BenchmarkCommandRunTrue on a scope
// of 10,000 files with versions for commands on (every writable folder on
// an overlay, the upper layers walked afterwards). The reference, plain
// bwrap on the same scope, runs in the same loop.
// Goal: corral_ms ≤ 1.5 × bwrap_ms, whatever the scope holds.
func BenchmarkCommandRunTrueVersions(b *testing.B) {
	h := start(b, "")
	alice := h.dial(aliceKey)
	scope := filepath.Join(h.base, "alice")
	for i := range 10_000 {
		d := filepath.Join(scope, "tree", strconv.Itoa(i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, strconv.Itoa(i)), []byte("file "+strconv.Itoa(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	res := rpcCall[wire.RunResult](b, alice, "command.run", m("command", "true"))
	if res.Changes == nil {
		b.Fatal("command.run recorded no changes list: versions for commands are off")
	}
	againstBwrap(b, alice, m("command", "true"), scope, filepath.Join(h.base, "share"))
}

// BenchmarkCommandOneFileVersions: a command that rewrites one 4 KiB file
// in a scope of 1 GiB, through two real servers in the same loop — one
// keeping versions for commands, one with [versions] enabled = false.
// Goal: with_ms ≤ 2 × without_ms (the cost follows what changed, not the
// scope's size).
func BenchmarkCommandOneFileVersions(b *testing.B) {
	with, without := start(b, ""), start(b, "[versions]\nenabled = false\n")
	ctx := context.Background()
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	var clients [2]*client.Client
	for i, h := range []*harness{with, without} {
		c := h.dial(aliceKey)
		clients[i] = c
		rpcCall[any](b, c, "command.run", m("command", "true"))
		scope := filepath.Join(h.base, "alice")
		for f := range 16 { // 16 files of 64 MiB
			w, err := os.Create(filepath.Join(scope, "big"+strconv.Itoa(f)))
			if err != nil {
				b.Fatal(err)
			}
			for range 64 {
				if _, err := w.Write(chunk); err != nil {
					b.Fatal(err)
				}
			}
			w.Close()
		}
		os.WriteFile(filepath.Join(scope, "small.txt"), chunk[:4096], 0o644)
	}
	if r := rpcCall[wire.RunResult](b, clients[0], "command.run", m("command", "true")); r.Changes == nil {
		b.Fatal("versions for commands are off on the server that should keep them")
	}
	if r := rpcCall[wire.RunResult](b, clients[1], "command.run", m("command", "true")); r.Changes != nil {
		b.Fatal("versions for commands are on on the server that should not keep them")
	}
	var dur [2]time.Duration
	n := 0
	for b.Loop() {
		cmd := m("command", "head -c 4096 /dev/urandom > small.txt")
		for i, c := range clients {
			t0 := time.Now()
			if _, err := c.Call(ctx, "command.run", cmd); err != nil {
				b.Fatal(err)
			}
			dur[i] += time.Since(t0)
		}
		n++
	}
	wm := float64(dur[0].Microseconds()) / float64(n) / 1000
	om := float64(dur[1].Microseconds()) / float64(n) / 1000
	b.ReportMetric(wm, "with_ms")
	b.ReportMetric(om, "without_ms")
	b.ReportMetric(wm/om, "ratio")
}
