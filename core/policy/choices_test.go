package policy

import (
	"slices"
	"testing"
)

// The table is what every surface shows: allow row before deny row, each
// decision once, the broker accepts exactly what it offers, and the
// default is Deny for secrets.
func TestChoicesTable(t *testing.T) {
	seenDeny := false
	var all []Decision
	for _, c := range AllChoices() {
		if c.Label == "" || c.Explain == "" || c.Said == "" || !c.Decision.valid() || c.Allows != c.Decision.Allows() {
			t.Errorf("row %+v", c)
		}
		if c.Allows && seenDeny {
			t.Errorf("%s after a deny row", c.Decision)
		}
		seenDeny = seenDeny || !c.Allows
		all = append(all, c.Decision)
	}
	if want := []Decision{AllowOnce, AllowSession, AllowAlways, DenyOnce, DenyAlways}; !slices.Equal(all, want) {
		t.Errorf("table %v", all)
	}
	once := Approval{OneTimeOnly: true}
	if got := once.Decisions(); !slices.Equal(got, []Decision{AllowOnce, DenyOnce}) {
		t.Errorf("one-time-only %v", got)
	}
	if (Approval{}).Default() != AllowOnce || (Approval{Sensitive: "SSH keys"}).Default() != DenyOnce {
		t.Error("default answer")
	}
	if FolderName("alice") != "alice’s folder" || FolderName("default") != "the default folder" {
		t.Error("folder names")
	}
}
