package words

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"corral/core/audit"
)

var update = flag.Bool("update", false, "rewrite assets/web/js/lib/words.js from Table")

// modulePath is the web's copy of the table, generated from Table.
var modulePath = filepath.Join("..", "..", "assets", "web", "js", "lib", "words.js")

// module is words.js: the table as a JavaScript module.
func module() []byte {
	b, err := json.MarshalIndent(Table(), "", "  ")
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	buf.WriteString("// Generated from core/words (go test ./core/words -update): the one table of\n")
	buf.WriteString("// the words every surface shows for Corral's concepts. Do not edit by hand.\n")
	buf.WriteString("export const words = ")
	buf.Write(b)
	buf.WriteString(";\n")
	return buf.Bytes()
}

// The web's words.js is the table as it is now.
func TestModuleUpToDate(t *testing.T) {
	want := module()
	if *update {
		if err := os.WriteFile(modulePath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(modulePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not Table(): run go test ./core/words -update", modulePath)
	}
}

func TestWho(t *testing.T) {
	for in, want := range map[string]string{
		"owner": "you", "browser": "you", "tray": "you", "dialog": "you", "cli": "you",
		"dashboard:Firefox": "you", "device:Kitchen phone": "Kitchen phone", "claude-desktop": "claude-desktop",
	} {
		if got := Who(in); got != want {
			t.Errorf("Who(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTable(t *testing.T) {
	if OpLabel("agents.resume") != "Resumed agents" || OpLabel("x.y") != "x.y" {
		t.Error("OpLabel")
	}
	if DecisionLabel(audit.Allow) != "Allowed" {
		t.Error("DecisionLabel")
	}
	for _, by := range []audit.DecidedBy{audit.ByScope, audit.ByRoot, audit.ByRule, audit.ByOwner, audit.ByTimeout, audit.ByStrict, audit.ByPaused} {
		if DecidedBy[by] == "" {
			t.Errorf("no word for decided_by %s", by)
		}
	}
	if Lifetimes[DefaultLifetime].D == 0 {
		t.Error("the default lifetime is forever")
	}
	if Countdown(83*time.Second) != "Denied automatically in 1:23 unless you answer." || Countdown(0) != TimeUp {
		t.Error("Countdown")
	}
}
