package commands

import (
	"strings"
	"testing"
)

// The question about a command says when it cut a value; today's cut an
// environment value at 200 bytes without a word.
func TestDescribeRunSaysWhatItCut(t *testing.T) {
	got := describeRun(RunArgs{
		Command: "make",
		Env:     map[string]string{"SHORT": "ok", "LONG": strings.Repeat("x", 300)},
		Stdin:   strings.Repeat("y", 800),
	})
	for _, want := range []string{
		`SHORT="ok"`,
		`LONG="` + strings.Repeat("x", 200) + `"…(cut: 100 more bytes)`,
		`(input, 800 bytes: "` + strings.Repeat("y", 500) + `"…(cut: 300 more bytes))`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("describeRun lacks %q:\n%s", want, got)
		}
	}
	if got := describeRun(RunArgs{Command: "x", Env: map[string]string{"E": "\x1b[2J\u202e"}}); !strings.Contains(got, `E="\x1b[2J\u202e"`) {
		t.Errorf("hidden characters in an env value: %q", got)
	}
}
