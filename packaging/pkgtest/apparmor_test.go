// SPDX-License-Identifier: Apache-2.0

package pkgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAppArmorProfile parses packaging/apparmor/corral with apparmor_parser
// (parse only: -Q -K, nothing loaded, the kernel may have no AppArmor).
// Its profiles attach to /usr/bin/corral and corral-netinit, each with the
// userns rule. A parser older than AppArmor 4 (Debian 12's 3.0) knows
// neither abi/4.0 nor userns: it parses the profile without them, and the
// rule is checked by the text only.
func TestAppArmorProfile(t *testing.T) {
	name := filepath.Join(root(t), "packaging", "apparmor", "corral")
	text, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"abi <abi/4.0>,",
		"profile corral /usr/bin/corral flags=(unconfined) {\n  userns,\n",
		"profile corral-netinit /usr/lib/corral/corral-netinit flags=(unconfined) {\n  userns,\n",
		"include if exists <local/corral>",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the profile lacks %q", want)
		}
	}
	if _, err := exec.LookPath("apparmor_parser"); err != nil {
		if testing.Short() {
			t.Skip("-short: no apparmor_parser")
		}
		t.Fatal("apparmor_parser is not installed (packaging/deps.sh installs apparmor)")
	}
	parse := func(p string) ([]byte, error) {
		return exec.Command("apparmor_parser", "-Q", "-K", "-T", p).CombinedOutput()
	}
	if _, err := os.Stat("/etc/apparmor.d/abi/4.0"); err != nil {
		old := regexp.MustCompile(`(?m)^\s*userns,\n`).ReplaceAll(text, nil)
		old = []byte(strings.Replace(string(old), "abi <abi/4.0>", "abi <abi/3.0>", 1))
		name = filepath.Join(t.TempDir(), "corral")
		os.WriteFile(name, old, 0o644)
		t.Logf("apparmor_parser before AppArmor 4: parsing the profile without abi/4.0 and userns")
	}
	if out, err := parse(name); err != nil {
		t.Errorf("apparmor_parser: %v\n%s", err, out)
	}
	// The parser does refuse a broken profile.
	broken := filepath.Join(t.TempDir(), "broken")
	os.WriteFile(broken, []byte("profile corral /usr/bin/corral {\n  no-such-rule,\n}\n"), 0o644)
	if out, err := parse(broken); err == nil {
		t.Errorf("apparmor_parser accepted a broken profile:\n%s", out)
	}
}
