package server

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/app/connect"
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
	x := connectArea{home: home, url: func() string { return "http://127.0.0.1:8765" }, now: areaClock, record: log.record,
		keyOf: func(agent string) ([32]byte, bool) { return sha256.Sum256([]byte(key)), agent == "bot" }}
	exe, _ := os.Executable()
	link := connect.LinkPath(home)
	file := filepath.Join(home, ".cursor", "mcp.json")

	res, err := x.preview(t.Context(), ownerCall(`{"name":"bot","app":"cursor","key":"`+key+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	plan := res.(connectPlan)
	if !plan.Creates || plan.Link != link || plan.Unchanged {
		t.Errorf("preview of a missing file: %+v", plan)
	}
	if _, err := os.Stat(filepath.Dir(file)); err == nil {
		t.Fatal("the preview made the folder")
	}
	res, err = x.write(t.Context(), ownerCall(`{"name":"bot","app":"cursor","key":"`+key+`","digest":"`+plan.Digest+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	wrote := res.(connectPlan)
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
	res, err = x.show(t.Context(), ownerCall(`{"name":"bot","key":"`+key+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	shown := res.(connectResult)
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
	res, err = x.write(t.Context(), ownerCall(`{"name":"bot","app":"cursor","key":"`+key+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(file)
	head := "{\n    \"mcpServers\": {\n        \"other\": {\"command\":   \"npx\",\n                   \"args\": [\"-y\", \"x\"]},\n        \"corral\": {\n            \"command\": \"" + link + "\","
	if !strings.HasPrefix(string(got), head) || !strings.HasSuffix(string(got), "\n        }\n    }\n}\n") {
		t.Errorf("the other server's lines changed:\n%s", got)
	}
	if p := res.(connectPlan); p.Creates || p.Link != "" || p.Backup == "" {
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
	x := connectArea{home: t.TempDir(), command: "/usr/bin/corral", url: func() string { return "http://127.0.0.1:8765" },
		keyOf:   func(agent string) ([32]byte, bool) { return [32]byte{1}, agent == "local-agent" || agent == "bot" },
		cfgFile: "/home/me/.config/corral/config.toml", fromConfig: func(agent string) bool { return agent == "local-agent" }}
	res, err := x.show(t.Context(), ownerCall(`{"name":"local-agent"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := res.(connectResult)
	if r.ConfigFile != x.cfgFile {
		t.Errorf("config_file %q", r.ConfigFile)
	}
	for _, app := range r.Apps {
		if app.ID == "cursor" && (strings.Contains(app.Snippet, keyPlaceholder) || !strings.Contains(app.Snippet, "the key of its [[clients]] entry in "+x.cfgFile)) {
			t.Errorf("the config agent's snippet:\n%s", app.Snippet)
		}
	}
	res, _ = x.show(t.Context(), ownerCall(`{"name":"bot"}`))
	if r := res.(connectResult); r.ConfigFile != "" || !strings.Contains(r.Apps[0].Snippet, keyPlaceholder) {
		t.Errorf("an agent added in the dashboard: %+v", r)
	}
}
