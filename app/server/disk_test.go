package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/app/wire"
	"corral/core/audit"
)

// TestFullDisk is issue 16's attack: a command fills the disk that holds
// Corral's audit log. Its event was committed before it started and is
// completed after; new operations are then refused with a sentence, the
// owner is told why, nothing recorded is lost, and Corral resumes by
// itself once there is room.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		if testing.Short() {
			t.Skip("mounting a small filesystem needs root; skipped under -short")
		}
		t.Fatal("mounting a small filesystem needs root (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
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
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := alice.Call(t.Context(), "file.write", m("path", "after.txt", "content", "x")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Corral did not resume once there was room")
		}
		time.Sleep(100 * time.Millisecond)
	}
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs := rpcCall[struct{ Events []wire.Event }](t, owner, "audit.query", m("op", "command.run"))
		if len(evs.Events) == 1 {
			ev = evs.Events[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the running command is not in the audit log")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ev.Detail != "running" || ev.Decision != audit.Allow {
		t.Errorf("while running: %+v", ev)
	}
	// The command is listed just after its event commits: a query may
	// see the event first.
	var running []wire.Running
	for {
		running = rpcCall[struct{ Running []wire.Running }](t, owner, "command.list", nil).Running
		if len(running) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(running) != 1 {
		t.Fatalf("running: %+v", running)
	}
	rpcCall[any](t, owner, "command.cancel", m("request_id", running[0].RequestID))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	evs := rpcCall[struct{ Events []wire.Event }](t, owner, "audit.query", m("op", "command.run"))
	if len(evs.Events) != 1 || evs.Events[0].ID != ev.ID || evs.Events[0].Detail != "cancelled" {
		t.Errorf("after: %+v", evs.Events)
	}
}
