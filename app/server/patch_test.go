package server

import (
	"strings"
	"testing"

	"corral/app/wire"
)

// file.apply_patch end to end: a real server, a real WebSocket client, a
// real SQLite audit log.
func TestApplyPatchOverWebSocket(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	c := h.dial(aliceKey)
	rpcCall[any](t, c, "file.write", m("path", "src/a.go", "content", "package a\n\nconst X = 1\n"))
	rpcCall[any](t, c, "file.write", m("path", "old.txt", "content", "old\n"))
	rpcCall[any](t, c, "file.write", m("path", "junk.txt", "content", "junk\n"))

	unified := "diff --git a/src/a.go b/src/a.go\n--- a/src/a.go\n+++ b/src/a.go\n@@ -1,3 +1,3 @@\n package a\n \n-const X = 1\n+const X = 2\n" +
		"diff --git a/old.txt b/new.txt\nrename from old.txt\nrename to new.txt\n"
	res := rpcCall[wire.PatchResult](t, c, "file.apply_patch", m("patch", unified))
	if len(res.Files) != 2 || res.Files[0].Action != "modified" || res.Files[1].Action != "moved" || res.Files[1].From != "old.txt" || res.Files[1].Path != "new.txt" {
		t.Errorf("unified result: %+v", res)
	}
	read := rpcCall[struct{ Content string }](t, c, "file.read", m("path", "src/a.go"))
	if read.Content != "package a\n\nconst X = 2\n" {
		t.Errorf("src/a.go: %q", read.Content)
	}

	codex := "*** Begin Patch\n*** Add File: output/notes.md\n+# Notes\n*** Delete File: junk.txt\n*** Update File: new.txt\n-old\n+new\n*** End Patch\n"
	res = rpcCall[wire.PatchResult](t, c, "file.apply_patch", m("patch", codex, "dry_run", true))
	if !res.DryRun || len(res.Files) != 3 {
		t.Errorf("dry run: %+v", res)
	}
	if ce := callErr(t, c, "file.read", m("path", "output/notes.md")); ce.Data.Kind != "not_found" {
		t.Errorf("a dry run created a file: %+v", ce)
	}
	rpcCall[wire.PatchResult](t, c, "file.apply_patch", m("patch", codex))
	read = rpcCall[struct{ Content string }](t, c, "file.read", m("path", "new.txt"))
	if read.Content != "new\n" {
		t.Errorf("new.txt: %q", read.Content)
	}

	// One bad hunk: a conflict naming the file and the line; nothing written.
	bad := "--- a/src/a.go\n+++ b/src/a.go\n@@ -3 +3 @@\n-const X = 2\n+const X = 3\n--- a/new.txt\n+++ b/new.txt\n@@ -1 +1 @@\n-newer\n+newest\n"
	ce := callErr(t, c, "file.apply_patch", m("patch", bad))
	if ce.Data.Kind != "conflict" || ce.Data.Path != "new.txt" || !strings.Contains(ce.Message, `line 1 should be "newer" but is "new"`) {
		t.Errorf("conflict: %+v", ce)
	}
	read = rpcCall[struct{ Content string }](t, c, "file.read", m("path", "src/a.go"))
	if read.Content != "package a\n\nconst X = 2\n" {
		t.Errorf("a failed patch changed src/a.go: %q", read.Content)
	}

	// Escapes, and the required parameter.
	ce = callErr(t, c, "file.apply_patch", m("patch", "*** Begin Patch\n*** Add File: ../bob/x\n+x\n*** End Patch\n"))
	if ce.Data.Kind != "denied" {
		t.Errorf("escape: %+v", ce)
	}
	if ce = callErr(t, c, "file.apply_patch", m()); ce.Code != -32602 || !strings.Contains(ce.Message, "patch") {
		t.Errorf("missing patch: %+v", ce)
	}

	owner := h.dial(ownerToken)
	events := rpcCall[struct {
		Events []struct {
			Target, Detail, Decision string
		}
	}](t, owner, "audit.query", m("op", "file.apply_patch"))
	if len(events.Events) != 5 {
		t.Fatalf("%d file.apply_patch events, want 5 (the missing parameter never reaches the sandbox): %+v", len(events.Events), events.Events)
	}
	if e := events.Events[4]; e.Target != "src/a.go, old.txt, new.txt" || e.Decision != "allow" || !strings.Contains(e.Detail, "moved old.txt to new.txt") {
		t.Errorf("first event: %+v", e)
	}
	if e := events.Events[0]; e.Decision != "deny" || !strings.Contains(e.Target, "../bob/x") {
		t.Errorf("escape event: %+v", e)
	}
}
