package commands

import (
	"strings"
	"testing"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/policy"
	"corral/core/sandbox"
)

// TestCommandTextCheckedBeforeTheQuestion: a command execbox could never
// run (only white space, over 128 KiB) is refused by execbox.CheckCommand
// before anything is decided, and the owner is never asked about it. On
// the old code core/commands checked only "" itself: with [exec] ask on,
// "   " and a 129 KiB command went to the owner as questions (here, with
// nobody to answer, they were refused by strict, not as invalid).
func TestCommandTextCheckedBeforeTheQuestion(t *testing.T) {
	w := newWorld(t, func(w *world, cfg *sandbox.Config, ec *Config) {
		pol, err := policy.New(t.Context(), policy.Config{Rules: noRules{}, Audit: w.sink, Timeout: time.Minute, Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Policy = pol
		*ec = Config{Runner: runner(t, w), Enabled: true, Ask: true}
	})
	for _, c := range []struct {
		cmd  string
		kind errs.Kind
	}{
		{" \t\n", errs.InvalidParams},
		{strings.Repeat("a", 129<<10), errs.TooLarge},
	} {
		_, err := w.cmds.Run(t.Context(), alice, RunArgs{Command: c.cmd}, "1", nil)
		if errs.KindOf(err) != c.kind {
			t.Errorf("%.10q: %v (%s), want %s", c.cmd, err, errs.KindOf(err), c.kind)
		}
	}
	for _, ev := range w.sink.Events() {
		if ev.DecidedBy == audit.ByStrict || ev.Op == "approval.request" {
			t.Errorf("the owner was asked: %+v", ev)
		}
	}
}
