package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"corral/core/execbox"
	"corral/core/execbox/execboxtest"
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
	if _, err := exec.LookPath("bwrap"); err != nil && testing.Short() {
		t.Skip("bubblewrap is not installed; skipped under -short")
	}
	w := newWorldWith(t, func(w *world, cfg *Config) {
		r, err := execbox.NewRunner(execbox.Options{Hidden: []string{w.private}, NetInit: execboxtest.NetInit(t)})
		if err != nil {
			t.Fatal(err)
		}
		if ok, _, why := r.Available(); !ok {
			t.Fatalf("sandbox unavailable: %s", why)
		}
		cfg.Exec = ExecConfig{Runner: r, Enabled: true}
		cfg.Versions = versions.Config{Dir: filepath.Join(w.private, "versions")}
	})
	if ok, why := w.box.exec.Runner.Overlay(); !ok {
		t.Skipf("overlays unavailable here: %s", why)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel() // the agent closed its connection
	w.box.CommandVersions(gone)
	if ok, why := w.box.CommandVersions(context.Background()); !ok {
		t.Fatalf("a cancelled call disabled recording of commands' changes for good: %s", why)
	}
	os.MkdirAll(filepath.Join(w.dir, "base", "alice"), 0o700)
	r, err := w.box.Run(context.Background(), alice, RunArgs{Command: "echo hi > made.txt"}, "1", nil)
	if err != nil || len(r.Changes) != 1 {
		t.Errorf("the command's changes after that: %+v, %v; want made.txt recorded", r.Changes, err)
	}
}
