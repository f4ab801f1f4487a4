// SPDX-License-Identifier: Apache-2.0

package pkgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// unit reads packaging/corral.service as key → values.
func unit(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "packaging", "corral.service"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			m[k] = append(m[k], v)
		}
	}
	return m
}

// TestUserUnit: the unit gives up after a few failures, never restarts
// when another Corral holds the files (`corral serve` exits 3 then:
// TestSecondStartOpensDashboard in app/), and its hardening leaves
// bubblewrap working: an ordinary user under no_new_privs (what
// NoNewPrivileges=yes sets) still makes its namespaces.
func TestUserUnit(t *testing.T) {
	u := unit(t)
	for k, want := range map[string]string{
		"StartLimitIntervalSec": "120", "StartLimitBurst": "5", "Restart": "on-failure",
		"RestartPreventExitStatus": "3", "NoNewPrivileges": "yes", "ExecStart": "/usr/bin/corral serve --headless",
	} {
		if got := strings.Join(u[k], ","); got != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
	for _, k := range []string{"PrivateUsers", "RestrictNamespaces", "ProtectSystem", "ProtectHome", "PrivateTmp", "MemoryDenyWriteExecute"} {
		if u[k] != nil {
			t.Errorf("%s= would take user namespaces or the sandbox folders from bubblewrap (or JIT from commands)", k)
		}
	}
	if testing.Short() {
		t.Skip("-short: bubblewrap under no_new_privs")
	}
	for _, p := range []string{"bwrap", "setpriv"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not installed (packaging/deps.sh installs bubblewrap; setpriv is util-linux)", p)
		}
	}
	out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--no-new-privs",
		"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
		"sh", "-c", "grep NoNewPrivs /proc/self/status; id -u").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "NoNewPrivs:\t1") || !strings.HasSuffix(strings.TrimSpace(string(out)), "65534") {
		t.Errorf("bubblewrap as an ordinary user under no_new_privs: %v\n%s", err, out)
	}
}
