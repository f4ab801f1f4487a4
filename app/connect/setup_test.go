package connect

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/testkit/errkind"
)

// TestConnectWriteCreatesKeepsAndNamesAStableCommand: under a fresh home,
// Write creates ~/.cursor/mcp.json with its folder (owner-only); into an
// existing file it splices Corral's entry and leaves another server's
// bytes as they were; the command it writes is ~/.local/bin/corral,
// linked to the running program, never the program's own (build) folder.
func TestConnectWriteCreatesKeepsAndNamesAStableCommand(t *testing.T) {
	home := t.TempDir()
	key := "corral_bot_key"
	var log auditDetails
	x := Setup{Home: home, URL: func() string { return "http://127.0.0.1:8765" }, Now: areaClock, Record: log.record,
		KeyOf: func(agent string) ([32]byte, bool) { return sha256.Sum256([]byte(key)), agent == "bot" }}
	exe, _ := os.Executable()
	link := LinkPath(home)
	file := filepath.Join(home, ".cursor", "mcp.json")

	plan, err := x.Preview(t.Context(), "owner", params(t, `{"name":"bot","app":"cursor","key":"`+key+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Creates || plan.Link != link || plan.Unchanged {
		t.Errorf("preview of a missing file: %+v", plan)
	}
	if _, err := os.Stat(filepath.Dir(file)); err == nil {
		t.Fatal("the preview made the folder")
	}
	wrote, err := x.Write(t.Context(), "owner", params(t, `{"name":"bot","app":"cursor","key":"`+key+`","digest":"`+plan.Digest+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(file)
	fi, _ := os.Stat(file)
	if !wrote.Written || wrote.Backup != "" || fi == nil || fi.Mode().Perm() != 0o600 || !strings.Contains(string(got), `"command": "`+link+`"`) || strings.Contains(string(got), exe) {
		t.Errorf("write into a missing file: %+v, mode %v:\n%s", wrote, fi, got)
	}
	if to, err := filepath.EvalSymlinks(link); err != nil || to != mustReal(t, exe) {
		t.Errorf("%s leads to %q (%v), want %s", link, to, err, exe)
	}
	if len(log) != 1 || !strings.Contains(log[0], "(a new file); linked "+link) {
		t.Errorf("audit %q", log)
	}

	// The dialog names the link, and shows Cursor as writable with or
	// without its file; a link that leads nowhere (after `make clean`)
	// is made again as it opens, so a copied setup names a program.
	os.Remove(link)
	os.Symlink(filepath.Join(home, "gone", "corral"), link)
	os.Remove(file)
	shown, err := x.Show(t.Context(), "owner", params(t, `{"name":"bot","key":"`+key+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if to, _ := filepath.EvalSymlinks(link); shown.Command != link || to != mustReal(t, exe) {
		t.Errorf("command shown %q, leading to %q", shown.Command, to)
	}
	for _, app := range shown.Apps {
		if app.ID == "cursor" && (app.Exists || !app.Writable || app.Path != file) {
			t.Errorf("cursor without its file: %+v", app)
		}
	}
	if len(log) != 2 || !strings.Contains(log[1], "linked "+link+" to "+exe) {
		t.Errorf("audit %q", log)
	}

	// Another server's formatting stays, byte for byte.
	other := "{\n    \"mcpServers\": {\n        \"other\": {\"command\":   \"npx\",\n                   \"args\": [\"-y\", \"x\"]}\n    }\n}\n"
	os.WriteFile(file, []byte(other), 0o600)
	again, err := x.Write(t.Context(), "owner", params(t, `{"name":"bot","app":"cursor","key":"`+key+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(file)
	head := "{\n    \"mcpServers\": {\n        \"other\": {\"command\":   \"npx\",\n                   \"args\": [\"-y\", \"x\"]},\n        \"corral\": {\n            \"command\": \"" + link + "\","
	if !strings.HasPrefix(string(got), head) || !strings.HasSuffix(string(got), "\n        }\n    }\n}\n") {
		t.Errorf("the other server's lines changed:\n%s", got)
	}
	if p := again; p.Creates || p.Link != "" || p.Backup == "" {
		t.Errorf("second write: %+v", p)
	}
}

func mustReal(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestConnectConfigAgentSaysWhereItsKeyIs: an agent written in
// config.toml gets no "rotate it" placeholder (it cannot be rotated
// here): its setups and the result name the file its key is in.
func TestConnectConfigAgentSaysWhereItsKeyIs(t *testing.T) {
	x := Setup{Home: t.TempDir(), Command: "/usr/bin/corral", URL: func() string { return "http://127.0.0.1:8765" },
		KeyOf:      func(agent string) ([32]byte, bool) { return [32]byte{1}, agent == "local-agent" || agent == "bot" },
		ConfigFile: "/home/me/.config/corral/config.toml", FromConfig: func(agent string) bool { return agent == "local-agent" }}
	r, err := x.Show(t.Context(), "owner", params(t, `{"name":"local-agent"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.ConfigFile != x.ConfigFile {
		t.Errorf("config_file %q", r.ConfigFile)
	}
	for _, app := range r.Apps {
		if app.ID == "cursor" && (strings.Contains(app.Snippet, KeyPlaceholder) || !strings.Contains(app.Snippet, "the key of its [[clients]] entry in "+x.ConfigFile)) {
			t.Errorf("the config agent's snippet:\n%s", app.Snippet)
		}
	}
	r, _ = x.Show(t.Context(), "owner", params(t, `{"name":"bot"}`))
	if r.ConfigFile != "" || !strings.Contains(r.Apps[0].Snippet, KeyPlaceholder) {
		t.Errorf("an agent added in the dashboard: %+v", r)
	}
}

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
	x := Setup{Home: home, Command: "/usr/bin/corral", URL: func() string { return "http://127.0.0.1:8765" }, Now: areaClock, Record: log.record,
		KeyOf: func(agent string) ([32]byte, bool) { return sha256.Sum256([]byte(key)), agent == "bot" }}

	plan, err := x.Preview(t.Context(), "owner", params(t, `{"name":"bot","app":"cursor","key":"`+key+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if plan.Path != file || plan.Written || !strings.Contains(plan.Diff, "+") || !strings.Contains(plan.Diff, key) {
		t.Errorf("preview: %+v", plan)
	}
	if now, _ := os.ReadFile(file); string(now) != string(before) || len(log) != 0 {
		t.Fatalf("the preview changed the file to %s or recorded %q", now, log)
	}

	// A write against a digest the file no longer has is refused.
	_, err = x.Write(t.Context(), "owner", params(t, `{"name":"bot","app":"cursor","key":"`+key+`","digest":"00"}`))
	errkind.Want(t, err, errs.Conflict)
	if now, _ := os.ReadFile(file); string(now) != string(before) {
		t.Fatal("a refused write changed the file")
	}

	wrote, err := x.Write(t.Context(), "owner", params(t, `{"name":"bot","app":"cursor","key":"`+key+`","digest":"`+plan.Digest+`"}`))
	if err != nil {
		t.Fatal(err)
	}
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
		_, err := x.Preview(t.Context(), "owner", params(t, tc.params))
		if errs.KindOf(err) != tc.kind {
			t.Errorf("%s: %v, want %s", tc.params, err, tc.kind)
		}
	}
}

func TestConnectAreaShowsTheAppsWithoutAKey(t *testing.T) {
	home, file, _ := connectHome(t)
	x := Setup{Home: home, Command: "/usr/bin/corral", URL: func() string { return "http://127.0.0.1:8765" },
		KeyOf: func(agent string) ([32]byte, bool) { return [32]byte{1}, agent == "bot" }}
	r, err := x.Show(t.Context(), "owner", params(t, `{"name":"bot"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.HasKey || r.URL != "http://127.0.0.1:8765" || r.Command != "/usr/bin/corral" {
		t.Errorf("agent.connect: %+v", r)
	}
	for _, app := range r.Apps {
		if app.ID == "cursor" && (app.Path != file || !app.Exists || app.Writable || !strings.Contains(app.Snippet, KeyPlaceholder)) {
			t.Errorf("cursor without the key: %+v", app)
		}
	}
	_, err = x.Show(t.Context(), "owner", params(t, `{"name":"nobody"}`))
	errkind.Want(t, err, errs.NotFound)
}

// params decodes a call's JSON params as the method table does.
func params(t *testing.T, s string) Params {
	t.Helper()
	var p Params
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		t.Fatal(err)
	}
	return p
}
