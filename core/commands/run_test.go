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

// execWorld is a world whose commands run under ec (its Runner made
// here), with them Enabled.
func execWorld(t *testing.T, ec Config) *world {
	t.Helper()
	return newWorld(t, func(w *world, _ *sandbox.Config, c *Config) {
		ec.Runner, ec.Enabled = runner(t, w), true
		*c = ec
	})
}

// TestExecLimits: the limits of Config are the ones a command meets —
// they are configured there only, not again on the runner.
func TestExecLimits(t *testing.T) {
	w := execWorld(t, Config{Timeout: time.Second, MaxOutput: 4096, MaxPerClient: 1, QueueWait: 200 * time.Millisecond})
	ctx := context.Background()

	r, err := w.cmds.Run(ctx, alice, RunArgs{Command: "head -c 100000 /dev/zero | tr '\\0' x"}, "out", nil)
	if err != nil || !r.Truncated || len(r.Stdout) != 4096 {
		t.Errorf("output: truncated %v, %d bytes, %v; want 4096 bytes kept", r.Truncated, len(r.Stdout), err)
	}

	// Timeout is also the longest an agent may ask for.
	start := time.Now()
	r, err = w.cmds.Run(ctx, alice, RunArgs{Command: "sleep 30", TimeoutMs: 60_000}, "slow", nil)
	if err != nil || !r.TimedOut || time.Since(start) > 15*time.Second {
		t.Errorf("asked for 60 s under a 1 s limit: %+v, %v after %s", r, err, time.Since(start))
	}

	// One command at a time for alice: a second waits QueueWait, then is
	// refused.
	first := make(chan error, 1)
	go func() {
		_, err := w.cmds.Run(ctx, alice, RunArgs{Command: "sleep 30", TimeoutMs: 900}, "first", nil)
		first <- err
	}()
	poll.Eventually(t, 10*time.Second, func() bool { return len(w.cmds.Commands()) > 0 }, "the first command to start")
	_, err = w.cmds.Run(ctx, alice, RunArgs{Command: "true"}, "second", nil)
	if errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "already runs 1 commands at once") {
		t.Errorf("second command beside the first: %v", err)
	}
	if err := <-first; err != nil {
		t.Errorf("first command: %v", err)
	}
}

// TestReadOnlyAgentRunsNoCommand: an agent at the read-only trust level
// is refused a command before anything else is decided, the refusal
// audited as the level's, and nothing runs. The sandbox judged this in
// its begin by the operation's name; the commands judge it themselves
// now (Op.Permits).
func TestReadOnlyAgentRunsNoCommand(t *testing.T) {
	w := execWorld(t, Config{})
	ro := alice
	ro.Level = policy.LevelReadOnly
	_, err := w.cmds.Run(t.Context(), ro, RunArgs{Command: "touch ran"}, "1", nil)
	if errs.KindOf(err) != errs.Denied || !strings.Contains(err.Error(), "Read-only") {
		t.Fatalf("a read-only agent's command: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "base", "alice", "ran")); !os.IsNotExist(err) {
		t.Errorf("the command ran: %v", err)
	}
	evs := w.sink.Events()
	if len(evs) != 1 || evs[0].Op != "command.run" || evs[0].Decision != audit.Deny || evs[0].DecidedBy != audit.ByLevel {
		t.Errorf("audited as %+v; want one command.run denied by level", evs)
	}
	if _, err := w.cmds.Run(t.Context(), alice, RunArgs{Command: "touch ran"}, "2", nil); err != nil {
		t.Errorf("the same command from an agent at no level: %v", err)
	}
}

// TestAgentStoppedSinceItsCallBeganRunsNoCommand: the owner removing or
// pausing one agent, or making it Read-only, stops its running commands,
// but a command whose call read the agent's settings before the change
// and was not yet running (waiting for a free slot, say) must not start
// either: it is judged by the agent's settings now (SetAgents). Before
// the fix such a command ran — on the daemon, a fifth command queued
// behind four of a Trusted agent created a file after the owner made the
// agent Read-only, paused it or removed it.
func TestAgentStoppedSinceItsCallBeganRunsNoCommand(t *testing.T) {
	w := execWorld(t, Config{})
	ran := filepath.Join(w.dir, "base", "alice", "ran")
	// A pause or a Read-only level since the call began is the policy's
	// to say (TestQueuedCommandMeetsTheOwnersChange); the directory says
	// whether the agent is still there.
	for _, tc := range []struct {
		name    string
		now     sandbox.Caller
		removed bool
		kind    errs.Kind
		by      audit.DecidedBy
	}{
		{"removed", sandbox.Caller{}, true, errs.Forbidden, audit.ByOwner},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.cmds.SetAgents(func(client string) (sandbox.Caller, bool) {
				return tc.now, client == alice.Client && !tc.removed
			})
			// alice as her call read her: Trusted, not paused, there.
			_, err := w.cmds.Run(t.Context(), alice, RunArgs{Command: "touch ran"}, tc.name, nil)
			if errs.KindOf(err) != tc.kind {
				t.Errorf("the command of an agent %s since its call began: %v; want %s", tc.name, err, tc.kind)
			}
			if _, err := os.Stat(ran); !os.IsNotExist(err) {
				os.Remove(ran)
				t.Errorf("the command ran: %v", err)
			}
			evs := w.sink.Events()
			if ev := evs[len(evs)-1]; ev.Op != "command.run" || ev.Decision != audit.Deny || ev.DecidedBy != tc.by {
				t.Errorf("audited as %+v; want command.run denied by %s", ev, tc.by)
			}
		})
	}
	w.cmds.SetAgents(func(string) (sandbox.Caller, bool) { return alice, true })
	if _, err := w.cmds.Run(t.Context(), alice, RunArgs{Command: "touch ran"}, "again", nil); err != nil {
		t.Errorf("the command once the agent may run commands again: %v", err)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("the command allowed again did not run: %v", err)
	}
}
