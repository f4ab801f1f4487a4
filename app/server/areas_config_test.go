package server

import (
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/testkit/errkind"
)

// The config area against a fake status (the connect area's tests are
// app/connect's, setup_test.go).

func TestConfigAreaReportsTheStatus(t *testing.T) {
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	x := configArea{status: func() configStatusResult {
		return configStatusResult{Path: "/c/config.toml", Problem: "line 3: expected '='", RestartNeeded: []string{"server"}, ReloadedAt: &at}
	}}
	table := map[string]method{}
	x.methods(func(name string, m method) { table[name] = m })
	if !table["config.status"].owner {
		t.Error("config.status is open to agents")
	}
	res, err := table["config.status"].fn(t.Context(), ownerCall(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := wireOf(t, res); w != `{"path":"/c/config.toml","problem":"line 3: expected '='","restart_needed":["server"],"reloaded_at":"2026-11-25T09:00:00Z"}` {
		t.Errorf("config.status = %s", w)
	}
	_, err = table["config.status"].fn(t.Context(), ownerCall(`{"x":1}`))
	errkind.Want(t, err, errs.InvalidParams)
}
