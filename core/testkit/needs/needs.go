// Package needs is for tests that need a program installed: Tool finds
// it, and when it is missing the test fails saying what to install,
// except under -short, where it is skipped saying why. A missing tool is
// then never a silent pass on CI, which installs them all
// (packaging/deps.sh). It is for tests only.
package needs

import (
	"os/exec"
	"testing"
)

// Tool returns the path of the program tool. When tool is not in PATH,
// the test is skipped under -short, and otherwise fails (Fatal), naming
// pkg, the Debian package that installs it.
func Tool(t testing.TB, tool, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err == nil {
		return p
	}
	if testing.Short() {
		t.Skipf("%s is not installed (the %s package; packaging/deps.sh installs it); skipped under -short", tool, pkg)
		return ""
	}
	t.Fatalf("%s is not installed: install the %s package (sudo apt install %s; packaging/deps.sh installs it), or run with -short to skip this test", tool, pkg, pkg)
	return ""
}

// Can is for what a test needs of the machine beyond a program (a
// command running in the sandbox, a loopback address): err is the
// attempt's error. When err is not nil, the test is skipped under -short
// and otherwise fails (Fatal), saying that the machine cannot do what and
// why.
func Can(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if testing.Short() {
		t.Skipf("this machine cannot %s (%v); skipped under -short", what, err)
		return
	}
	t.Fatalf("this machine cannot %s: %v (packaging/deps.sh installs what Corral's tests need; or run with -short to skip this test)", what, err)
}
