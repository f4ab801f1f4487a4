// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os/exec"
	"strings"
	"testing"

	"corral/core/testkit/needs"
)

const help = `usage: corral [command]

  (none)                 the tray app; headless when there is no display
  serve [--headless] [--config FILE] [--listen ADDR]
                         run the daemon
  audit [--follow] [--client N] [--user ID] [--op OP] [--decision D] [--text T] [--limit N]
                         print audit events as a table
  call METHOD [JSON]     one JSON-RPC call to the running daemon
                         .dotted continuation
`

// TestPage: every command of the help is an entry, long synopses keep
// their text, hyphens and leading dots are escaped, and man renders the
// page without warnings.
func TestPage(t *testing.T) {
	var b strings.Builder
	if err := write(&b, strings.NewReader(help), "0.1.0", "2026-11-27"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		".TH CORRAL 1 \"2026-11-27\" \"corral 0.1.0\"",
		".TP\n.B (no command)\nthe tray app; headless when there is no display\n",
		".TP\n.B serve [\\-\\-headless] [\\-\\-config FILE] [\\-\\-listen ADDR]\nrun the daemon\n",
		".B audit [\\-\\-follow]",
		".TP\n.B call METHOD [JSON]\none JSON\\-RPC call to the running daemon\n\\&.dotted continuation\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if _, err := parse(strings.NewReader("nothing\n")); err == nil {
		t.Error("parsed a help without its usage line")
	}
	needs.Tool(t, "man", "man-db")
	cmd := exec.Command("man", "--warnings", "-E", "UTF-8", "-l", "-")
	cmd.Stdin = strings.NewReader(page)
	cmd.Env = append(cmd.Environ(), "MANWIDTH=80", "MAN_KEEP_FORMATTING=0")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "warning") {
		t.Errorf("man: %v\n%s", err, out)
	}
}
