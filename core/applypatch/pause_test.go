package applypatch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/sandbox"
)

// TestPatchBegunBeforeThePause: a patch whose Caller was taken before the
// owner paused its agent (a patch waits for its search turns behind the
// agent's other patches and greps) changes nothing: it is refused before
// its change, recorded as the pause's. On the old code it was applied.
func TestPatchBegunBeforeThePause(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := w.Box.Write(ctx, alice, sandbox.WriteArgs{Path: "a.txt", Content: "one\n"}); err != nil {
		t.Fatal(err)
	}
	w.Pol.SetClientPaused(alice.Client, true)
	_, err := w.svc.ApplyPatch(ctx, alice, PatchArgs{Patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n"})
	if errs.KindOf(err) != errs.Denied || !strings.Contains(err.Error(), "paused this agent") {
		t.Errorf("patch: %v; want denied (paused)", err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir, "base", "alice", "a.txt")); string(b) != "one\n" {
		t.Errorf("the file holds %q", b)
	}
	evs := w.Sink.Events()
	if last := evs[len(evs)-1]; last.Op != "file.apply_patch" || last.Decision != audit.Deny || last.DecidedBy != audit.ByPaused {
		t.Errorf("audited as %+v; want file.apply_patch denied by paused", last)
	}
}
