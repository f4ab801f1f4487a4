package server

import (
	"strings"
	"testing"

	"corral/app/wire"
)

// TestCorralsOwnFilesAreOutOfReach: Corral's own files — its secret, its
// database, the versions it keeps — are refused to agents as Corral's,
// never put to the owner as a question, and commands do not see them. The
// harness starts Corral through Build, as the daemon does, so this checks
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
