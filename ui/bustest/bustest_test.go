package bustest

import (
	"strings"
	"testing"

	"corral/core/testkit/needs"
)

func TestStart(t *testing.T) {
	needs.Tool(t, "dbus-daemon", "dbus-daemon")
	if addr := Start(t); !strings.HasPrefix(addr, "unix:") {
		t.Errorf("address %q", addr)
	}
}
