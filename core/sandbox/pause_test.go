package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/policy"
)

// TestCallBegunBeforeThePause: a call whose Caller was taken before the
// owner paused its agent (or made it Read-only) — one waiting in a queue
// or a search slot when the change landed — is refused where it waits:
// a write before its change, a grep or find once it has its search
// turn. On the old code each of these went through (the write wrote),
// since only the all-agents pause was asked again.
func TestCallBegunBeforeThePause(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(p *policy.Policy)
		by     audit.DecidedBy
		says   string
		reads  bool // reads still go on
	}{
		{"agent paused", func(p *policy.Policy) { p.SetClientPaused(alice.Client, true) }, audit.ByPaused, "paused this agent", false},
		{"made read-only", func(p *policy.Policy) {
			p.SetLevelOf(func(string) policy.Level { return policy.LevelReadOnly })
		}, audit.ByLevel, "Read-only", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			if _, err := w.box.Write(ctx, alice, WriteArgs{Path: "a.txt", Content: "before"}); err != nil {
				t.Fatal(err)
			}
			c.change(w.pol)
			// alice as its calls began: not paused, at no level.
			_, err := w.box.Write(ctx, alice, WriteArgs{Path: "a.txt", Content: "after the pause"})
			if errs.KindOf(err) != errs.Denied || !strings.Contains(err.Error(), c.says) {
				t.Errorf("write: %v; want denied (%s)", err, c.says)
			}
			if b, _ := os.ReadFile(filepath.Join(w.dir, "base", "alice", "a.txt")); string(b) != "before" {
				t.Errorf("the file holds %q", b)
			}
			_, gerr := w.box.Grep(ctx, alice, GrepArgs{Pattern: "before"})
			_, ferr := w.box.Find(ctx, alice, FindArgs{Pattern: "*.txt"})
			for what, err := range map[string]error{"grep": gerr, "find": ferr} {
				if c.reads && err != nil {
					t.Errorf("%s of a Read-only agent: %v", what, err)
				}
				if !c.reads && (errs.KindOf(err) != errs.Denied || !strings.Contains(err.Error(), c.says)) {
					t.Errorf("%s: %v; want denied (%s)", what, err, c.says)
				}
			}
			denied := 0
			for _, ev := range w.sink.Events() {
				if ev.Decision == audit.Deny {
					denied++
					if ev.DecidedBy != c.by {
						t.Errorf("%s refused by %s, want %s", ev.Op, ev.DecidedBy, c.by)
					}
				}
			}
			if want := map[bool]int{true: 1, false: 3}[c.reads]; denied != want {
				t.Errorf("%d refusals recorded, want %d", denied, want)
			}
		})
	}
}
