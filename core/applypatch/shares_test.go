package applypatch

import (
	"context"
	"strings"
	"testing"

	"corral/core/testkit/stacks"
)

// TestPatchSearchFairShare: hunk searches run in the daemon's own process,
// on its few cores. The red team's agent sent 32 pathological patches at
// once (a 30,000-line hunk against a 60,000-line file, each bounded and
// cancellable but costly): another agent's 4 KiB file.read went from
// under 1 ms to p50 490 ms, p95 1.6 s (max 3.1 s), and the owner's
// session.info took up to 0.94 s. One agent's searches run one at a time
// (the others wait, cancellable), so that agent gets one core at most.
func TestPatchSearchFairShare(t *testing.T) {
	w := newWorld(t)
	content, text := pathologicalPatch()
	w.layout(t, map[string]string{"a.go": content})
	most := stacks.MostAtOnce(6, "corral/core/patch.(*File).Apply(", func() {
		_, err := w.svc.ApplyPatch(context.Background(), alice, PatchArgs{Patch: text})
		if err == nil || !strings.Contains(err.Error(), "does not match") {
			t.Errorf("the pathological patch answered %v", err)
		}
	})
	if most > 1 {
		t.Errorf("%d of one agent's hunk searches ran at once", most)
	}
}

// pathologicalPatch is a 60,000-line file and a Codex patch whose
// 30,000-line hunk matches everywhere but in its last line.
func pathologicalPatch() (content, text string) {
	content = strings.Repeat("\tx := 1\n", 60000)
	var p strings.Builder
	p.WriteString("*** Begin Patch\n*** Update File: a.go\n@@\n")
	for range 29999 {
		p.WriteString(" \tx := 1\n")
	}
	p.WriteString("-\tnowhere()\n+\tgone()\n*** End Patch\n")
	return content, p.String()
}
