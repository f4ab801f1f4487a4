// SPDX-License-Identifier: Apache-2.0

package execbox

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"corral/core/execbox/execboxtest"
)

// TestUsernsRefusedSaysWhy runs a Runner where user namespaces are
// refused: in a throwaway user namespace whose user.max_user_namespaces is
// 0, without capabilities (as an ordinary user is). Commands are
// unavailable, and the sentence says why and what to do, instead of the
// generic "bubblewrap … cannot create a sandbox". It fails on the code
// before userns.Refused.
func TestUsernsRefusedSaysWhy(t *testing.T) {
	if mode := os.Getenv("CORRAL_TEST_USERNS_CHILD"); mode != "" {
		r, err := NewRunner(Options{NetInit: os.Getenv("CORRAL_TEST_NETINIT")})
		if err != nil {
			t.Fatal(err)
		}
		ok, _, why := r.Available()
		if mode == "overlay" {
			r.ProbeOverlay(t.Context(), t.TempDir())
			_, why = r.Overlay()
		}
		os.Stdout.WriteString("available=" + map[bool]string{true: "yes", false: "no"}[ok] + "\nwhy=" + why + "\n")
		return
	}
	if testing.Short() {
		t.Skip("-short: needs unshare and setpriv (util-linux) and bubblewrap")
	}
	for _, p := range []string{"unshare", "setpriv", "bwrap"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s not installed", p)
		}
	}
	// As an ordinary user: no capabilities, so no sandbox without a user
	// namespace.
	why := usernsChild(t, "runner", `exec setpriv --inh-caps=-all --bounding-set=-all "$@"`, "no")
	for _, want := range []string{"user namespaces are turned off on this computer (user.max_user_namespaces = 0)", "sudo sysctl -w user.max_user_namespaces="} {
		if !strings.Contains(why, want) {
			t.Errorf("why = %q, want it to say %q", why, want)
		}
	}
	if strings.Count(why, ". ") > 0 {
		t.Errorf("why is more than one sentence: %q", why)
	}
	// As root of its namespace (with capabilities) a command still needs a
	// user namespace of its own — as root, commands run as an unprivileged
	// uid of one (corral-netinit asroot) — so commands are unavailable
	// there too, with the same sentence.
	why = usernsChild(t, "runner", `exec "$@"`, "no")
	if want := "user namespaces are turned off on this computer (user.max_user_namespaces = 0)"; !strings.Contains(why, want) {
		t.Errorf("as root: why = %q, want it to say %q", why, want)
	}
}

// usernsChild runs this test again as mode in a throwaway user namespace
// whose user.max_user_namespaces is 0, through the shell line run, and
// returns the child's sentence once it says commands are available or not
// as want.
func usernsChild(t *testing.T, mode, run, want string) string {
	t.Helper()
	cmd := exec.Command("unshare", "--user", "--map-root-user", "sh", "-c",
		`echo 0 > /proc/sys/user/max_user_namespaces && `+run,
		"sh", os.Args[0], "-test.run=^TestUsernsRefusedSaysWhy$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CORRAL_TEST_USERNS_CHILD="+mode, "CORRAL_TEST_NETINIT="+execboxtest.NetInit(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s child: %v\n%s", mode, err, out)
	}
	s := string(out)
	if !strings.Contains(s, "available="+want) {
		t.Fatalf("%s child: commands available is not %s:\n%s", mode, want, s)
	}
	why := s[strings.Index(s, "why=")+4:]
	return why[:strings.Index(why, "\n")]
}
