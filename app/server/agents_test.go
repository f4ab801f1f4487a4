package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/app/client"
	"corral/app/config"
	"corral/app/wire"
	"corral/core/audit"
	"corral/core/testkit/poll"
)

// dialStatus dials with key and returns the HTTP status of a refused
// upgrade (0 when the dial succeeded; the connection is closed).
func dialStatus(t *testing.T, h *harness, key string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, h.url, key)
	if err == nil {
		c.Close()
		return 0
	}
	var de *client.DialError
	if !errors.As(err, &de) {
		t.Fatalf("dial: %v", err)
	}
	return de.Status
}

// waitClosed waits until a call on c fails because the connection ended.
func waitClosed(t *testing.T, c *client.Client) {
	t.Helper()
	poll.Eventually(t, 5*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Call(ctx, "session.info", nil)
		cancel()
		var ce *client.Error
		return err != nil && !errors.As(err, &ce) // not an answer: the connection is gone
	}, "the connection to close")
}

type addedAgent struct {
	Agent agentInfo `json:"agent"`
	Key   string    `json:"key"`
}

// TestAgentsAtRuntime is the black-box check of issue 18: an agent added
// through the owner's API works at once, in its person's folder only; a
// person added at runtime gets a folder and the same isolation as a
// configured one; pause, rotate and remove take effect on open
// connections; everything survives a restart and is audited.
func TestAgentsAtRuntime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := startIn(t, dir, "")
	owner := h.dial(ownerToken)

	// A client may not manage agents.
	alice := h.dial(aliceKey)
	if e := callErr(t, alice, "agent.add", m("name", "x", "user", "alice")); e.Data.Kind != "forbidden" {
		t.Errorf("client agent.add: %+v", e)
	}

	// A person added at runtime gets a folder at once.
	var pa struct {
		Person personInfo `json:"person"`
	}
	pa = rpcCall[struct {
		Person personInfo `json:"person"`
	}](t, owner, "person.add", m("name", "Carol Ann"))
	if pa.Person.ID != "carol-ann" || pa.Person.Folder != filepath.Join(h.base, "carol-ann") {
		t.Fatalf("person.add: %+v", pa.Person)
	}
	if fi, err := os.Stat(pa.Person.Folder); err != nil || !fi.IsDir() {
		t.Fatalf("no folder for the new person: %v", err)
	}
	if e := callErr(t, owner, "person.add", m("name", "Carol", "id", "carol-ann")); e.Data.Kind != "exists" {
		t.Errorf("duplicate person: %+v", e)
	}
	for _, bad := range []string{"share", "companion", "default", "../x", "a/b"} {
		if e := callErr(t, owner, "person.add", m("name", "X", "id", bad)); e.Data.Kind != "invalid_params" {
			t.Errorf("person id %q: %+v", bad, e)
		}
	}

	// An agent added for her works at once, in her folder.
	added := rpcCall[addedAgent](t, owner, "agent.add", m("name", "carol-helper", "user", "carol-ann"))
	if !strings.HasPrefix(added.Key, "corral_") || added.Agent.FromConfig || added.Agent.User != "carol-ann" {
		t.Fatalf("agent.add: %+v", added)
	}
	if e := callErr(t, owner, "agent.add", m("name", "alice-agent", "user", "alice")); e.Data.Kind != "exists" {
		t.Errorf("name of a config agent: %+v", e)
	}
	if e := callErr(t, owner, "agent.add", m("name", "ghost", "user", "nobody")); e.Data.Kind != "invalid_params" {
		t.Errorf("unknown person: %+v", e)
	}
	carol := h.dial(added.Key)
	rpcCall[any](t, carol, "file.write", m("path", "notes/a.txt", "content", "carol's"))
	if b, err := os.ReadFile(filepath.Join(h.base, "carol-ann", "notes", "a.txt")); err != nil || string(b) != "carol's" {
		t.Fatalf("file not in carol-ann's folder: %q %v", b, err)
	}
	rpcCall[any](t, alice, "file.write", m("path", "secret.txt", "content", "alice's"))

	// Isolation holds as for configured people.
	if e := callErr(t, carol, "file.read", m("path", "secret.txt", "context", m("user_id", "alice"))); e.Data.Kind != "forbidden" {
		t.Errorf("carol acting for alice: %+v", e)
	}
	if e := callErr(t, carol, "file.read", m("path", "../alice/secret.txt")); e.Data.Kind != "denied" && e.Data.Kind != "invalid_path" {
		t.Errorf("carol climbing to alice: %+v", e)
	}
	if e := callErr(t, alice, "file.read", m("path", "notes/a.txt", "context", m("user_id", "carol-ann"))); e.Data.Kind != "forbidden" {
		t.Errorf("alice acting for carol-ann: %+v", e)
	}
	multi := h.dial(multiKey)
	if e := callErr(t, multi, "file.read", m("path", "notes/a.txt", "context", m("user_id", "carol-ann"))); e.Data.Kind != "forbidden" {
		t.Errorf("multi-agent acting for carol-ann: %+v", e)
	}
	// The owner can name her scope, as for configured people.
	got := rpcCall[map[string]any](t, owner, "file.read", m("path", "notes/a.txt", "context", m("user_id", "carol-ann")))
	if got["content"] != "carol's" {
		t.Errorf("owner reading carol-ann's file: %v", got)
	}
	info := rpcCall[sessionInfo](t, owner, "session.info", nil)
	if !strings.Contains(strings.Join(info.Scopes, ","), "carol-ann") {
		t.Errorf("scopes: %v", info.Scopes)
	}

	// Pause one agent: its calls are refused with a sentence, others go on.
	rpcCall[any](t, owner, "agent.pause", m("name", "carol-helper"))
	e := callErr(t, carol, "file.read", m("path", "notes/a.txt"))
	if e.Data.Kind != "denied" || !strings.Contains(e.Message, "paused this agent") {
		t.Errorf("paused agent: %+v", e)
	}
	rpcCall[any](t, alice, "file.read", m("path", "secret.txt"))
	rpcCall[any](t, owner, "agent.resume", m("name", "carol-helper"))
	rpcCall[any](t, carol, "file.read", m("path", "notes/a.txt"))

	// A config agent can be paused but not changed.
	rpcCall[any](t, owner, "agent.pause", m("name", "alice-agent"))
	if e := callErr(t, alice, "file.read", m("path", "secret.txt")); e.Data.Kind != "denied" {
		t.Errorf("paused config agent: %+v", e)
	}
	rpcCall[any](t, owner, "agent.resume", m("name", "alice-agent"))
	for _, method := range []string{"agent.remove", "agent.rotate_key"} {
		if e := callErr(t, owner, method, m("name", "alice-agent")); e.Data.Kind != "forbidden" || !strings.Contains(e.Message, "config.toml") {
			t.Errorf("%s of a config agent: %+v", method, e)
		}
	}

	// Network off for this agent: a command asking for network is refused.
	rpcCall[any](t, owner, "agent.update", m("name", "carol-helper", "network", "off"))
	if e := callErr(t, carol, "command.run", m("command", "true", "network", true)); e.Data.Kind != "denied" || !strings.Contains(e.Message, "network off") {
		t.Errorf("network off: %+v", e)
	}

	// The list shows both kinds, with last use.
	list := rpcCall[struct {
		Agents []agentInfo `json:"agents"`
	}](t, owner, "agent.list", nil)
	var sawConfig, sawCarol bool
	for _, a := range list.Agents {
		if a.Name == "alice-agent" && a.FromConfig && a.LastUsed != nil {
			sawConfig = true
		}
		if a.Name == "carol-helper" && !a.FromConfig && a.LastUsed != nil && a.Network == "off" {
			sawCarol = true
		}
	}
	if !sawConfig || !sawCarol {
		t.Errorf("agent.list: %+v", list.Agents)
	}

	// Rotating the key ends connections opened with the old one.
	rotated := rpcCall[addedAgent](t, owner, "agent.rotate_key", m("name", "carol-helper"))
	waitClosed(t, carol)
	if st := dialStatus(t, h, added.Key); st != http.StatusUnauthorized {
		t.Errorf("old key after rotation: status %d", st)
	}
	carol = h.dial(rotated.Key)
	rpcCall[any](t, carol, "file.read", m("path", "notes/a.txt"))

	// A person still worked for cannot be removed.
	if e := callErr(t, owner, "person.remove", m("id", "carol-ann")); e.Data.Kind != "conflict" || !strings.Contains(e.Message, "carol-helper") {
		t.Errorf("removing a person with an agent: %+v", e)
	}

	// Survives a restart.
	h.stop()
	h = startIn(t, dir, "")
	owner = h.dial(ownerToken)
	carol = h.dial(rotated.Key)
	rpcCall[any](t, carol, "file.read", m("path", "notes/a.txt"))
	if e := callErr(t, carol, "command.run", m("command", "true", "network", true)); e.Data.Kind != "denied" {
		t.Errorf("network off after restart: %+v", e)
	}

	// Removing the agent: its connection closes, its key gets 401 on /ws and /mcp.
	rpcCall[any](t, owner, "agent.remove", m("name", "carol-helper"))
	waitClosed(t, carol)
	if st := dialStatus(t, h, rotated.Key); st != http.StatusUnauthorized {
		t.Errorf("removed agent's dial: status %d", st)
	}
	req, _ := http.NewRequest("POST", h.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Authorization", "Bearer "+rotated.Key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("removed agent on /mcp: %d", resp.StatusCode)
	}

	// Now the person can go; the folder stays, and the answer says where.
	rm := rpcCall[map[string]any](t, owner, "person.remove", m("id", "carol-ann"))
	if rm["folder"] != filepath.Join(h.base, "carol-ann") || !strings.Contains(rm["message"].(string), "kept") {
		t.Errorf("person.remove: %v", rm)
	}
	if b, err := os.ReadFile(filepath.Join(h.base, "carol-ann", "notes", "a.txt")); err != nil || string(b) != "carol's" {
		t.Errorf("the folder of a removed person was touched: %q %v", b, err)
	}

	// Every change is in the audit log.
	ev := rpcCall[struct {
		Events []struct {
			Op     string `json:"op"`
			Target string `json:"target"`
		} `json:"events"`
	}](t, owner, "audit.query", m("limit", 200))
	ops := map[string]bool{}
	for _, e := range ev.Events {
		ops[e.Op] = true
	}
	for _, want := range []string{"person.add", "agent.add", "agent.pause", "agent.resume", "agent.update", "agent.rotate_key", "agent.remove", "person.remove"} {
		if !ops[want] {
			t.Errorf("no %s event in the audit log", want)
		}
	}
}

