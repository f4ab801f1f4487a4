package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/app/wire"
	"corral/core/audit"
	"corral/core/testkit/poll"
	"corral/store/storetest"
)

// TestFullDisk is issue 16's attack: a command fills the disk that holds
// Corral's audit log. Its event was committed before it started and is
// completed after; new operations are then refused with a sentence, the
// owner is told why, nothing recorded is lost, and Corral resumes by
// itself once there is room.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	dir := storetest.SmallDisk(t, "64m")
	h := startIn(t, dir, "")
	alice := h.dial(aliceKey)
	owner := h.dial(ownerToken)
	rpcCall[any](t, alice, "file.write", m("path", "before.txt", "content", "written before"))

	r := rpcCall[wire.RunResult](t, alice, "command.run", m("command", "dd if=/dev/zero of=fill bs=1M; echo done"))
	if !strings.Contains(r.Stderr, "No space left on device") || !strings.Contains(r.Stdout, "done") {
		t.Fatalf("the command did not fill the disk: %+v", r)
	}
	ce := callErr(t, alice, "file.write", m("path", "after.txt", "content", "x"))
	if ce.Data.Kind != "unavailable" || !strings.Contains(ce.Message, "disk") || !strings.Contains(ce.Message, "full") {
		t.Errorf("a write on a full disk: %+v", ce)
	}
	if ce := callErr(t, alice, "command.run", m("command", "true")); ce.Data.Kind != "unavailable" {
		t.Errorf("a command on a full disk: %+v", ce)
	}
	info := rpcCall[map[string]any](t, owner, "session.info", nil)
	if p, _ := info["audit_problem"].(string); !strings.Contains(p, "full") {
		t.Errorf("the owner is not told: %v", info)
	}
	evs := rpcCall[struct{ Events []wire.Event }](t, owner, "audit.query", m("client", "alice-agent"))
	ops := map[string]string{}
	for _, e := range evs.Events {
		ops[e.Op] = e.Detail + "."
	}
	if !strings.Contains(ops["command.run"], "exit 0") || ops["file.write"] == "" || len(evs.Events) != 2 {
		t.Errorf("events: %+v", evs.Events)
	}

	os.Remove(filepath.Join(h.base, "alice", "fill"))
	poll.EventuallyNil(t, time.Minute, func() error {
		_, err := alice.Call(t.Context(), "file.write", m("path", "after.txt", "content", "x"))
		return err
	}, "Corral to resume once there was room")
	if p, _ := rpcCall[map[string]any](t, owner, "session.info", nil)["audit_problem"].(string); p != "" {
		t.Errorf("still a problem: %q", p)
	}
	after := rpcCall[struct{ Events []wire.Event }](t, owner, "audit.query", m("client", "alice-agent"))
	if len(after.Events) != len(evs.Events)+1 {
		t.Errorf("%d events after, %d before", len(after.Events), len(evs.Events))
	}
}

// TestCommandRecordedBeforeItStarts: a running command is already in the
// audit log ("running"), and the same event says how it ended.
func TestCommandRecordedBeforeItStarts(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	owner := h.dial(ownerToken)
	done := async(alice, "command.run", m("command", "sleep 30"))
	var ev wire.Event
	poll.Eventually(t, callWithin, func() bool {
		evs := rpcCall[struct{ Events []wire.Event }](t, owner, "audit.query", m("op", "command.run"))
		if len(evs.Events) == 1 {
			ev = evs.Events[0]
		}
		return len(evs.Events) == 1
	}, "the running command in the audit log")
	if ev.Detail != "running" || ev.Decision != audit.Allow {
		t.Errorf("while running: %+v", ev)
	}
	// The command is listed just after its event commits: a query may
	// see the event first.
	var running []wire.Running
	poll.EventuallyNil(t, callWithin, func() error {
		if running = rpcCall[struct{ Running []wire.Running }](t, owner, "command.list", nil).Running; len(running) != 1 {
			return fmt.Errorf("running: %+v", running)
		}
		return nil
	}, "the command in command.list")
	rpcCall[any](t, owner, "command.cancel", m("request_id", running[0].RequestID))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	evs := rpcCall[struct{ Events []wire.Event }](t, owner, "audit.query", m("op", "command.run"))
	if len(evs.Events) != 1 || evs.Events[0].ID != ev.ID || evs.Events[0].Detail != "cancelled" {
		t.Errorf("after: %+v", evs.Events)
	}
}
