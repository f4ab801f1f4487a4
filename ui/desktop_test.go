package ui

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// fakeDisplay listens on a TCP "X server" on port 6000+N, standing in
// for a display, and returns its $DISPLAY and port.
func fakeDisplay(t *testing.T) (string, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	if port < 6000 {
		t.Skipf("listener got port %d, below the X range", port)
	}
	return "127.0.0.1:" + strconv.Itoa(port-6000), port
}

func TestDetect(t *testing.T) {
	display, port := fakeDisplay(t)

	for _, tt := range []struct {
		name    string
		env     map[string]string
		display bool
		note    string
	}{
		{"nothing", map[string]string{}, false, "no display ($DISPLAY is not set); running headless"},
		{"wayland only", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, false, "no X display"},
		{"dead display", map[string]string{"DISPLAY": "127.0.0.1:" + strconv.Itoa(port-6000+1)}, false, "does not answer"},
		{"malformed display", map[string]string{"DISPLAY": "nonsense"}, false, "malformed"},
		{"display, no bus", map[string]string{"DISPLAY": display}, true, "no D-Bus session bus, so no tray icon"},
		{"display, autolaunch bus", map[string]string{"DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": "autolaunch:"}, true, "no D-Bus session bus"},
		{"display, dead bus", map[string]string{"DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + filepath.Join(t.TempDir(), "nobus")}, true, "does not answer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := Detect(envOf(tt.env))
			if (d.Display != "") != tt.display || !strings.Contains(d.Note, tt.note) || d.Bus != "" || d.TrayHost {
				t.Errorf("Detect = %+v; want display %v, note containing %q", d, tt.display, tt.note)
			}
			if strings.Contains(d.Note, "\n") {
				t.Errorf("note is more than one line: %q", d.Note)
			}
		})
	}
}

func TestBusAddress(t *testing.T) {
	dir := t.TempDir()
	if got := busAddress(envOf(map[string]string{"XDG_RUNTIME_DIR": dir})); got != "" {
		t.Errorf("no socket: %q", got)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if got := busAddress(envOf(map[string]string{"XDG_RUNTIME_DIR": dir})); got != "unix:path="+filepath.Join(dir, "bus") {
		t.Errorf("runtime dir socket: %q", got)
	}
	if got := busAddress(envOf(map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/x", "XDG_RUNTIME_DIR": dir})); got != "unix:path=/run/x" {
		t.Errorf("explicit address: %q", got)
	}
	if got := busAddress(envOf(map[string]string{"DBUS_SESSION_BUS_ADDRESS": noBus})); got != "" {
		t.Errorf("our own 'no bus' marker: %q", got)
	}
}

func TestXDGAutostart(t *testing.T) {
	cfg := t.TempDir()
	a, err := NewXDGAutostart(envOf(map[string]string{"XDG_CONFIG_HOME": cfg}), "/opt/my apps/corral")
	if err != nil {
		t.Fatal(err)
	}
	if a.Dir != filepath.Join(cfg, "autostart") || a.Exec != `"/opt/my apps/corral"` {
		t.Fatalf("%+v", a)
	}
	if a.Enabled() {
		t.Fatal("enabled before anything was written")
	}
	if err := a.SetEnabled(true); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(cfg, "autostart", "corral.desktop"))
	if err != nil || !a.Enabled() || !strings.Contains(string(b), "\nExec=\"/opt/my apps/corral\"\n") {
		t.Fatalf("after enabling: %v %v\n%s", err, a.Enabled(), b)
	}
	// Desktops switch an entry off with Hidden=true.
	os.WriteFile(filepath.Join(cfg, "autostart", "corral.desktop"), append(b, "Hidden=true\n"...), 0o644)
	if a.Enabled() {
		t.Error("a hidden entry counts as enabled")
	}
	if err := a.SetEnabled(false); err != nil || a.Enabled() {
		t.Fatalf("disable: %v", err)
	}
	if err := a.SetEnabled(false); err != nil {
		t.Errorf("disabling twice: %v", err)
	}

	home := t.TempDir()
	a, _ = NewXDGAutostart(envOf(map[string]string{"HOME": home}), "/usr/bin/corral")
	if a.Dir != filepath.Join(home, ".config", "autostart") || a.Exec != "/usr/bin/corral" {
		t.Errorf("HOME fallback: %+v", a)
	}
	if _, err := NewXDGAutostart(envOf(nil), "corral"); err == nil {
		t.Error("no HOME, no XDG_CONFIG_HOME: no error")
	}
}

// TestAutostartMatchesPackaging keeps the entry Settings writes and the
// one the package ships alike.
func TestAutostartMatchesPackaging(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "packaging", "corral-autostart.desktop"))
	if err != nil {
		t.Fatal(err)
	}
	if got := AutostartEntry("corral"); got != string(b) {
		t.Errorf("packaging/corral-autostart.desktop differs from AutostartEntry:\n%s\n---\n%s", b, got)
	}
}
