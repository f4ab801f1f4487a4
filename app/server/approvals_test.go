package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/app/client"
	"corral/app/wire"
	"corral/core/audit"
	"corral/core/policy"
)

// owner subscribes to approvals and returns the next requested one.
type ownerView struct {
	t testing.TB
	c *client.Client
}

func (h *harness) owner(t testing.TB) ownerView {
	c := h.dial(ownerToken)
	rpcCall[any](t, c, "approval.subscribe", nil)
	return ownerView{t, c}
}

func (o ownerView) next(method string) json.RawMessage {
	o.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case n := <-o.c.Notifications():
			if n.Method == method {
				return n.Params
			}
		case <-timeout:
			o.t.Fatalf("no %s notification", method)
		}
	}
}

func (o ownerView) requested() wire.Approval {
	var p struct{ Approval wire.Approval }
	json.Unmarshal(o.next("approval.requested"), &p)
	return p.Approval
}

// async makes a call in the background.
func async(c *client.Client, method string, params any) chan error {
	ch := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := c.Call(ctx, method, params)
		ch <- err
	}()
	return ch
}

// startWithOutsideFile starts Corral in a fresh home that holds
// outside/tax.pdf, a file beyond every agent's folder: reading it asks.
func startWithOutsideFile(t *testing.T) (*harness, string) {
	t.Helper()
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside", "tax.pdf")
	os.MkdirAll(filepath.Dir(outside), 0o755)
	os.WriteFile(outside, []byte("tax data"), 0o644)
	return startIn(t, dir, ""), outside
}

func TestApprovalFlow(t *testing.T) {
	t.Parallel()
	h, outside := startWithOutsideFile(t)
	alice := h.dial(aliceKey)
	own := h.owner(t)

	// allow_once lets exactly one read through.
	done := async(alice, "file.read", m("path", outside, "reason", "summarise my taxes"))
	a := own.requested()
	if a.Access != policy.Read || a.Target != outside || a.Client != "alice-agent" || a.User != "alice" || a.Reason != "summarise my taxes" || a.OneTimeOnly || a.Description == "" {
		t.Fatalf("approval: %+v", a)
	}
	pending := rpcCall[struct{ Pending []wire.Approval }](t, own.c, "approval.list", nil)
	if len(pending.Pending) != 1 || pending.Pending[0].ID != a.ID {
		t.Fatalf("approval.list: %+v", pending)
	}
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_once"))
	if err := <-done; err != nil {
		t.Fatalf("read after allow_once: %v", err)
	}
	if ce := callErr(t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_once")); ce.Data.Kind != "not_found" {
		t.Errorf("second answer: %+v", ce)
	}
	// Asked again next time; deny_always denies now and from then on.
	done = async(alice, "file.read", m("path", outside))
	a = own.requested()
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_always"))
	if err := <-done; err == nil || err.(*client.Error).Data.Kind != "denied" {
		t.Fatalf("after deny_always: %v", err)
	}
	ce := callErr(t, alice, "file.read", m("path", outside))
	if ce.Data.Kind != "denied" {
		t.Errorf("rule deny: %+v", ce)
	}
	rules := rpcCall[struct{ Rules []wire.Rule }](t, own.c, "rule.list", nil)
	if len(rules.Rules) != 1 || rules.Rules[0].Decision != policy.EffectDeny {
		t.Fatalf("rules: %+v", rules)
	}
	rpcCall[any](t, own.c, "rule.revoke", m("id", rules.Rules[0].ID))

	// allow_always for the folder survives a restart.
	done = async(alice, "file.read", m("path", outside))
	a = own.requested()
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_always", "widen", "folder", "expires_in", "7d"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h.stop()
	h = startIn(t, h.dir, "")
	alice = h.dial(aliceKey)
	r := rpcCall[map[string]any](t, alice, "file.read", m("path", filepath.Join(filepath.Dir(outside), "tax.pdf")))
	if r["content"] != "tax data" {
		t.Fatalf("after restart: %v", r)
	}
	own = h.owner(t)
	rules = rpcCall[struct{ Rules []wire.Rule }](t, own.c, "rule.list", nil)
	if len(rules.Rules) != 1 || rules.Rules[0].Match != policy.Prefix || rules.Rules[0].Target != filepath.Dir(outside) || rules.Rules[0].Expires == nil {
		t.Fatalf("rules after restart: %+v", rules)
	}
	// Revoking makes it ask again.
	rpcCall[any](t, own.c, "rule.revoke", m("id", rules.Rules[0].ID))
	done = async(alice, "file.read", m("path", outside))
	a = own.requested()
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once"))
	<-done

	// The audit log, kept across the restart, tells how each was decided.
	type page struct{ Events []wire.Event }
	ev := rpcCall[page](t, own.c, "audit.query", m("op", "file.read"))
	var got []string
	for _, e := range ev.Events {
		got = append(got, string(e.Decision)+"/"+string(e.DecidedBy))
	}
	want := []string{"deny/owner", "allow/rule", "allow/owner", "deny/rule", "deny/owner", "allow/owner"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("read events, newest first:\n got %v\nwant %v", got, want)
	}
	if !strings.Contains(ev.Events[5].Detail, "owner answered allow_once") {
		t.Errorf("detail of the first read: %q", ev.Events[5].Detail)
	}
	changes := rpcCall[page](t, own.c, "audit.query", m("op", "rule.revoke"))
	if len(changes.Events) != 2 {
		t.Errorf("rule.revoke events: %d, want 2", len(changes.Events))
	}
}

