package commands

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"corral/core/sandbox"
	"corral/core/versions"
)

// TestOverlayProbeOutlivesItsCall (red team): the overlay probe ran once,
// under the context of whichever call came first (an agent's
// session.info or command.run). An agent that sent session.info and
// closed its connection at once killed the probe ("signal: killed"), and
// Corral concluded the kernel refuses overlays: for the rest of its life
// every command of every agent ran on the real folders, its changes not
// recorded, not undoable and outside any version share (an agent with a
// full share overwrote share/victim.txt with no version kept). The probe
// now runs detached from the call that triggered it.
func TestOverlayProbeOutlivesItsCall(t *testing.T) {
	w := newWorld(t, func(w *world, cfg *sandbox.Config, ec *Config) {
		*ec = Config{Runner: runner(t, w), Enabled: true}
		cfg.Versions = versions.Config{Dir: filepath.Join(w.private, "versions")}
	})
	if ok, why := w.cmds.cfg.Runner.Overlay(); !ok {
		t.Skipf("overlays unavailable here: %s", why)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel() // the agent closed its connection
	w.cmds.CommandVersions(gone)
	if ok, why := w.cmds.CommandVersions(context.Background()); !ok {
		t.Fatalf("a cancelled call disabled recording of commands' changes for good: %s", why)
	}
	os.MkdirAll(filepath.Join(w.dir, "base", "alice"), 0o700)
	r, err := w.cmds.Run(context.Background(), alice, RunArgs{Command: "echo hi > made.txt"}, "1", nil)
	if err != nil || len(r.Changes) != 1 {
		t.Errorf("the command's changes after that: %+v, %v; want made.txt recorded", r.Changes, err)
	}
}

// TestOverlayRefusalIsRetried: a refusal of the overlay may be passing (a
// probe that timed out on a loaded machine); before, it lasted until
// Corral restarted, every command unrecorded meanwhile. Here the first
// probe times out, and a call overlayRetry later checks again and finds
// overlays working. Not parallel: it shortens overlayProbeTimeout.
func TestOverlayRefusalIsRetried(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	w := newWorld(t, func(w *world, cfg *sandbox.Config, ec *Config) {
		*ec = Config{Runner: runner(t, w), Enabled: true}
		cfg.Versions = versions.Config{Dir: filepath.Join(w.private, "versions")}
		cfg.Clock = func() time.Time { return now }
	})
	if ok, why := w.cmds.cfg.Runner.Overlay(); !ok {
		t.Skipf("overlays unavailable here: %s", why)
	}
	old := overlayProbeTimeout
	overlayProbeTimeout = time.Nanosecond
	ok, _ := w.cmds.CommandVersions(t.Context())
	overlayProbeTimeout = old
	if ok {
		t.Fatal("a probe with no time to run found overlays working")
	}
	now = now.Add(overlayRetry - time.Second)
	if ok, _ := w.cmds.CommandVersions(t.Context()); ok {
		t.Fatal("probed again before overlayRetry")
	}
	now = now.Add(time.Second)
	if ok, why := w.cmds.CommandVersions(t.Context()); !ok {
		t.Fatalf("a passing refusal of the overlay lasts: %s", why)
	}
}
