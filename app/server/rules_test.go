package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/app/answers"
	"corral/app/client"
	"corral/app/wire"
	"corral/core/audit"
)

type ruleOut struct {
	Rule   wire.Rule
	Covers string
}

// runLong makes a command.run call that may take a while under a loaded
// machine, and returns its result or error.
func runLong(c *client.Client, params any) (wire.RunResult, error) {
	var r wire.RunResult
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := c.CallInto(ctx, "command.run", params, &r)
	return r, err
}

// newestOf is the newest audit event of op.
func newestOf(t *testing.T, owner *client.Client, op string) wire.Event {
	t.Helper()
	evs := rpcCall[struct{ Events []wire.Event }](t, owner, "audit.query", m("op", op, "limit", 1))
	if len(evs.Events) == 0 {
		t.Fatalf("no %s event", op)
	}
	return evs.Events[0]
}

// TestCommandRuleSparesTheQuestion: with the agent at Ask me (every
// command asked), a hand-written rule "git status" lets `git status` run
// without a question, while `git push` and a shell line that merely
// starts with the same words are still asked. (Checked once against a
// matcher that compares strings, strings.HasPrefix(line, "git status"):
// "git status; touch x" then ran without a question and this test failed.)
func TestCommandRuleSparesTheQuestion(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	own := h.owner(t)
	alice := h.dial(aliceKey)
	ag := rpcCall[struct{ Agent agentInfo }](t, own.c, "agent.set_level", m("name", "alice-agent", "level", "ask"))
	if ag.Agent.Level != "ask" || ag.Agent.LevelLabel != "Ask me" || !ag.Agent.AskCommands {
		t.Fatalf("level: %+v", ag.Agent)
	}
	pv := rpcCall[ruleOut](t, own.c, "rule.preview", m("client", "alice-agent", "access", "execute", "target", "git  status", "decision", "allow"))
	if pv.Rule.Target != "git status" || pv.Rule.User != "alice" || !strings.Contains(pv.Covers, `starts with the words "git status"`) {
		t.Fatalf("preview: %+v", pv)
	}
	if got := rpcCall[rulesResult](t, own.c, "rule.list", nil); len(got.Rules) != 0 {
		t.Fatalf("a preview saved a rule: %+v", got.Rules)
	}
	added := rpcCall[ruleOut](t, own.c, "rule.add", m("client", "alice-agent", "access", "execute", "target", "git status", "decision", "allow", "note", "harmless"))
	if added.Rule.ID == "" || added.Rule.Note != "harmless" || added.Covers != pv.Covers {
		t.Fatalf("add: %+v", added)
	}

	r, err := runLong(alice, m("command", "git status --short"))
	if err != nil || !strings.Contains(r.Stderr, "not a git repository") {
		t.Fatalf("git status: %+v %v", r, err)
	}
	ev := newestOf(t, own.c, "command.run")
	if ev.DecidedBy != audit.ByRule || ev.Rule != added.Rule.ID || ev.Decision != audit.Allow {
		t.Errorf("git status event: %+v", ev)
	}

	for _, line := range []string{"git push", `sh -c "git status; rm -rf ~"`, "git status; touch x"} {
		done := async(alice, "command.run", m("command", line))
		a := own.requested()
		if a.Access != "execute" || !strings.HasPrefix(a.Target, line) {
			t.Fatalf("%s: question %+v", line, a)
		}
		rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once"))
		if err := <-done; err == nil || !strings.Contains(err.Error(), "did not allow") {
			t.Errorf("%s: %v", line, err)
		}
	}
	if _, err := os.Stat(filepath.Join(h.base, "alice", "x")); err == nil {
		t.Error("the chained command ran")
	}

	// A deny rule refuses before anything runs, even at Trusted.
	rpcCall[any](t, own.c, "agent.set_level", m("name", "alice-agent", "level", "trusted"))
	rpcCall[ruleOut](t, own.c, "rule.add", m("client", "alice-agent", "access", "execute", "target", "rm", "decision", "deny"))
	if _, err := runLong(alice, m("command", "rm -f nothing")); err == nil || !strings.Contains(err.Error(), "rules deny this command") {
		t.Errorf("deny rule: %v", err)
	}
}

