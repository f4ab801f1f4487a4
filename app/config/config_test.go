package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestInvalidConfigsNameFileLineAndKey(t *testing.T) {
	for _, tc := range []struct {
		file string
		line int
		key  string
	}{
		{"invalid-user-id.toml", 8, "users[1].id"},
		{"invalid-duplicate-key.toml", 11, "clients[1].key"},
		{"invalid-unknown-user.toml", 7, "clients[0].user"},
		{"invalid-syntax.toml", 3, ""},
		{"invalid-unknown-key.toml", 3, "sandbox.stirct"},
		{"invalid-duration.toml", 2, "links.expiry"},
		{"invalid-reserved.toml", 2, "users[0].id"},
		{"invalid-duplicate-user.toml", 4, "users[1].id"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			data, _ := os.ReadFile(path)
			_, err := Parse(path, data, "/home/me", "/data/sandbox")
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			wantLoc := path + ":" + strconv.Itoa(tc.line)
			if !strings.HasPrefix(msg, wantLoc+":") {
				t.Errorf("error %q does not start with %q", msg, wantLoc)
			}
			if tc.key != "" && !strings.Contains(msg, tc.key) {
				t.Errorf("error %q does not name key %q", msg, tc.key)
			}
		})
	}
}

func TestValidFull(t *testing.T) {
	path := filepath.Join("testdata", "valid-full.toml")
	data, _ := os.ReadFile(path)
	c, err := Parse(path, data, "/home/me", "/data/sandbox")
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.Base != "/home/me/yard" || c.Sandbox.Roots[0].Path != "/home/me/Documents/agent-inbox" || c.Sandbox.Roots[1].Path != "/srv/projects" {
		t.Errorf("paths: %+v", c.Sandbox)
	}
	if c.Links.Expiry.D() != 24*time.Hour || c.Links.MaxExpiry.D() != 7*24*time.Hour || c.Audit.Retention.D() != 30*24*time.Hour {
		t.Errorf("durations: %+v %+v", c.Links, c.Audit)
	}
	if c.Server.PublicURL != "https://corral.example" {
		t.Errorf("public_url %q", c.Server.PublicURL)
	}
	h := c.Clients[0].KeyHash()
	if h[0] != 0x9f || h[31] != 0x08 {
		t.Errorf("key hash %x", h)
	}
}

func TestDefaultWrittenAndUsable(t *testing.T) {
	dir := t.TempDir()
	files, err := Locate(func(k string) string {
		if k == "CORRAL_HOME" {
			return dir
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(files.Config, "/home/me", files.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(files.Config)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v %v", err, st)
	}
	if len(c.Users) != 1 || len(c.Clients) != 1 || c.Clients[0].Name != "local-agent" || c.Clients[0].User != c.Users[0].ID || len(c.Clients[0].Key) < 30 {
		t.Errorf("default users/clients: %+v %+v", c.Users, c.Clients)
	}
	d := Defaults()
	if c.Server.Listen != d.Server.Listen || c.Sandbox.Base != files.Sandbox || !c.Sandbox.Strict || c.Exec.MaxOutputKB != 1024 {
		t.Errorf("defaults not applied: %+v", c)
	}
	// A second load reads the same file (same key).
	c2, err := Load(files.Config, "/home/me", files.Sandbox)
	if err != nil || c2.Clients[0].Key != c.Clients[0].Key {
		t.Errorf("reload: %v", err)
	}

	key, err := EnsureSecret(files.Secret)
	if err != nil || len(key) != 32 {
		t.Fatalf("secret: %v %d", err, len(key))
	}
	key2, _ := EnsureSecret(files.Secret)
	if string(key) != string(key2) {
		t.Error("secret changed on second start")
	}
	tok, err := EnsureOwnerToken(files.OwnerToken)
	if err != nil || len(tok) < 32 {
		t.Fatalf("owner token: %v", err)
	}
	for _, p := range []string{files.Secret, files.OwnerToken} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v %v", p, st.Mode(), err)
		}
	}
}

func TestLocateXDG(t *testing.T) {
	env := map[string]string{"HOME": "/home/me", "XDG_DATA_HOME": "/xdg/data"}
	f, err := Locate(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if f.Config != "/home/me/.config/corral/config.toml" || f.DB != "/xdg/data/corral/corral.db" || f.Sandbox != "/xdg/data/corral/sandbox" {
		t.Errorf("%+v", f)
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "1d12h": 36 * time.Hour, "90s": 90 * time.Second, "2160h": 2160 * time.Hour} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "d", "-1d", "1dd", "99999999999d", "forever"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