// TestConfigReload: a [[clients]] entry added to config.toml works
// without a restart, one taken out stops, and a file that does not
// validate keeps what runs and says why, as start-up would.
func TestConfigReload(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	owner := h.dial(ownerToken)
	alice := h.dial(aliceKey)
	newKey := "dave-key-0123456789abcdef0"
	text := strings.Replace(testConfig, `[[clients]]
name = "alice-agent"
key = "`+aliceKey+`"
user = "alice"
`, "", 1) + "\n[[users]]\nid = \"dave\"\n[[clients]]\nname = \"dave-agent\"\nkey = \"" + newKey + "\"\nuser = \"dave\"\n[exec]\ntimeout = \"5m\"\n"
	cfg, err := config.Parse(h.srv.cfg.Path, []byte(text), h.dir, h.base)
	if err != nil {
		t.Fatal(err)
	}
	msg := h.srv.ReloadConfig(context.Background(), cfg, nil)
	if !strings.Contains(msg, "exec") {
		t.Errorf("reload message: %q", msg)
	}
	waitClosed(t, alice)
	if st := dialStatus(t, h, aliceKey); st != http.StatusUnauthorized {
		t.Errorf("removed config agent: %d", st)
	}
	dave := h.dial(newKey)
	rpcCall[any](t, dave, "file.write", m("path", "x.txt", "content", "d"))
	if _, err := os.Stat(filepath.Join(h.base, "dave", "x.txt")); err != nil {
		t.Errorf("dave's file: %v", err)
	}
	st := rpcCall[configStatusResult](t, owner, "config.status", nil)
	if st.Problem != "" || len(st.RestartNeeded) != 1 || st.RestartNeeded[0] != "exec" {
		t.Errorf("status: %+v", st)
	}
	_, perr := config.Parse(h.srv.cfg.Path, []byte(text+"\n[[users]]\nid = \"bad/id\"\n"), h.dir, h.base)
	h.srv.ReloadConfig(context.Background(), nil, perr)
	st = rpcCall[configStatusResult](t, owner, "config.status", nil)
	if !strings.Contains(st.Problem, "not a safe folder name") || !strings.Contains(st.Problem, "config.toml:") {
		t.Errorf("problem: %+v", st)
	}
	rpcCall[any](t, dave, "file.read", m("path", "x.txt")) // still works
}

