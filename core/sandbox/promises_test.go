package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/policy"
	"corral/core/words"
)

// The promises the dashboard's guide and banners make (core/words), held
// against what the sandbox does.

// words.Secrets: a file that holds secrets is asked about — never
// answered alone — with the warning, Deny as the default answer and no
// folder-wide answer; the owner may still allow it.
func TestPromiseSecretsAreAskedWithAWarning(t *testing.T) {
	w := newWorld(t)
	key := filepath.Join(w.dir, ".ssh", "id_rsa")
	os.MkdirAll(filepath.Dir(key), 0o700)
	os.WriteFile(key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----"), 0o600)
	ans := &answerer{p: w.pol, d: policy.AllowOnce}
	defer w.pol.Subscribe(ans)()
	res, err := w.box.Read(context.Background(), alice, ReadArgs{Path: key})
	if err != nil {
		t.Fatalf("the owner allowed the key and the read failed: %v", err)
	}
	if !strings.Contains(res.Content, "PRIVATE KEY") {
		t.Errorf("read %q", res.Content)
	}
	if len(ans.asked) != 1 {
		t.Fatalf("asked %d times, want once", len(ans.asked))
	}
	a := ans.asked[0]
	if a.Sensitive == "" || a.Default() != policy.DenyOnce || a.Folder != "" {
		t.Errorf("question %+v: want a warning, Deny first and no folder-wide answer", a)
	}
	if !strings.Contains(words.Secrets, "Careful: secrets") || !strings.HasPrefix(words.Careful(a.Sensitive), "Careful: secrets") {
		t.Errorf("the guide and the warning disagree: %q / %q", words.Secrets, words.Careful(a.Sensitive))
	}
	if !slices.Contains(a.Decisions(), policy.AllowOnce) {
		t.Error("the guide says the owner may allow it; the question does not offer Allow once")
	}
}

// words.PausedBanner: while agents are paused every call is refused at
// once — one in the agent's own folder too, which never asks — and the log
// names what was refused.
func TestPromisePausedRefusesEveryCallWithItsTarget(t *testing.T) {
	w := newWorld(t)
	if err := w.pol.SetPaused(context.Background(), true, "test"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(words.PausedBanner, "Every call an agent makes is refused at once") {
		t.Fatalf("the banner says %q", words.PausedBanner)
	}
	_, err := w.box.Write(context.Background(), alice, WriteArgs{Path: "notes/a.txt", Content: "x"})
	if errs.KindOf(err) != errs.Denied {
		t.Fatalf("a write in its own folder while paused: %v", err)
	}
	ev := w.sink.Last()
	if ev.Decision != audit.Deny || ev.DecidedBy != audit.ByPaused || ev.Target != "notes/a.txt" {
		t.Errorf("event %s by %s on %q, want deny by paused on notes/a.txt", ev.Decision, ev.DecidedBy, ev.Target)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "base", "alice", "notes", "a.txt")); err == nil {
		t.Error("the write happened while paused")
	}
}

// words.Network: a website a command names is asked about and may be
// allowed for good; a command that names none is asked every time.
func TestPromiseNetworkQuestions(t *testing.T) {
	w := newWorld(t)
	ans := &answerer{p: w.pol, d: policy.AllowOnce}
	defer w.pol.Subscribe(ans)()
	for _, r := range []policy.Request{
		{Client: "alice-agent", Scope: "alice", Access: policy.Network, Target: "pypi.org", Command: "pip download x", Run: "r1"},
		{Client: "alice-agent", Scope: "alice", Access: policy.Network, Target: "pip download x", OneTimeOnly: true},
	} {
		if _, err := w.pol.Check(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if len(ans.asked) != 2 {
		t.Fatalf("asked %d questions, want 2", len(ans.asked))
	}
	if !slices.Contains(ans.asked[0].Decisions(), policy.AllowAlways) || !strings.Contains(words.Network, "allow one for good") {
		t.Errorf("a named website: %v; the guide says %q", ans.asked[0].Decisions(), words.Network)
	}
	if slices.Contains(ans.asked[1].Decisions(), policy.AllowAlways) || !strings.Contains(words.Network, "every time for a command that names none") {
		t.Errorf("no website named: %v; the guide says %q", ans.asked[1].Decisions(), words.Network)
	}
}
