package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPTypeScriptClientLife: the official TypeScript SDK client, over
// stdio and HTTP, cancels a `sleep` after 1.5 s (no process is left and
// the event says cancelled), sends garbage lines without ending the
// session, keeps a command longer than its timeout alive with
// resetTimeoutOnProgress, and round-trips 4 MiB of "<".
func TestMCPTypeScriptClientLife(t *testing.T) {
	t.Parallel()
	node := nodeModules(t)
	script, err := os.ReadFile(filepath.Join("testdata", "mcp-node", "life.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// The cached install holds the packages; the script is copied in each
	// time so that an edit needs no new install.
	if err := os.WriteFile(filepath.Join(node, "life.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	r := startServe(t)
	owner := ownerClient(t, r)
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{filepath.Join(node, "life.mjs"), mode}
			if mode == "stdio" {
				args = append(args, "--", r.bin, "mcp")
			} else {
				args = append(args, r.url, r.agentKey)
			}
			cmd := exec.Command("node", args...)
			cmd.Dir = node
			cmd.Env = r.agentEnv()
			outb, err := cmd.Output()
			if err != nil {
				t.Fatalf("life.mjs: %v\n%s", err, outb)
			}
			var out struct {
				Cancel, Sleep           string
				AfterGarbage, Long, Big bool
				Progress                int
				Errors                  []string
			}
			if err := json.Unmarshal(outb, &out); err != nil {
				t.Fatalf("life.mjs output %q: %v", outb, err)
			}
			if !strings.Contains(out.Cancel, "timed out") {
				t.Errorf("cancel: %q", out.Cancel)
			}
			waitFor(t, 10*time.Second, "the sleep to be gone", func() bool { return len(sleepers("sleep", out.Sleep)) == 0 })
			ev, ok := lastEvent(t, owner, "command.run", "sleep "+out.Sleep)
			if !ok || !strings.Contains(ev.Detail, "cancelled") {
				t.Errorf("event: %+v", ev)
			}
			if !out.AfterGarbage || !out.Long || out.Progress < 5 || !out.Big {
				t.Errorf("findings: %+v", out)
			}
		})
	}
}
