package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The owner's "Restore this folder" (undo.apply with folder) of a command
// that changed 20 files in a/ and 20 in b/, killed after its 10th change
// (undo.change:10): after the restart a/ is all as the command left it
// (the undo rolled back, its event interrupted) or all as before it (the
// undo done, its event allowed), b/ is as the command left it either
// way, no event is pending, and the folder's undo then works.
func TestCrashDuringFolderUndo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the daemon")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	home, r, agent, scope := undoRig(ctx, t, "a/f00.txt", "old a 0\n")
	for _, d := range []string{"a", "b"} {
		for i := range 20 {
			if d == "a" && i == 0 {
				continue
			}
			p := filepath.Join(scope, d, fmt.Sprintf("f%02d.txt", i))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, p, fmt.Sprintf("old %s %d\n", d, i))
		}
	}
	orig := snapshot(t, scope)
	if _, err := agent.Call(ctx, "command.run", map[string]any{"command": "for f in a/f*.txt b/f*.txt; do echo more >> $f; done"}); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, scope)
	part := func(m map[string]string, prefix string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if strings.HasPrefix(k, prefix) {
				out[k] = v
			}
		}
		return out
	}
	db := filepath.Join(home, "corral.db")
	cmdID, _, _ := lastEventInFile(t, db, "command.run")
	agent.Close()
	r.kill()

	r = startServeIn(t, home, "CORRAL_KILL_AT=undo.change:10")
	owner := dialKey(ctx, t, r, r.ownerKey)
	if _, err := owner.Call(ctx, "undo.apply", map[string]any{"event_id": cmdID, "folder": "a"}); err == nil {
		t.Fatal("the folder's undo was answered; the daemon should have died half-way")
	}
	r.cmd.Wait()

	r = startServeIn(t, home)
	integrity(t, db)
	got := snapshot(t, scope)
	undoID, detail, decision := lastEventInFile(t, db, "undo.apply")
	t.Logf("after the kill: undo event %d %s %q", undoID, decision, detail)
	if !maps.Equal(part(got, "b/"), part(after, "b/")) {
		t.Errorf("b/ changed by an undo of a/ only")
	}
	switch ga := part(got, "a/"); {
	case maps.Equal(ga, part(after, "a/")):
		if undoID != 0 && decision == "allow" {
			t.Errorf("a/ is as the command left it, but the undo's event %d is allowed (%q)", undoID, detail)
		}
	case maps.Equal(ga, part(orig, "a/")):
		if undoID == 0 || decision != "allow" {
			t.Errorf("a/ is undone, but the undo has no allowed event (%d %q %s)", undoID, detail, decision)
		}
	default:
		old := 0
		for k, v := range ga {
			if v == orig[k] {
				old++
			}
		}
		t.Errorf("the folder's undo is half-done: %d of a/'s %d entries as before the command; its event %d %q %s", old, len(ga), undoID, detail, decision)
	}
	if strings.HasSuffix(detail, "pending") || strings.HasSuffix(detail, "running") {
		t.Errorf("the undo's event is unfinished: %q", detail)
	}
	if left := temps(t, home); len(left) > 0 {
		t.Errorf("temporary files left: %d", len(left))
	}
	owner = dialKey(ctx, t, r, r.ownerKey)
	if _, err := owner.Call(ctx, "undo.apply", map[string]any{"event_id": cmdID, "folder": "a"}); err != nil {
		t.Errorf("the folder's undo after the restart: %v", err)
	}
	got = snapshot(t, scope)
	sameSnapshot(t, part(orig, "a/"), part(got, "a/"))
	sameSnapshot(t, part(after, "b/"), part(got, "b/"))
}