// TestReadOnlyAgent: a Read-only agent reads, and its writes, deletes and
// commands are refused with a sentence naming the level, recorded as
// decided by the level; the level shows in agent.list and the agent's
// own session.info, and holds for an agent written in config.toml across
// a restart.
func TestReadOnlyAgent(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	own := h.dial(ownerToken)
	alice := h.dial(aliceKey)
	rpcCall[any](t, alice, "file.write", m("path", "notes.txt", "content", "before"))
	rpcCall[any](t, own, "agent.set_level", m("name", "alice-agent", "level", "read_only"))
	for _, c := range []struct {
		method string
		params map[string]any
	}{
		{"file.write", m("path", "notes.txt", "content", "after")},
		{"file.edit", m("path", "notes.txt", "old_text", "before", "new_text", "x")},
		{"file.delete", m("path", "notes.txt")},
		{"folder.create", m("path", "new")},
		{"file.move", m("from", "notes.txt", "to", "moved.txt")},
		{"command.run", m("command", "true")},
	} {
		ce := callErr(t, alice, c.method, c.params)
		if ce.Data.Kind != "denied" || !strings.Contains(ce.Message, "Corral refused: this agent is Read-only") || !strings.Contains(ce.Message, "Agents page") {
			t.Errorf("%s: %+v", c.method, ce)
		}
		if ev := newestOf(t, own, c.method); ev.DecidedBy != audit.ByLevel || ev.Decision != audit.Deny {
			t.Errorf("%s event: %+v", c.method, ev)
		}
	}
	if got := rpcCall[struct{ Content string }](t, alice, "file.read", m("path", "notes.txt")); !strings.Contains(got.Content, "before") {
		t.Errorf("read: %+v", got)
	}
	info := rpcCall[sessionInfo](t, alice, "session.info", nil)
	if info.Level == nil || info.Level.Level != "read_only" || info.Level.Label != "Read-only" {
		t.Errorf("session.info level: %+v", info.Level)
	}
	if oi := rpcCall[sessionInfo](t, own, "session.info", nil); len(oi.Levels) != 3 || oi.Levels[0].Label != "Ask me" {
		t.Errorf("owner's levels: %+v", oi.Levels)
	}
	list := rpcCall[agentsResult](t, own, "agent.list", nil)
	for _, a := range list.Agents {
		if a.Name == "alice-agent" && (a.Level != "read_only" || a.LevelLabel != "Read-only") {
			t.Errorf("agent.list: %+v", a)
		}
	}
	if ev := newestOf(t, own, "agent.set_level"); ev.Target != "alice-agent" || !strings.Contains(ev.Detail, "Read-only") {
		t.Errorf("audited: %+v", ev)
	}
	if ce := callErr(t, own, "agent.set_level", m("name", "alice-agent", "level", "root")); ce.Data.Kind != "invalid_params" {
		t.Errorf("unknown level: %+v", ce)
	}
	if ce := callErr(t, alice, "agent.set_level", m("name", "alice-agent", "level", "trusted")); ce.Data.Kind != "forbidden" {
		t.Errorf("an agent set its own level: %+v", ce)
	}

	// The level of a config.toml agent is kept in the database.
	h.stop()
	h = startWith(t, h.restartSetup())
	alice = h.dial(aliceKey)
	if ce := callErr(t, alice, "file.write", m("path", "notes.txt", "content", "after")); !strings.Contains(ce.Message, "Read-only") {
		t.Errorf("after a restart: %+v", ce)
	}
	rpcCall[any](t, h.dial(ownerToken), "agent.set_level", m("name", "alice-agent", "level", "trusted"))
	rpcCall[any](t, alice, "file.write", m("path", "notes.txt", "content", "after"))
}

