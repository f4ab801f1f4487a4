package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/app/client"
	"corral/app/wire"
	"corral/core/versions"
)

// textOf is about n bytes of text unique to name.
func textOf(name string, n int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s line %d\n", name, i)
	}
	return []byte(b.String())
}

// One agent filling the version store with churning writes is refused
// once its own share is full, with a sentence; another agent's edit and
// delete still work and keep their versions; a command of the first agent
// whose changes cannot be kept says so in its result. Before shares, the
// first agent took the whole store and the second's changes were refused
// for up to a week.
func TestVersionShares(t *testing.T) {
	t.Parallel()
	h := start(t, "[versions]\nmax_size_mb = 4\n") // shares of 1 MiB
	alice, bob, own := h.dial(aliceKey), h.dial(bobKey), h.dial(ownerToken)
	aliceDir, bobDir := filepath.Join(h.base, "alice"), filepath.Join(h.base, "bob")
	rpcCall[any](t, alice, "file.write", m("path", "hello.txt", "content", "hi"))
	rpcCall[any](t, bob, "file.write", m("path", "hello.txt", "content", "hi"))
	const big = 300 << 10
	put := func(dir, name string) []byte {
		t.Helper()
		b := textOf(dir+name, big)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return b
	}

	// Churn: each write replaces 300 KiB that is kept. The fourth would
	// take alice over her share of young versions.
	refused := -1
	for i := range 14 {
		name := fmt.Sprintf("churn%d.txt", i)
		before := put(aliceDir, name)
		ce := callErrOrNil(t, alice, "file.write", m("path", name, "content", "x"))
		if ce == nil {
			continue
		}
		if ce.Data.Kind != "unavailable" || !strings.Contains(ce.Message, "Your share of Corral's version store is full") || !strings.Contains(ce.Message, "max_size_mb") {
			t.Fatalf("write %d refused with %s %q, want unavailable and the share's sentence", i, ce.Data.Kind, ce.Message)
		}
		refused = i
		if b, _ := os.ReadFile(filepath.Join(aliceDir, name)); string(b) != string(before) {
			t.Errorf("a refused write changed %s", name)
		}
		break
	}
	if refused != 3 {
		t.Errorf("alice's churn was refused at write %d, want the 4th (3 × 300 KiB fit a 1 MiB share)", refused)
	}

	// The owner's undo of alice's first write is not blocked by her
	// share: it keeps what it replaces as the owner's own version.
	p := rpcCall[wire.Page](t, own, "audit.query", m("op", "file.write", "text", "churn0.txt", "decision", "allow", "limit", 1))
	if len(p.Events) != 1 {
		t.Fatalf("alice's first churn write: %+v", p.Events)
	}
	if r := rpcCall[wire.UndoResult](t, own, "undo.apply", m("event_id", p.Events[0].ID)); !r.Applied {
		t.Errorf("the owner's undo beside alice's full share: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(aliceDir, "churn0.txt")); len(b) != len(textOf(aliceDir+"churn0.txt", big)) {
		t.Errorf("churn0.txt after the owner's undo: %d bytes", len(b))
	}

	// Bob's edit and delete work, and their versions are kept.
	edited := put(bobDir, "notes.txt")
	deleted := put(bobDir, "old.txt")
	rpcCall[any](t, bob, "file.edit", m("path", "notes.txt", "old_text", "line 7\n", "new_text", "line seven\n"))
	rpcCall[any](t, bob, "file.delete", m("path", "old.txt"))
	if _, err := os.Stat(filepath.Join(bobDir, "old.txt")); !os.IsNotExist(err) {
		t.Errorf("bob's delete: %v", err)
	}
	for _, c := range [][]byte{edited, deleted} {
		if !h.box.Versions().Has(sum(c)) {
			t.Errorf("a version of bob's change is not kept")
		}
	}

	// A command of alice that would replace a 300 KiB file: its changes
	// are not applied, and the result says so.
	cmdFile := put(aliceDir, "cmd.txt")
	res := rpcCall[wire.RunResult](t, alice, "command.run", m("command", "echo y > cmd.txt; echo made > new.txt"))
	if res.NotApplied == nil || res.NotApplied.Kind != "unavailable" || res.NotApplied.Count != 1 ||
		len(res.NotApplied.Paths) != 1 || !strings.HasSuffix(res.NotApplied.Paths[0], "cmd.txt") ||
		!strings.Contains(res.NotApplied.Message, "Your share of Corral's version store is full") {
		t.Fatalf("command.run whose change cannot be kept: not_applied %+v, changes %+v", res.NotApplied, res.Changes)
	}
	if b, _ := os.ReadFile(filepath.Join(aliceDir, "cmd.txt")); string(b) != string(cmdFile) {
		t.Errorf("cmd.txt changed though its version could not be kept: %.40q", b)
	}
	// A command's changes are applied all or none (the journal): its new
	// file is not made either.
	if _, err := os.Lstat(filepath.Join(aliceDir, "new.txt")); !os.IsNotExist(err) || len(res.Changes) != 0 {
		t.Errorf("the command's new file was made though its other change was refused: %v, changes %+v", err, res.Changes)
	}
	if ev := lastEvent(t, own, "command.run"); !strings.Contains(ev.Detail, "1 changes could not be applied: ") || !strings.Contains(ev.Detail, "share") {
		t.Errorf("the command's event detail %q does not say why", ev.Detail)
	}

	// An agent may not forget versions; the owner may, and alice's share
	// has room again.
	if ce := callErr(t, alice, "versions.forget", m("client", "alice-agent")); ce.Data.Kind != "forbidden" {
		t.Errorf("an agent's versions.forget: %s %q", ce.Data.Kind, ce.Message)
	}
	before := rpcCall[wire.Usage](t, own, "versions.usage", nil)
	f := rpcCall[wire.ForgetResult](t, own, "versions.forget", m("client", "alice-agent"))
	if f.Versions != 3 || f.Bytes < 3*big {
		t.Errorf("versions.forget: %+v, want alice's 3 versions of 300 KiB", f)
	}
	if ev := lastEvent(t, own, "versions.forget"); ev.Target != "alice-agent" || ev.Decision != "allow" || !strings.Contains(ev.Detail, "3 versions") {
		t.Errorf("versions.forget's event: %+v", ev)
	}
	put(aliceDir, "again.txt")
	rpcCall[any](t, alice, "file.write", m("path", "again.txt", "content", "x"))

	// The owner sees each agent's part.
	u := rpcCall[wire.Usage](t, own, "versions.usage", nil)
	parts := map[string]wire.AgentUsage{}
	for _, a := range before.Agents {
		parts[a.Client] = a
	}
	if a, b := parts["alice-agent"], parts["bob-agent"]; u.AgentShare != 1<<20 || a.Bytes > 1<<20 || a.Blobs != 3 || a.Refused != 2 || b.Blobs != 2 || b.Refused != 0 {
		t.Errorf("versions.usage: share %d, alice %+v, bob %+v", u.AgentShare, a, b)
	}
}

func sum(b []byte) string { return versions.Sum(b) }

// callErrOrNil makes a call and returns its error, nil when it succeeds.
func callErrOrNil(t testing.TB, c *client.Client, method string, params any) *client.Error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Call(ctx, method, params)
	if err == nil {
		return nil
	}
	ce, ok := err.(*client.Error)
	if !ok {
		t.Fatalf("%s %v: %v (not a JSON-RPC error)", method, params, err)
	}
	return ce
}
