package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/testkit/poll"
)

type noRules struct{}

func (noRules) SaveRule(context.Context, policy.Rule) error      { return nil }
func (noRules) DeleteRule(context.Context, string) (bool, error) { return true, nil }
func (noRules) LoadRules(context.Context) ([]policy.Rule, error) { return nil, nil }

// TestQueuedCommandMeetsTheOwnersChange: a command that began before the
// owner paused its agent (or made it Read-only) and waited for a slot
// behind the agent's running command does not run once that command is
// stopped: StopCommandsOf stops only what is listed, and the Caller the
// queued call began with still said "not paused". Red team, live: on the
// old code the queued "touch ran" ran after agent.pause.
func TestQueuedCommandMeetsTheOwnersChange(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(p *policy.Policy)
		by     audit.DecidedBy
		says   string
	}{
		{"agent paused", func(p *policy.Policy) { p.SetClientPaused(alice.Client, true) }, audit.ByPaused, "paused this agent"},
		{"made read-only", func(p *policy.Policy) {
			p.SetLevelOf(func(string) policy.Level { return policy.LevelReadOnly })
		}, audit.ByLevel, "Read-only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var pol *policy.Policy
			w := newWorld(t, func(w *world, cfg *sandbox.Config, ec *Config) {
				var err error
				pol, err = policy.New(t.Context(), policy.Config{Rules: noRules{}, Audit: w.sink, Timeout: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				cfg.Policy = pol
				*ec = Config{Runner: runner(t, w), Enabled: true, MaxPerClient: 1, QueueWait: 2 * time.Minute}
			})
			ctx := context.Background()
			first := make(chan error, 1)
			go func() {
				_, err := w.cmds.Run(ctx, alice, RunArgs{Command: "sleep 60"}, "first", nil)
				first <- err
			}()
			poll.Eventually(t, 30*time.Second, func() bool { return len(w.cmds.Commands()) == 1 }, "the first command to start")
			second := make(chan error, 1)
			go func() {
				// alice as its call began: not paused, at no level.
				_, err := w.cmds.Run(ctx, alice, RunArgs{Command: "touch ran"}, "second", nil)
				second <- err
			}()
			c.change(pol)
			w.cmds.StopCommandsOf(alice.Client)
			if err := <-first; err != nil {
				t.Errorf("first command: %v", err)
			}
			err := <-second
			if errs.KindOf(err) != errs.Denied || !strings.Contains(err.Error(), c.says) {
				t.Errorf("the queued command: %v; want denied (%s)", err, c.says)
			}
			if _, err := os.Stat(filepath.Join(w.dir, "base", "alice", "ran")); !os.IsNotExist(err) {
				t.Errorf("the queued command ran: %v", err)
			}
			var got []audit.Event
			for _, ev := range w.sink.Events() {
				if ev.Op == "command.run" && ev.Target == "touch ran" {
					got = append(got, ev)
				}
			}
			if len(got) != 1 || got[0].Decision != audit.Deny || got[0].DecidedBy != c.by {
				t.Errorf("audited as %+v; want one command.run denied by %s", got, c.by)
			}
		})
	}
}