// TestRulesFileExportImport: export and import round-trip through the
// server; an import holding a folder-wide rule on the owner's home is
// refused whole, naming the entry and its line; bad params are refused.
func TestRulesFileExportImport(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	own := h.dial(ownerToken)
	outside := t.TempDir()
	for _, p := range []map[string]any{
		m("client", "alice-agent", "access", "network", "target", "*.Example.com", "decision", "allow"),
		m("client", "*", "access", "read", "target", outside, "whole_folder", true, "decision", "allow", "expires_in", "7d", "note", "shared stuff"),
		m("client", "bob-agent", "access", "execute", "target", "npm test", "decision", "allow"),
	} {
		rpcCall[ruleOut](t, own, "rule.add", p)
	}
	ex := rpcCall[answers.Exported](t, own, "rule.export", nil)
	if ex.Count != 3 || !strings.Contains(ex.File, `"corral_rules": 1`) || !strings.HasSuffix(ex.Name, ".json") {
		t.Fatalf("export: %+v", ex)
	}
	h2 := start(t, "")
	own2 := h2.dial(ownerToken)
	im := rpcCall[answers.Imported](t, own2, "rule.import", m("file", ex.File))
	if im.Added != 3 || im.Skipped != 0 {
		t.Fatalf("import: %+v", im)
	}
	if again := rpcCall[answers.Imported](t, own2, "rule.import", m("file", ex.File)); again.Added != 0 || again.Skipped != 3 {
		t.Errorf("import again: %+v", again)
	}
	if ev := newestOf(t, own2, "rule.import"); !strings.Contains(ev.Detail, "0 rules added, 3 already") {
		t.Errorf("audited: %+v", ev)
	}

	home := `{"corral_rules": 1, "rules": [
  {"agent": "alice-agent", "folder": "alice", "access": "network", "target": "pypi.org", "decision": "allow"},
  {"agent": "*", "folder": "*", "access": "write",
   "target": "` + h2.dir + `", "whole_folder": true, "decision": "allow"}
]}`
	ce := callErr(t, own2, "rule.import", m("file", home))
	if ce.Data.Kind != "invalid_params" || !strings.Contains(ce.Message, "Entry 2 (line 3)") || !strings.Contains(ce.Message, "home folder") {
		t.Errorf("home import: %+v", ce)
	}
	if got := rpcCall[rulesResult](t, own2, "rule.list", nil); len(got.Rules) != 3 {
		t.Errorf("a refused import added rules: %d", len(got.Rules))
	}
	for _, p := range []map[string]any{
		m("client", "nobody", "access", "read", "target", outside, "decision", "allow"),
		m("client", "*", "access", "read", "target", "/", "whole_folder", true, "decision", "allow"),
		m("client", "*", "access", "read", "target", h2.dir, "whole_folder", true, "decision", "allow"),
		m("client", "*", "access", "read", "target", filepath.Join(h2.dir, ".ssh"), "whole_folder", true, "decision", "allow"),
		m("client", "*", "access", "read", "target", h2.files.DB, "decision", "allow"),
		m("client", "*", "access", "execute", "target", "git status", "decision", "allow"),
		m("client", "alice-agent", "access", "execute", "target", "sh -c", "decision", "allow"),
		m("client", "alice-agent", "user", "zed", "access", "network", "target", "a.com", "decision", "allow"),
	} {
		if ce := callErr(t, own2, "rule.add", p); ce.Data.Kind != "invalid_params" {
			t.Errorf("%v: %+v", p, ce)
		}
	}
	if ce := callErr(t, h2.dial(aliceKey), "rule.add", m("client", "*", "access", "read", "target", outside, "decision", "allow")); ce.Data.Kind != "forbidden" {
		t.Errorf("an agent wrote a rule: %+v", ce)
	}
	// Edit: same id, new target, audited.
	rules := rpcCall[rulesResult](t, own2, "rule.list", nil)
	var id string
	for _, r := range rules.Rules {
		if r.Access == "execute" {
			id = r.ID
		}
	}
	up := rpcCall[ruleOut](t, own2, "rule.update", m("id", id, "client", "bob-agent", "access", "execute", "target", "npm run lint", "decision", "allow"))
	if up.Rule.ID != id || up.Rule.Target != "npm run lint" {
		t.Errorf("update: %+v", up)
	}
	if ev := newestOf(t, own2, "rule.update"); !strings.Contains(ev.Detail, "npm run lint") {
		t.Errorf("update audited: %+v", ev)
	}
}

// TestHandWrittenNetworkRule: a network rule the owner writes for one
// agent lets that agent's next command reach the domain without a
// question (through the test host), and no other agent's.
func TestHandWrittenNetworkRule(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t, "")
	added := rpcCall[ruleOut](t, w.own.c, "rule.add", m("client", "alice-agent", "access", "network", "target", "handmade.test", "decision", "allow", "note", "docs"))
	if !strings.Contains(added.Covers, "connect to handmade.test") {
		t.Errorf("covers: %q", added.Covers)
	}
	r := <-w.run(m("command", `curl -sS http://handmade.test/hand`, "allowed_domains", []string{"handmade.test"}))
	wantOut(t, r, "hello from the test host: GET /hand host=handmade.test")
	if p := rpcCall[struct{ Pending []any }](t, w.own.c, "approval.list", nil); len(p.Pending) != 0 {
		t.Errorf("the owner was asked: %v", p.Pending)
	}
	ev := newestOf(t, w.own.c, "network.connect")
	if ev.DecidedBy != audit.ByRule || ev.Rule != added.Rule.ID || ev.Client != "alice-agent" {
		t.Errorf("connection event: %+v", ev)
	}
	// Another agent's command is still asked.
	bob := w.h.dial(bobKey)
	done := make(chan error, 1)
	go func() {
		_, err := runLong(bob, m("command", `curl -s http://handmade.test/bob; echo " exit=$?"`, "allowed_domains", []string{"handmade.test"}))
		done <- err
	}()
	a := w.own.requested()
	if a.Client != "bob-agent" || a.Domain != "handmade.test" {
		t.Fatalf("question %+v", a)
	}
	rpcCall[any](t, w.own.c, "approval.respond", m("id", a.ID, "decision", "deny_once"))
	if err := <-done; err != nil {
		t.Errorf("bob's run: %v", err)
	}
}
