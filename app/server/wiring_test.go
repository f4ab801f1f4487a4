package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/app/wire"
)

// TestCorralsOwnFilesAreOutOfReach: Corral's own files — its secret, its
// database, the versions it keeps — are refused to agents as Corral's,
// never put to the owner as a question, and commands do not see them. The
// harness starts Corral through wiring.Build, as the daemon does, so this checks
// the wiring that runs.
func TestCorralsOwnFilesAreOutOfReach(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	own := []string{h.files.Secret, h.files.DB, h.files.VersionsDir()}
	for _, p := range own {
		ce := callErr(t, alice, "file.stat", m("path", p))
		if ce.Data.Kind != "denied" || !strings.Contains(ce.Message, "belongs to Corral") {
			t.Errorf("file.stat %s: %s %q; want it refused as Corral's own", p, ce.Data.Kind, ce.Message)
		}
	}
	script := ""
	for _, p := range own {
		script += "test -e '" + p + "' && echo 'seen " + p + "'; "
	}
	r := rpcCall[wire.RunResult](t, alice, "command.run", m("command", script+"true"))
	if r.ExitCode != 0 || r.Stdout != "" {
		t.Errorf("a command sees Corral's own files: %+v", r)
	}
}

// TestNoAnswerWidensToTheHome: a question about a file right in the
// owner's home offers no answer for its whole folder — that would be the
// home itself (wiring.Build guards it, with the sandbox base and Corral's own
// folders); one a folder deeper does.
func TestNoAnswerWidensToTheHome(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	deeper := filepath.Join(h.dir, "Documents")
	os.MkdirAll(deeper, 0o755)
	for _, f := range []string{filepath.Join(h.dir, "notes.txt"), filepath.Join(deeper, "tax.txt")} {
		os.WriteFile(f, []byte("mine"), 0o644)
	}
	alice := h.dial(aliceKey)
	own := h.owner(t)
	for file, folder := range map[string]string{filepath.Join(h.dir, "notes.txt"): "", filepath.Join(deeper, "tax.txt"): deeper} {
		done := async(alice, "file.read", m("path", file))
		a := own.requested()
		if a.Folder != folder {
			t.Errorf("reading %s: a widened answer would cover %q, want %q", file, a.Folder, folder)
		}
		rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once"))
		<-done
	}
}