func TestApprovalTimeoutStrictAndPause(t *testing.T) {
	t.Parallel()
	h := start(t, "[sandbox]\napproval_timeout = \"1s\"\n")
	alice := h.dial(aliceKey)
	// Strict, nobody subscribed: denied at once.
	ce := callErr(t, alice, "file.read", m("path", "/etc/hostname"))
	if ce.Data.Kind != "denied" {
		t.Fatalf("strict: %+v", ce)
	}
	own := h.owner(t)
	start := time.Now()
	ce = callErr(t, alice, "file.read", m("path", "/etc/hostname"))
	if ce.Data.Kind != "denied" || time.Since(start) < time.Second {
		t.Fatalf("timeout: %+v after %v", ce, time.Since(start))
	}
	own.requested()
	var res struct{ ID, Decision, By string }
	json.Unmarshal(own.next("approval.resolved"), &res)
	if res.By != "timeout" {
		t.Errorf("resolved: %+v", res)
	}
	rpcCall[any](t, own.c, "agents.pause", nil)
	info := rpcCall[map[string]any](t, alice, "session.info", nil)
	if info["paused"] != true {
		t.Errorf("session.info while paused: %v", info)
	}
	callErr(t, alice, "file.read", m("path", "/etc/hostname"))
	rpcCall[any](t, own.c, "agents.resume", nil)

	ev := rpcCall[struct{ Events []wire.Event }](t, own.c, "audit.query", m("op", "file.read"))
	want := []audit.DecidedBy{audit.ByPaused, audit.ByTimeout, audit.ByStrict}
	if len(ev.Events) != 3 {
		t.Fatalf("events: %+v", ev.Events)
	}
	for i, e := range ev.Events {
		if e.DecidedBy != want[i] || e.Decision != audit.Deny {
			t.Errorf("event %d: %s/%s, want deny by %s", i, e.Decision, e.DecidedBy, want[i])
		}
	}
	if rules := rpcCall[struct{ Rules []wire.Rule }](t, own.c, "rule.list", nil); len(rules.Rules) != 0 {
		t.Errorf("timeout created rules: %+v", rules)
	}
}

func TestConcurrentIdenticalRequestsShareOneApproval(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	own := h.owner(t)
	const n = 8
	var wg sync.WaitGroup
	errc := make(chan error, n)
	for range n {
		c := h.dial(aliceKey)
		wg.Go(func() { errc <- <-async(c, "file.stat", m("path", "/etc/hostname")) })
	}
	a := own.requested()
	// allow_session: requests that joined get the answer, later ones the rule.
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_session"))
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Errorf("request: %v", err)
		}
	}
	if p := rpcCall[struct{ Pending []wire.Approval }](t, own.c, "approval.list", nil); len(p.Pending) != 0 {
		t.Errorf("left pending: %+v", p.Pending)
	}
	select {
	case n := <-own.c.Notifications():
		if n.Method == "approval.requested" {
			t.Errorf("a second approval was asked: %s", n.Params)
		}
	default:
	}
	ev := rpcCall[struct{ Events []wire.Event }](t, own.c, "audit.query", m("op", "file.stat"))
	if len(ev.Events) != n {
		t.Errorf("file.stat events: %d, want %d", len(ev.Events), n)
	}
}

func TestClientsCannotAnswer(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	for _, meth := range []string{"approval.list", "approval.respond", "approval.subscribe", "rule.list", "rule.revoke", "agents.pause", "agents.resume", "links.rotate"} {
		if ce := callErr(t, alice, meth, nil); ce.Data.Kind != "forbidden" {
			t.Errorf("%s: %+v", meth, ce)
		}
	}
}

