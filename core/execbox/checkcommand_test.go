package execbox

import (
	"strings"
	"testing"

	"corral/core/errs"
)

// TestCheckCommandOneWording: a command that is empty or only white
// space is refused in the one sentence core/sandbox also answers (it said
// "The command is empty." here and "command must not be empty." there),
// a NUL byte and a command over 128 KiB as before; anything else passes.
func TestCheckCommandOneWording(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cmd, want string
		kind      errs.Kind
	}{
		{"", "command must not be empty.", errs.InvalidParams},
		{" \t\n", "command must not be empty.", errs.InvalidParams},
		{"ls\x00", "The command contains a NUL byte.", errs.InvalidParams},
		{strings.Repeat("a", maxArg+1), "The command is longer than 128 KiB", errs.TooLarge},
		{"ls -l", "", ""},
	} {
		err := CheckCommand(c.cmd)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%.20q: %v", c.cmd, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want) || errs.KindOf(err) != c.kind):
			t.Errorf("%.20q: %v (%s), want %q (%s)", c.cmd, err, errs.KindOf(err), c.want, c.kind)
		}
	}
	// Run makes the same check: a runner that cannot run says so first,
	// in Available's words.
	r := &Runner{why: "no bubblewrap here"}
	if _, err := r.Run(t.Context(), Spec{Command: " "}); err == nil || err.Error() != "no bubblewrap here" || errs.KindOf(err) != errs.Unavailable {
		t.Errorf("Run on a runner that cannot run: %v", err)
	}
	if err := r.Ready(); err == nil || err.Error() != "no bubblewrap here" {
		t.Errorf("Ready: %v", err)
	}
}
