package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"corral/app/wire"
)

// hostilePath is what an agent might send to write into the owner's
// terminal: clear the screen, turn the text red, reverse the line.
var hostilePath = "notes/\x1b[2J\x1b[31m\u202eevil" + strings.Repeat("x", 100) + ".txt"

// corral audit and corral call never pass an agent's control characters,
// ANSI sequences or bidi overrides to the terminal; piped, audit prints
// values whole, and --json prints one exact JSON object per line.
func TestCLIShowsAgentTextSafely(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	c := exec.Command(r.bin, "call", "file.read", mustJSON(t, map[string]string{"path": hostilePath}))
	c.Env = r.agentEnv()
	b, err := c.CombinedOutput()
	if err == nil {
		t.Fatalf("file.read of %q worked: %s", hostilePath, b)
	}
	checkNoHidden(t, "corral call", string(b))

	c = exec.Command(r.bin, "audit", "--op", "file.read")
	c.Env = r.envWith(r.ownerKey)
	b, err = c.CombinedOutput()
	out := string(b)
	if err != nil || !strings.Contains(out, `notes/\x1b[2J\x1b[31m\u202eevil`+strings.Repeat("x", 100)+".txt") {
		t.Errorf("corral audit (piped): the whole target, made visible, is missing: %v\n%s", err, out)
	}
	checkNoHidden(t, "corral audit", out)

	c = exec.Command(r.bin, "audit", "--op", "file.read", "--json")
	c.Env = r.envWith(r.ownerKey)
	b, err = c.CombinedOutput()
	if err != nil {
		t.Fatalf("corral audit --json: %v %s", err, b)
	}
	checkNoHidden(t, "corral audit --json", string(b))
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	lines := 0
	for sc.Scan() {
		lines++
		var e wire.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d is not one JSON object: %v %q", lines, err, sc.Text())
		}
		if e.Op != "file.read" || e.Target != hostilePath {
			t.Errorf("line %d: op %q target %q, want the path as sent", lines, e.Op, e.Target)
		}
	}
	if lines != 1 {
		t.Errorf("%d JSON lines, want 1:\n%s", lines, b)
	}
}

func checkNoHidden(t *testing.T, what, out string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\u202e", "\r"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s passes %q to the terminal:\n%q", what, bad, out)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// On a terminal a long value is cut to fit its column, and says so.
func TestAuditRowOnATerminal(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	auditOut{w: &sb}.row(tw, wire.Event{ID: 1, Time: time.Now(), Client: "a", Op: "file.read", Target: hostilePath})
	tw.Flush()
	if !strings.Contains(sb.String(), `notes/\x1b[2J\x1b[31m\u202eevil`) || !strings.Contains(sb.String(), "x…") || strings.Contains(sb.String(), strings.Repeat("x", 100)) {
		t.Errorf("terminal row: %q", sb.String())
	}
	checkNoHidden(t, "terminal row", sb.String())
}
