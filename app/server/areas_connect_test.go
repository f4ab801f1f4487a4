package server

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/testkit/errkind"
)

// The connect and config areas against fakes: a home folder of the
// test's own, a key and a clock.

// auditDetails collects what an area records, one "who op target: detail"
// a line.
type auditDetails []string

func (l *auditDetails) record(ctx context.Context, who, op, target, detail string) error {
	*l = append(*l, who+" "+op+" "+target+": "+detail)
	return nil
}

var areaClock = func() time.Time { return time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC) }

// connectHome is an owner's home with Cursor's config file holding one
// other server.
func connectHome(t *testing.T) (home, file string, before []byte) {
	home = t.TempDir()
	file = filepath.Join(home, ".cursor", "mcp.json")
	before = []byte(`{"mcpServers":{"other":{"command":"other"}}}`)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, before, 0o600); err != nil {
		t.Fatal(err)
	}
	return home, file, before
}

func TestConnectAreaPreviewWritesNothingWriteDoes(t *testing.T) {
	home, file, before := connectHome(t)
	key := "corral_bot_key"
	var log auditDetails
	x := connectArea{home: home, command: "/usr/bin/corral", url: func() string { return "http://127.0.0.1:8765" }, now: areaClock, record: log.record,
		keyOf: func(agent string) ([32]byte, bool) { return sha256.Sum256([]byte(key)), agent == "bot" }}

	res, err := x.preview(t.Context(), ownerCall(`{"name":"bot","app":"cursor","key":"`+key+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	plan := res.(connectPlan)
	if plan.Path != file || plan.Written || !strings.Contains(plan.Diff, "+") || !strings.Contains(plan.Diff, key) {
		t.Errorf("preview: %+v", plan)
	}
	if now, _ := os.ReadFile(file); string(now) != string(before) || len(log) != 0 {
		t.Fatalf("the preview changed the file to %s or recorded %q", now, log)
	}

	// A write against a digest the file no longer has is refused.
	_, err = x.write(t.Context(), ownerCall(`{"name":"bot","app":"cursor","key":"`+key+`","digest":"00"}`))
	errkind.Want(t, err, errs.Conflict)
	if now, _ := os.ReadFile(file); string(now) != string(before) {
		t.Fatal("a refused write changed the file")
	}

	res, err = x.write(t.Context(), ownerCall(`{"name":"bot","app":"cursor","key":"`+key+`","digest":"`+plan.Digest+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	wrote := res.(connectPlan)
	now, _ := os.ReadFile(file)
	kept, _ := os.ReadFile(wrote.Backup)
	if !wrote.Written || !strings.Contains(string(now), key) || !strings.Contains(string(now), `"other"`) || string(kept) != string(before) {
		t.Errorf("write: %+v; file %s; backup %s", wrote, now, kept)
	}
	if wrote.Backup != file+".corral-backup-20261125-093000.000" || len(log) != 1 || !strings.HasPrefix(log[0], "owner agent.connect bot: wrote bot into "+file) {
		t.Errorf("backup %s, audit %q", wrote.Backup, log)
	}

	for _, tc := range []struct {
		params string
		kind   errs.Kind
	}{
		{`{"name":"bot","app":"cursor","key":"corral_wrong"}`, errs.InvalidParams},
		{`{"name":"bot","app":"cursor"}`, errs.InvalidParams}, // writing needs the key
		{`{"name":"nobody","app":"cursor","key":"` + key + `"}`, errs.NotFound},
		{`{"name":"bot","app":"goose","key":"` + key + `"}`, errs.Unavailable}, // shown, never written
	} {
		_, err := x.preview(t.Context(), ownerCall(tc.params))
		if errs.KindOf(err) != tc.kind {
			t.Errorf("%s: %v, want %s", tc.params, err, tc.kind)
		}
	}
}

func TestConnectAreaShowsTheAppsWithoutAKey(t *testing.T) {
	home, file, _ := connectHome(t)
	x := connectArea{home: home, command: "/usr/bin/corral", url: func() string { return "http://127.0.0.1:8765" },
		keyOf: func(agent string) ([32]byte, bool) { return [32]byte{1}, agent == "bot" }}
	res, err := x.show(t.Context(), ownerCall(`{"name":"bot"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := res.(connectResult)
	if r.HasKey || r.URL != "http://127.0.0.1:8765" || r.Command != "/usr/bin/corral" {
		t.Errorf("agent.connect: %+v", r)
	}
	for _, app := range r.Apps {
		if app.ID == "cursor" && (app.Path != file || !app.Exists || app.Writable || !strings.Contains(app.Snippet, keyPlaceholder)) {
			t.Errorf("cursor without the key: %+v", app)
		}
	}
	_, err = x.show(t.Context(), ownerCall(`{"name":"nobody"}`))
	errkind.Want(t, err, errs.NotFound)
}

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
