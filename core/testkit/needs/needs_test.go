package needs

import (
	"errors"
	"fmt"
	"testing"
)

type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }
func (r *recorder) Skipf(format string, args ...any)  { r.skip = fmt.Sprintf(format, args...) }

func TestTool(t *testing.T) {
	r := &recorder{TB: t}
	if p := Tool(r, "sh", "dash"); p == "" || r.fatal != "" || r.skip != "" {
		t.Errorf("sh: %q, fatal %q, skip %q", p, r.fatal, r.skip)
	}
	r = &recorder{TB: t}
	Tool(r, "corral-no-such-tool", "corral-no-such-package")
	if testing.Short() {
		if r.skip == "" || r.fatal != "" {
			t.Errorf("under -short a missing tool skips: fatal %q, skip %q", r.fatal, r.skip)
		}
	} else if r.fatal != "corral-no-such-tool is not installed: install the corral-no-such-package package (sudo apt install corral-no-such-package; packaging/deps.sh installs it), or run with -short to skip this test" || r.skip != "" {
		t.Errorf("a missing tool fails: fatal %q, skip %q", r.fatal, r.skip)
	}
}

func TestCan(t *testing.T) {
	r := &recorder{TB: t}
	Can(r, "fly", nil)
	if r.fatal != "" || r.skip != "" {
		t.Errorf("no error: fatal %q, skip %q", r.fatal, r.skip)
	}
	r = &recorder{TB: t}
	Can(r, "fly", errors.New("no wings"))
	if testing.Short() {
		if r.skip != "this machine cannot fly (no wings); skipped under -short" || r.fatal != "" {
			t.Errorf("under -short it skips: fatal %q, skip %q", r.fatal, r.skip)
		}
	} else if r.fatal != "this machine cannot fly: no wings (packaging/deps.sh installs what Corral's tests need; or run with -short to skip this test)" || r.skip != "" {
		t.Errorf("it fails: fatal %q, skip %q", r.fatal, r.skip)
	}
}
