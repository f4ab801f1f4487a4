package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/core/testkit/poll"
	"corral/ui"
)

// TestTrayConfigErrorWindow starts `corral` as the desktop does (no
// arguments, a display, no terminal anyone reads) with a broken
// config.toml: a window titled "Corral cannot start" must come up, and
// stderr still has the line with the file and the line number. The
// screenshot goes to shotsDir (tray-config-error.png).
func TestTrayConfigErrorWindow(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Xvfb and the real binary; skipped under -short")
	}
	for _, tool := range []string{"Xvfb", "xdotool", "import"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing (run packaging/deps.sh): %v", tool, err)
		}
	}
	bin := corralBinary(t)
	display := startXvfb(t)
	home := t.TempDir()
	cfg := filepath.Join(home, "config.toml")
	if err := os.WriteFile(cfg, []byte("# mine\n[server\nlisten = \"127.0.0.1:0\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "DBUS_SESSION_BUS_ADDRESS" && k != "XDG_RUNTIME_DIR" && k != "DISPLAY" && k != "CORRAL_HOME" && k != "HOME" {
			env = append(env, kv)
		}
	}
	env = append(env, "DISPLAY="+display, "CORRAL_HOME="+home, "HOME="+home)
	cmd := exec.Command(bin)
	cmd.Env = env
	var stderr lockedBuffer // read while corral still writes to it
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	s := &traySession{t: t, env: env}
	poll.Eventually(t, time.Minute, func() bool {
		select {
		case err := <-exited:
			t.Fatalf("corral exited without a window: %v\n%s", err, stderr.String())
		default:
		}
		win, _ := s.xdotool("search", "--onlyvisible", "--name", "^"+ui.ProblemTitle+"$")
		return win != ""
	}, "a window titled %q", ui.ProblemTitle)
	s.settle(nil, nil) // drawn
	s.screenshot("tray-config-error")
	if want := cfg + ":2: "; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr.String(), want)
	}
}
