// Package bustest starts a private D-Bus session bus for tests of the
// desktop parts (the tray, notifications), so they never touch the
// user's own bus. It is for tests only.
package bustest

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
)

// Start starts dbus-daemon with a session bus listening in a temporary
// folder of t, and returns its address (for DBUS_SESSION_BUS_ADDRESS).
// The daemon is killed when t ends. The caller checks that dbus-daemon
// is installed first (needs.Tool).
func Start(t testing.TB) string {
	t.Helper()
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1", "--address=unix:dir="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon: %v", err)
	}
	return strings.TrimSpace(line)
}
