package execbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"corral/core/execbox/execboxtest"
)

// TestOverlayLayers: with Spec.LayerDir, what a command writes lands in
// the upper layers (changed files, whiteouts, an opaque folder), the real
// folders stay as they were, and the command still sees its own changes.
func TestOverlayLayers(t *testing.T) {
	r := newRunner(t, Options{NetInit: execboxtest.NetInit(t)})
	b := newBox(t)
	if err := r.ProbeOverlay(context.Background(), filepath.Join(b.corral, "versions", "run")); err != nil {
		t.Fatalf("overlay probe: %v", err)
	}
	for name, body := range map[string]string{"a": "old a\n", "b": "b\n", "d/c": "c\n"} {
		p := filepath.Join(b.scope, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(b.share, "s"), []byte("s\n"), 0o644)
	s := b.spec(`echo new >> a && rm b && rm -r d && mkdir d && echo n > d/n && rm /share/s && cat a d/n`)
	s.LayerDir = filepath.Join(b.corral, "versions", "run", "1")
	res, err := r.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Stdout != "old a\nnew\nn\n" || res.NoLayers != "" {
		t.Fatalf("command: %+v", res)
	}
	if len(res.Layers) != 2 || res.Layers[0].Host != b.scope || res.Layers[1].Host != b.share {
		t.Fatalf("layers: %+v", res.Layers)
	}
	for name, want := range map[string]string{"a": "old a\n", "b": "b\n", "d/c": "c\n"} {
		if got, err := os.ReadFile(filepath.Join(b.scope, name)); err != nil || string(got) != want {
			t.Errorf("real %s = %q, %v; want it untouched", name, got, err)
		}
	}
	up := res.Layers[0].Upper
	if got, _ := os.ReadFile(filepath.Join(up, "a")); string(got) != "old a\nnew\n" {
		t.Errorf("upper a = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(up, "b")); err != nil || !IsWhiteout(fi) {
		t.Errorf("upper b is not a whiteout: %v %v", fi, err)
	}
	buf := make([]byte, 8)
	if n, err := unix.Lgetxattr(filepath.Join(up, "d"), "user.overlay.opaque", buf); err != nil || string(buf[:n]) != "y" {
		t.Errorf("upper d is not opaque: %q %v", buf[:n], err)
	}
	if fi, err := os.Lstat(filepath.Join(res.Layers[1].Upper, "s")); err != nil || !IsWhiteout(fi) {
		t.Errorf("share's upper s is not a whiteout: %v %v", fi, err)
	}
	RemoveLayers(s.LayerDir)
	if _, err := os.Lstat(s.LayerDir); !os.IsNotExist(err) {
		t.Errorf("layer folder left behind: %v", err)
	}
}

// TestProbeOverlayClosesDescriptors: probing the overlay leaves no
// descriptor of the daemon open (a daemon probes at every start of the
// version store, and leaked pipes add up).
func TestProbeOverlayClosesDescriptors(t *testing.T) {
	r := newRunner(t, Options{NetInit: execboxtest.NetInit(t)})
	b := newBox(t)
	dir := filepath.Join(b.corral, "versions", "run")
	if err := r.ProbeOverlay(context.Background(), dir); err != nil {
		t.Fatalf("overlay probe: %v", err)
	}
	before := openFDs(t)
	for range 3 {
		if err := r.ProbeOverlay(context.Background(), dir); err != nil {
			t.Fatalf("overlay probe: %v", err)
		}
	}
	if after := openFDs(t); after != before {
		t.Errorf("open pipes: %d before three probes, %d after", before, after)
	}
}

// openFDs counts this process's open pipes: what a probe opens. Sockets
// and pidfds come and go meanwhile with other Runners' spares (spare_linux.go),
// let go in the background when they have waited long enough.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "pipe:") {
			n++
		}
	}
	return n
}