// TestAgentPauseWithdrawsItsQuestions: pausing one agent denies at once
// the questions it already has waiting for the owner (every surface sees
// them resolved by "paused"), while another agent's question stays; the
// pause is audited with how many were withdrawn.
func TestAgentPauseWithdrawsItsQuestions(t *testing.T) {
	t.Parallel()
	h, outside := startWithOutsideFile(t)
	own := h.owner(t)
	alice, bob := h.dial(aliceKey), h.dial(bobKey)

	aliceDone := async(alice, "file.read", m("path", outside))
	qa := own.requested()
	bobDone := async(bob, "file.read", m("path", outside))
	qb := own.requested()
	if qa.Client != "alice-agent" || qb.Client != "bob-agent" {
		t.Fatalf("questions from %s and %s", qa.Client, qb.Client)
	}

	rpcCall[any](t, own.c, "agent.pause", m("name", "alice-agent"))
	var res struct{ ID, Decision, By string }
	json.Unmarshal(own.next("approval.resolved"), &res)
	if res.ID != qa.ID || res.By != "paused" || res.Decision != "deny_once" {
		t.Errorf("resolved: %+v, want %s denied by paused", res, qa.ID)
	}
	select {
	case err := <-aliceDone:
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Data.Kind != "denied" {
			t.Errorf("alice's waiting read after her pause: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("alice's waiting read was not answered when she was paused")
	}
	pending := rpcCall[struct{ Pending []wire.Approval }](t, own.c, "approval.list", nil)
	if len(pending.Pending) != 1 || pending.Pending[0].ID != qb.ID {
		t.Fatalf("pending after pausing alice-agent: %+v", pending.Pending)
	}

	// Resumed, she may ask again; bob's question is still the owner's to answer.
	rpcCall[any](t, own.c, "agent.resume", m("name", "alice-agent"))
	aliceDone = async(alice, "file.read", m("path", outside))
	qa2 := own.requested()
	rpcCall[any](t, own.c, "approval.respond", m("id", qa2.ID, "decision", "allow_once"))
	if err := <-aliceDone; err != nil {
		t.Errorf("alice after resume: %v", err)
	}
	rpcCall[any](t, own.c, "approval.respond", m("id", qb.ID, "decision", "deny_once"))
	if err := <-bobDone; err == nil {
		t.Error("bob's read was allowed after deny_once")
	}

	ev := rpcCall[struct{ Events []wire.Event }](t, own.c, "audit.query", m("op", "agent.pause"))
	if len(ev.Events) != 1 || !strings.Contains(ev.Events[0].Detail, "1 waiting question(s) withdrawn") {
		t.Errorf("agent.pause events: %+v", ev.Events)
	}
	reads := rpcCall[struct{ Events []wire.Event }](t, own.c, "audit.query", m("op", "file.read", "client", "alice-agent"))
	if n := len(reads.Events); n != 2 || reads.Events[1].DecidedBy != audit.ByPaused {
		t.Errorf("alice's reads: %+v", reads.Events)
	}
}
