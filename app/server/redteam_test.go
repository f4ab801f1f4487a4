package server

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"corral/app/client"
	"corral/app/wire"
)

// TestReadOnlyWithdrawsWaitingQuestions (red team): an agent asks to
// write a file outside its folder; while the question waits, the owner
// makes the agent Read-only; then an Allow on the card still on screen
// (the dashboard, the phone, the tray) let the Read-only agent write,
// because the sandbox judges a call's level when the call starts. Seen
// through the real binary: the write went through after set_level. Now
// set_level withdraws the agent's waiting questions its new level
// forbids (resolved "level" on every surface), the late Allow finds no
// question, the file is unchanged, and the audit row of set_level says
// how many were withdrawn; a waiting read is left to the owner.
func TestReadOnlyWithdrawsWaitingQuestions(t *testing.T) {
	t.Parallel()
	h, outside := startWithOutsideFile(t)
	own := h.owner(t)
	alice := h.dial(aliceKey)

	writeDone := async(alice, "file.write", m("path", outside, "content", "overwritten"))
	qw := own.requested()
	readDone := async(alice, "file.read", m("path", outside))
	qr := own.requested()

	rpcCall[any](t, own.c, "agent.set_level", m("name", "alice-agent", "level", "read_only"))
	var res struct{ ID, Decision, By string }
	json.Unmarshal(own.next("approval.resolved"), &res)
	if res.ID != qw.ID || res.Decision != "deny_once" || res.By != "level" {
		t.Errorf("resolved: %+v, want %s denied by level", res, qw.ID)
	}
	if ce := callErr(t, own.c, "approval.respond", m("id", qw.ID, "decision", "allow_once")); ce.Data.Kind != "not_found" {
		t.Errorf("a late Allow on the write's question: %+v", ce)
	}
	select {
	case err := <-writeDone:
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Data.Kind != "denied" || !strings.Contains(ce.Message, "Read-only") {
			t.Errorf("the waiting write after set_level read_only: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the waiting write was not answered when the agent was made Read-only")
	}
	if b, _ := os.ReadFile(outside); string(b) != "tax data" {
		t.Fatalf("a Read-only agent changed %s: %q", outside, b)
	}
	// The read is still the owner's to answer.
	rpcCall[any](t, own.c, "approval.respond", m("id", qr.ID, "decision", "allow_once"))
	if err := <-readDone; err != nil {
		t.Errorf("the waiting read: %v", err)
	}
	ev := rpcCall[struct{ Events []wire.Event }](t, own.c, "audit.query", m("op", "agent.set_level"))
	if len(ev.Events) != 1 || !strings.Contains(ev.Events[0].Detail, "0 running command(s) stopped; 1 waiting question(s) withdrawn") {
		t.Errorf("agent.set_level events: %+v", ev.Events)
	}
}

// TestRemovedAgentsQuestionsWithdrawn: removing an agent withdraws its
// questions still waiting, saying why (the question of an MCP request
// over HTTP outlives a hang-up, and a late Allow would let the removed
// agent act). Before, they were withdrawn as by a pause: the card said
// "paused" and the agent was told agents are paused.
func TestRemovedAgentsQuestionsWithdrawn(t *testing.T) {
	t.Parallel()
	h, outside := startWithOutsideFile(t)
	own := h.owner(t)
	added := rpcCall[addedAgent](t, own.c, "agent.add", m("name", "temp-helper", "user", "alice"))
	temp := h.dial(added.Key)
	done := async(temp, "file.write", m("path", outside, "content", "overwritten"))
	q := own.requested()
	rpcCall[any](t, own.c, "agent.remove", m("name", "temp-helper"))
	var res struct{ ID, Decision, By string }
	json.Unmarshal(own.next("approval.resolved"), &res)
	if res.ID != q.ID || res.Decision != "deny_once" || res.By != "withdrawn" {
		t.Errorf("resolved: %+v, want %s denied, withdrawn", res, q.ID)
	}
	if ce := callErr(t, own.c, "approval.respond", m("id", q.ID, "decision", "allow_once")); ce.Data.Kind != "not_found" {
		t.Errorf("a late Allow on the removed agent's question: %+v", ce)
	}
	<-done // hung up or denied: either way not written
	if b, _ := os.ReadFile(outside); string(b) != "tax data" {
		t.Fatalf("a removed agent changed %s: %q", outside, b)
	}
	ev := rpcCall[struct{ Events []wire.Event }](t, own.c, "audit.query", m("op", "file.write", "client", "temp-helper"))
	if len(ev.Events) != 1 || !strings.Contains(ev.Events[0].Detail+ev.Events[0].Error, "removed this agent") {
		t.Errorf("the removed agent's write is recorded as %+v; want it to say the owner removed the agent", ev.Events)
	}
}
