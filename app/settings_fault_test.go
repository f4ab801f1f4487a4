package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"corral/store/storetest"
)

// startXDG starts the daemon with its config in cfgHome/corral and its
// data in dataHome/corral (the XDG layout), so the two can be on
// different disks.
func startXDG(t *testing.T, cfgHome, dataHome string, extra ...string) *running {
	t.Helper()
	r := &running{bin: corralBinary(t), stderr: &strings.Builder{}}
	r.env = append(os.Environ(), "CORRAL_HOME=", "HOME="+dataHome, "XDG_CONFIG_HOME="+cfgHome, "XDG_DATA_HOME="+dataHome)
	r.env = append(r.env, extra...)
	var stdout io.Reader
	r.cmd, stdout = serveCmd(t, r.bin, "127.0.0.1:0", r.env, r.stderr)
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	if lines.Scan() {
		r.lines = append(r.lines, lines.Text())
	}
	go io.Copy(io.Discard, stdout)
	m := regexp.MustCompile(`^corral: listening on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(strings.Join(r.lines, ""))
	if m == nil {
		t.Fatalf("start-up: %v\n%s", r.lines, r.stderr)
	}
	r.url = m[1]
	owner, _ := os.ReadFile(filepath.Join(dataHome, "corral", "owner.token"))
	r.ownerKey = strings.TrimSpace(string(owner))
	return r
}

// settingsEvents returns the settings.set events of the daemon r, oldest
// first.
func settingsEvents(t *testing.T, r *running) []auditRow {
	t.Helper()
	c := dialKey(t.Context(), t, r, r.ownerKey)
	defer c.Close()
	var page struct{ Events []auditRow }
	if err := c.CallInto(t.Context(), "audit.query", map[string]any{"op": "settings.set"}, &page); err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(page.Events)-1; i < j; i, j = i+1, j-1 {
		page.Events[i], page.Events[j] = page.Events[j], page.Events[i]
	}
	return page.Events
}

type auditRow struct {
	ID       int64  `json:"id"`
	Decision string `json:"decision"`
	Detail   string `json:"detail"`
	Error    string `json:"error"`
}

// setTimeout asks r for sandbox.approval_timeout = v as the owner.
func setTimeout(t *testing.T, r *running, v string) (json.RawMessage, error) {
	c := dialKey(t.Context(), t, r, r.ownerKey)
	defer c.Close()
	return c.Call(t.Context(), "settings.set", map[string]any{"values": map[string]any{"sandbox.approval_timeout": v}})
}

const settingsFaultConfig = "# keep this comment\n[[users]]\nid = \"root\"\nname = \"root\"\n\n[sandbox]\napproval_timeout = \"2m\"\n"

// TestSettingsSetKilled: the daemon is SIGKILLed while settings.set
// replaces config.toml, after the new text is synced to its temporary
// file and before the rename (config.rename). config.toml is the old
// file, byte for byte, no temporary file is left beside it, and the audit
// event of the change, never answered, does not say it was made: it is an
// error ("interrupted"). The same change asked again is saved and
// recorded as allowed.
func TestSettingsSetKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the daemon")
	}
	t.Parallel()
	cfgHome, dataHome := t.TempDir(), t.TempDir()
	file := filepath.Join(cfgHome, "corral", "config.toml")
	os.MkdirAll(filepath.Dir(file), 0o700)
	writeFile(t, file, settingsFaultConfig)

	// A first start writes the secret and the owner's token; the second,
	// armed, writes nothing before settings.set.
	r := startXDG(t, cfgHome, dataHome)
	r.cmd.Process.Signal(syscall.SIGTERM)
	r.cmd.Wait()
	r = startXDG(t, cfgHome, dataHome, "CORRAL_KILL_AT=config.rename:1")
	if out, err := setTimeout(t, r, "7m"); err == nil {
		t.Fatalf("settings.set answered %s through a kill", out)
	}
	if err := r.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the daemon ended with %v, not at its kill point\n%s", err, r.stderr)
	}
	if got, _ := os.ReadFile(file); string(got) != settingsFaultConfig {
		t.Errorf("config.toml after the kill:\n%s", got)
	}
	if left, _ := filepath.Glob(filepath.Join(cfgHome, "corral", ".corral-tmp-*")); len(left) != 0 {
		t.Logf("temporary files left beside config.toml after the kill: %v", left)
	}

	r = startXDG(t, cfgHome, dataHome)
	if left, _ := filepath.Glob(filepath.Join(cfgHome, "corral", ".corral-tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left beside config.toml after the restart: %v", left)
	}
	evs := settingsEvents(t, r)
	if len(evs) != 1 || evs[0].Decision != "error" || !strings.Contains(evs[0].Detail, "interrupted") {
		t.Errorf("the interrupted change's event: %+v, want one error, interrupted", evs)
	}
	if _, err := setTimeout(t, r, "7m"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(file); !strings.Contains(string(got), `approval_timeout = "7m"`) || !strings.HasPrefix(string(got), "# keep this comment\n") {
		t.Errorf("config.toml after the change:\n%s", got)
	}
	evs = settingsEvents(t, r)
	if len(evs) != 2 || evs[1].Decision != "allow" || evs[1].Error != "" {
		t.Errorf("events after the change: %+v", evs)
	}
	t.Logf("events: %+v", evs)
}

// TestSettingsSetFullDisk: with config.toml's folder on a full disk,
// settings.set answers an error that says nothing was saved, config.toml
// is the old file, no temporary file is left, and the audit event of the
// refused change is an error that says why; once there is room the
// change is saved.
func TestSettingsSetFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemon")
	}
	t.Parallel()
	cfgHome, dataHome := storetest.SmallDisk(t, "1m"), t.TempDir()
	file := filepath.Join(cfgHome, "corral", "config.toml")
	os.MkdirAll(filepath.Dir(file), 0o700)
	writeFile(t, file, settingsFaultConfig)
	r := startXDG(t, cfgHome, dataHome)

	fill := filepath.Join(cfgHome, "fill")
	if out, err := exec.Command("dd", "if=/dev/zero", "of="+fill, "bs=4k").CombinedOutput(); err == nil || !strings.Contains(string(out), "No space left") {
		t.Fatalf("dd did not fill the disk: %v %s", err, out)
	}
	out, err := setTimeout(t, r, "7m")
	if err == nil || strings.Contains(strings.ToLower(err.Error()), "saved") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("settings.set on a full disk: %s %v", out, err)
	}
	if got, _ := os.ReadFile(file); string(got) != settingsFaultConfig {
		t.Errorf("config.toml after the refused change:\n%s", got)
	}
	if left, _ := filepath.Glob(filepath.Join(cfgHome, "corral", ".corral-tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	evs := settingsEvents(t, r)
	if len(evs) != 1 || evs[0].Decision != "error" || !strings.Contains(evs[0].Error, "space") {
		t.Errorf("the refused change's event: %+v, want an error naming the full disk", evs)
	}
	os.Remove(fill)
	if _, err := setTimeout(t, r, "7m"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(file); !strings.Contains(string(got), `approval_timeout = "7m"`) {
		t.Errorf("config.toml once there is room:\n%s", got)
	}
	evs = settingsEvents(t, r)
	if len(evs) != 2 || evs[1].Decision != "allow" {
		t.Errorf("events once there is room: %+v", evs)
	}
	t.Logf("events: %+v", evs)
	r.cmd.Process.Signal(syscall.SIGTERM)
}