// Shutting down while an agent waits on an approval withdraws the
// question: the agent gets its answer and the event is in the log.
func TestShutdownWithdrawsPendingApprovals(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	own := h.owner(t)
	done := async(alice, "file.read", m("path", "/etc/hostname"))
	own.requested()
	h.stop()
	select {
	case err := <-done:
		if ce, ok := err.(*client.Error); !ok || ce.Data.Kind != "denied" {
			t.Fatalf("agent's answer: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer after shutdown")
	}
	st := reopen(t, h)
	p, err := st.Query(context.Background(), audit.Filter{Op: "file.read"})
	if err != nil || len(p.Events) != 1 || p.Events[0].Decision != audit.Deny {
		t.Fatalf("event: %v %+v", err, p.Events)
	}
}

// TestWidenedFolderAnswer: widening an answer about a folder covers that
// folder, not the one above it: allowing a listing of etc/ssl for the
// folder must not let the agent read etc/shadow. The approval says which
// folder a widened answer would cover.
func TestWidenedFolderAnswer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ssl := filepath.Join(dir, "outside", "etc", "ssl")
	os.MkdirAll(ssl, 0o755)
	os.WriteFile(filepath.Join(ssl, "cert.crt"), []byte("CERT"), 0o644)
	shadow := filepath.Join(dir, "outside", "etc", "shadow")
	os.WriteFile(shadow, []byte("SHADOW"), 0o644)
	h := startIn(t, dir, "")
	alice := h.dial(aliceKey)
	own := h.owner(t)

	done := async(alice, "folder.list", m("path", ssl))
	a := own.requested()
	if a.Folder != ssl {
		t.Errorf("approval for listing %s says a widened answer covers %q", ssl, a.Folder)
	}
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_always", "widen", "folder"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rules := rpcCall[struct{ Rules []wire.Rule }](t, own.c, "rule.list", nil)
	if len(rules.Rules) != 1 || rules.Rules[0].Target != ssl || rules.Rules[0].Match != policy.Prefix {
		t.Fatalf("rules: %+v", rules.Rules)
	}
	if r := rpcCall[map[string]any](t, alice, "file.read", m("path", filepath.Join(ssl, "cert.crt"))); r["content"] != "CERT" {
		t.Errorf("a file in the allowed folder: %v", r)
	}
	// Outside it the owner is asked again; a file's question still
	// offers the folder holding it.
	done = async(alice, "file.read", m("path", shadow))
	a = own.requested()
	if a.Target != shadow || a.Folder != filepath.Dir(shadow) {
		t.Errorf("question for %s: target %q, folder %q", shadow, a.Target, a.Folder)
	}
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once"))
	if err := <-done; err == nil {
		t.Error("etc/shadow was read without the owner's answer")
	}
}

// TestPauseStopsEverything: while paused, an agent's operations inside
// its own folder are refused too (denied, decided_by paused), with a
// sentence; the owner's own calls still work; resuming lets them through.
func TestPauseStopsEverything(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	owner := h.dial(ownerToken)
	rpcCall[any](t, alice, "file.write", m("path", "notes.txt", "content", "before"))
	rpcCall[any](t, owner, "agents.pause", nil)
	for _, call := range []struct {
		method string
		params map[string]any
	}{
		{"file.write", m("path", "notes.txt", "content", "while paused")},
		{"file.delete", m("path", "notes.txt")},
		{"file.read", m("path", "notes.txt")},
		{"folder.list", nil},
		{"link.create", m("path", "notes.txt")},
	} {
		ce := callErr(t, alice, call.method, call.params)
		if ce.Data.Kind != "denied" || !strings.Contains(ce.Message, "Agents are paused by the owner") {
			t.Errorf("%s while paused: %+v", call.method, ce)
		}
	}
	got := rpcCall[struct{ Content string }](t, owner, "file.read", m("path", "notes.txt", "context", m("user_id", "alice")))
	if got.Content != "before" {
		t.Errorf("the owner's read while paused: %+v", got)
	}
	ev := rpcCall[struct{ Events []wire.Event }](t, owner, "audit.query", m("client", "alice-agent", "decision", "deny"))
	if len(ev.Events) != 5 || ev.Events[0].DecidedBy != audit.ByPaused {
		t.Errorf("refusals in the log: %+v", ev.Events)
	}
	rpcCall[any](t, owner, "agents.resume", nil)
	rpcCall[any](t, alice, "file.write", m("path", "notes.txt", "content", "after"))
}
