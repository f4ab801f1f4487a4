// SPDX-License-Identifier: Apache-2.0

package execbox

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestUsernsRefusedSaysWhy runs a Runner where user namespaces are
// refused: in a throwaway user namespace whose user.max_user_namespaces is
// 0, without capabilities (as an ordinary user is). Commands are
// unavailable, and the sentence says why and what to do, instead of the
// generic "bubblewrap … cannot create a sandbox". It fails on the code
// before usernsRefused.
func TestUsernsRefusedSaysWhy(t *testing.T) {
	if os.Getenv("CORRAL_TEST_USERNS_CHILD") == "1" {
		r, err := NewRunner(Options{})
		if err != nil {
			t.Fatal(err)
		}
		ok, _, why := r.Available()
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
	cmd := exec.Command("unshare", "--user", "--map-root-user", "sh", "-c",
		`echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --inh-caps=-all --bounding-set=-all "$@"`,
		"sh", os.Args[0], "-test.run=^TestUsernsRefusedSaysWhy$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CORRAL_TEST_USERNS_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "available=no") {
		t.Fatalf("commands available with user namespaces refused:\n%s", s)
	}
	why := s[strings.Index(s, "why=")+4:]
	why = why[:strings.Index(why, "\n")]
	for _, want := range []string{"user namespaces are turned off on this computer (user.max_user_namespaces = 0)", "sudo sysctl -w user.max_user_namespaces="} {
		if !strings.Contains(why, want) {
			t.Errorf("why = %q, want it to say %q", why, want)
		}
	}
	if strings.Count(why, ". ") > 0 {
		t.Errorf("why is more than one sentence: %q", why)
	}
}
