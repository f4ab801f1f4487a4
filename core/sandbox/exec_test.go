package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/execbox"
	"corral/core/execbox/execboxtest"
	"corral/core/testkit/needs"
	"corral/core/testkit/poll"
)

// execWorld is a world whose sandbox runs commands under ec (its Runner
// made here), with one Enabled.
func execWorld(t *testing.T, ec ExecConfig) *world {
	t.Helper()
	needs.Tool(t, "bwrap", "bubblewrap")
	return newWorldWith(t, func(w *world, cfg *Config) {
		r, err := execbox.NewRunner(execbox.Options{Hidden: []string{w.private}, NetInit: execboxtest.NetInit(t)})
		if err != nil {
			t.Fatal(err)
		}
		if ok, _, why := r.Available(); !ok {
			t.Fatalf("sandbox unavailable: %s", why)
		}
		ec.Runner, ec.Enabled = r, true
		cfg.Exec = ec
	})
}

// TestExecLimits: the limits of ExecConfig are the ones a command meets —
// they are configured there only, not again on the runner.
func TestExecLimits(t *testing.T) {
	w := execWorld(t, ExecConfig{Timeout: time.Second, MaxOutput: 4096, MaxPerClient: 1, QueueWait: 200 * time.Millisecond})
	ctx := context.Background()

	r, err := w.box.Run(ctx, alice, RunArgs{Command: "head -c 100000 /dev/zero | tr '\\0' x"}, "out", nil)
	if err != nil || !r.Truncated || len(r.Stdout) != 4096 {
		t.Errorf("output: truncated %v, %d bytes, %v; want 4096 bytes kept", r.Truncated, len(r.Stdout), err)
	}

	// Timeout is also the longest an agent may ask for.
	start := time.Now()
	r, err = w.box.Run(ctx, alice, RunArgs{Command: "sleep 30", TimeoutMs: 60_000}, "slow", nil)
	if err != nil || !r.TimedOut || time.Since(start) > 15*time.Second {
		t.Errorf("asked for 60 s under a 1 s limit: %+v, %v after %s", r, err, time.Since(start))
	}

	// One command at a time for alice: a second waits QueueWait, then is
	// refused.
	first := make(chan error, 1)
	go func() {
		_, err := w.box.Run(ctx, alice, RunArgs{Command: "sleep 30", TimeoutMs: 900}, "first", nil)
		first <- err
	}()
	poll.Eventually(t, 10*time.Second, func() bool { return len(w.box.Commands()) > 0 }, "the first command to start")
	_, err = w.box.Run(ctx, alice, RunArgs{Command: "true"}, "second", nil)
	if errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "already runs 1 commands at once") {
		t.Errorf("second command beside the first: %v", err)
	}
	if err := <-first; err != nil {
		t.Errorf("first command: %v", err)
	}
}
