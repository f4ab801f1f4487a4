package applypatch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/core/errs"
	"corral/core/sandbox"
	"corral/core/sandbox/sandboxtest"
	"corral/core/testkit/auditmem"
	"corral/core/versions"
)

// The intent is recorded before the patch is written: when it cannot be,
// nothing changes (as for the sandbox's own changes, journal_test.go
// there).
func TestPatchIntentBeforeChange(t *testing.T) {
	t.Parallel()
	sink := &auditmem.Journal{}
	w := newWorldWith(t, func(w *sandboxtest.World, cfg *sandbox.Config) {
		cfg.Audit = sink
		cfg.Versions = versions.Config{Dir: filepath.Join(w.Private, "versions")}
	})
	ctx := context.Background()
	if _, err := w.Box.Write(ctx, alice, sandbox.WriteArgs{Path: "a.txt", Content: "old\n"}); err != nil {
		t.Fatal(err)
	}
	sink.Fail(errs.New(errs.IO, "", "disk full"))
	_, err := w.svc.ApplyPatch(ctx, alice, PatchArgs{Patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+patched\n*** End Patch\n"})
	if err == nil {
		t.Error("the patch answered success with the audit log failing")
	}
	if b, err := os.ReadFile(filepath.Join(w.Dir, "base", "alice", "a.txt")); err != nil || string(b) != "old\n" {
		t.Errorf("after a refused patch, a.txt holds %q (%v)", b, err)
	}
}

// One agent's full share of the version store refuses that agent's
// patches with the share's sentence, and not another agent's, whose old
// content is kept (the sandbox's TestFullShareRefusesOnlyItsAgent for the
// other changes).
func TestPatchFullShareRefusesOnlyItsAgent(t *testing.T) {
	w := newWorldWith(t, func(w *sandboxtest.World, cfg *sandbox.Config) {
		cfg.Versions = versions.Config{Dir: filepath.Join(w.Private, "versions"), MaxBytes: 1 << 20} // shares of 256 KiB
	})
	ctx := context.Background()
	bob := sandbox.Caller{Client: "bob-agent", User: "bob"}
	big := func(user, name, line string, size int) string {
		t.Helper()
		body := strings.Repeat(line+"\n", size/(len(line)+1))
		dir := filepath.Join(w.Dir, "base", user)
		os.MkdirAll(dir, 0o700)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return body
	}
	// Fill alice's share: each patch keeps ~100 KiB.
	refusedAt := -1
	for i := range 6 {
		name := "churn" + string(rune('a'+i))
		big("alice", name, "alice "+name, 100<<10)
		_, err := w.svc.ApplyPatch(ctx, alice, PatchArgs{Patch: "*** Begin Patch\n*** Delete File: " + name + "\n*** End Patch\n"})
		if err != nil {
			if e := errs.As(err); !errors.Is(err, versions.ErrShareFull) || e.Kind != errs.Unavailable || !strings.Contains(e.Msg, "Your share of Corral's version store is full") {
				t.Fatalf("patch over alice's share: %v, want the share's refusal", err)
			}
			if _, serr := os.Stat(filepath.Join(w.Dir, "base", "alice", name)); serr != nil {
				t.Errorf("the refused patch deleted %s: %v", name, serr)
			}
			refusedAt = i
			break
		}
	}
	if refusedAt != 2 {
		t.Errorf("alice's patches were first refused at %d, want the third", refusedAt)
	}
	body := big("bob", "p", "bob p", 40<<10)
	if _, err := w.svc.ApplyPatch(ctx, bob, PatchArgs{Patch: "*** Begin Patch\n*** Delete File: p\n*** End Patch\n"}); err != nil {
		t.Fatalf("bob's patch beside alice's full share: %v", err)
	}
	if !w.Box.Versions().Has(versions.Sum([]byte(body))) {
		t.Error("bob's version is not kept")
	}
}
