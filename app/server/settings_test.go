package server

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"corral/app/client"
	"corral/core/testkit/linediff"
)

// ownerConfig is the harness's config as an owner keeps it: with
// comments, a commented default and a table of its own.
const ownerConfig = "# My Corral: do not lose this comment.\n" + testConfig + `
[sandbox]
# approval_timeout = "2m"      # how long a question waits
strict = true                  # deny when nobody can be asked

[links]   # links I hand out
expiry = "24h"
`

// startSettings starts a harness whose config.toml on disk is ownerConfig.
func startSettings(t *testing.T, extra string) (*harness, *client.Client) {
	t.Helper()
	h := startWith(t, setup{extra: extra})
	if err := os.WriteFile(h.files.Config, []byte(ownerConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return h, h.dial(ownerToken)
}

type settingsView struct {
	Applied       []string `json:"applied"`
	CanRestart    bool     `json:"can_restart"`
	LANURL        string   `json:"lan_url"`
	Path          string   `json:"path"`
	RestartNeeded []string `json:"restart_needed"`
	Settings      []struct {
		Key           string `json:"key"`
		Value         any    `json:"value"`
		Saved         any    `json:"saved"`
		Live          bool   `json:"live"`
		RestartNeeded bool   `json:"restart_needed"`
	} `json:"settings"`
}

func (v settingsView) value(key string) any {
	for _, s := range v.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return nil
}

// The approval timeout changed through settings.set is written as one
// line of config.toml, comments kept, and the next question uses it
// without a restart.
func TestSettingsApprovalTimeoutLive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside", "tax.pdf")
	os.MkdirAll(filepath.Dir(outside), 0o755)
	os.WriteFile(outside, []byte("tax data"), 0o644)
	h := startWith(t, setup{dir: dir})
	os.WriteFile(h.files.Config, []byte(ownerConfig), 0o600)
	own := h.owner(t)

	r := rpcCall[settingsView](t, own.c, "settings.set", m("values", m("sandbox.approval_timeout", "7m")))
	if len(r.Applied) != 1 || r.Applied[0] != "sandbox.approval_timeout" || len(r.RestartNeeded) != 0 || r.value("sandbox.approval_timeout") != "7m" {
		t.Fatalf("settings.set: %+v", r)
	}
	after, _ := os.ReadFile(h.files.Config)
	removed, added := linediff.Changed(ownerConfig, string(after))
	if len(removed) != 0 || len(added) != 1 || added[0] != `approval_timeout = "7m"` {
		t.Errorf("config.toml: removed %q, added %q:\n%s", removed, added, after)
	}

	alice := h.dial(aliceKey)
	done := async(alice, "file.read", m("path", outside))
	a := own.requested()
	if got := a.ExpiresAt.Sub(a.RequestedAt); got != 7*time.Minute {
		t.Errorf("the next question waits %v, want 7m", got)
	}
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once"))
	<-done
	// The audit log has the change.
	ev := rpcCall[struct{ Events []struct{ Op, Detail string } }](t, own.c, "audit.query", m("op", "settings.set"))
	if len(ev.Events) != 1 || !strings.Contains(ev.Events[0].Detail, "sandbox.approval_timeout") {
		t.Errorf("audit: %+v", ev.Events)
	}
}

// An invalid value is refused with start-up's message, naming the file,
// the line and the key; the file is left as it was.
func TestSettingsInvalidRefused(t *testing.T) {
	t.Parallel()
	h, owner := startSettings(t, "")
	ce := callErr(t, owner, "settings.set", m("values", m("sandbox.approval_timeout", "0s")))
	after, _ := os.ReadFile(h.files.Config)
	// The key is added after the commented default: line of "[sandbox]" + 2.
	line := strings.Count(ownerConfig[:strings.Index(ownerConfig, "# approval_timeout")], "\n") + 2
	want := h.files.Config + ":" + strconv.Itoa(line) + ": sandbox.approval_timeout: must be at least 1s"
	if ce.Data.Kind != "invalid_params" || ce.Message != want {
		t.Errorf("error %q (%s), want %q", ce.Message, ce.Data.Kind, want)
	}
	if string(after) != ownerConfig {
		t.Errorf("config.toml changed:\n%s", after)
	}
	for _, bad := range []map[string]any{
		m("values", m("server.lan", "yes")), m("values", m("nope.key", 1)), m("values", m("exec.max_running", 1.5)),
		m("values", m("server.listen", "a\nb")), m("values", m("exec.max_memory_mb", 1)),
	} {
		if ce := callErr(t, owner, "settings.set", bad); ce.Data.Kind != "invalid_params" {
			t.Errorf("%v: %+v", bad, ce)
		}
	}
	if after, _ := os.ReadFile(h.files.Config); string(after) != ownerConfig {
		t.Errorf("config.toml changed:\n%s", after)
	}
	// Agents may not read or change settings.
	if ce := callErr(t, h.dial(aliceKey), "settings.set", m("values", m("sandbox.strict", false))); ce.Data.Kind != "forbidden" {
		t.Errorf("agent settings.set: %+v", ce)
	}
}

// A setting the running daemon cannot change is saved and listed as
// waiting for a restart; corral.restart calls the daemon's restart.
func TestSettingsRestartNeeded(t *testing.T) {
	t.Parallel()
	h, owner := startSettings(t, "")
	r := rpcCall[settingsView](t, owner, "settings.set", m("values", m("exec.timeout", "5m", "links.expiry", "2h")))
	if len(r.RestartNeeded) != 1 || r.RestartNeeded[0] != "exec.timeout" || r.CanRestart {
		t.Errorf("restart_needed %v, can_restart %v", r.RestartNeeded, r.CanRestart)
	}
	if len(r.Applied) != 1 || r.Applied[0] != "links.expiry" || r.value("links.expiry") != "2h" || r.value("exec.timeout") != "2m" {
		t.Errorf("applied %v, links.expiry %v, exec.timeout %v", r.Applied, r.value("links.expiry"), r.value("exec.timeout"))
	}
	after, _ := os.ReadFile(h.files.Config)
	removed, added := linediff.Changed(ownerConfig, string(after))
	if strings.Join(removed, "|") != `expiry = "24h"` || strings.Join(added, "|") != `expiry = "2h"|[exec]|timeout = "5m"|` {
		t.Errorf("config.toml: removed %q, added %q:\n%s", removed, added, after)
	}
	if ce := callErr(t, owner, "corral.restart", nil); ce.Data.Kind != "unavailable" {
		t.Errorf("corral.restart without a daemon: %+v", ce)
	}
	restarted := make(chan struct{})
	h.srv.SetRestart(func() { close(restarted) })
	// A config.toml that would not start Corral: no restart.
	good, _ := os.ReadFile(h.files.Config)
	os.WriteFile(h.files.Config, append(append([]byte{}, good...), "\n[bogus]\nx = 1\n"...), 0o600)
	if ce := callErr(t, owner, "corral.restart", nil); ce.Data.Kind != "conflict" || !strings.Contains(ce.Message, "bogus") {
		t.Errorf("corral.restart with a broken config.toml: %+v", ce)
	}
	os.WriteFile(h.files.Config, good, 0o600)
	rpcCall[any](t, owner, "corral.restart", nil)
	select {
	case <-restarted:
	case <-time.After(10 * time.Second):
		t.Fatal("corral.restart did not call the restart")
	}
	// A new link uses the new expiry at once.
	alice := h.dial(aliceKey)
	os.MkdirAll(filepath.Join(h.base, "alice"), 0o700)
	os.WriteFile(filepath.Join(h.base, "alice", "a.txt"), []byte("a"), 0o600)
	l := rpcCall[struct{ ExpiresAt time.Time }](t, alice, "link.create", m("path", "a.txt"))
	if d := time.Until(l.ExpiresAt); d > 2*time.Hour+time.Minute || d < time.Hour {
		t.Errorf("a new link expires in %v, want about 2h", d)
	}
}

// Turning the LAN on through settings.set opens the LAN listener at once:
// links then carry the LAN address, which serves them; turning it off
// closes it.
func TestSettingsLANLive(t *testing.T) {
	t.Parallel()
	h, owner := startSettings(t, "")
	h.srv.lanCertFile = filepath.Join(h.dir, "lan-cert.pem")
	h.srv.lanIP = func() (net.IP, error) { return net.IPv4(127, 0, 0, 2), nil }
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	} else {
		ln.Close()
	}
	if ce := callErr(t, owner, "pairing.start", nil); ce.Data.Kind != "unavailable" {
		t.Fatalf("pairing.start with the LAN off: %+v", ce)
	}
	r := rpcCall[settingsView](t, owner, "settings.set", m("values", m("server.lan", true)))
	if r.LANURL == "" || !strings.HasPrefix(r.LANURL, "https://127.0.0.2:") || len(r.RestartNeeded) != 0 {
		t.Fatalf("after lan on: %+v", r)
	}
	pair := rpcCall[struct{ URL string }](t, owner, "pairing.start", nil)
	if !strings.HasPrefix(pair.URL, r.LANURL+"/pair?code=") {
		t.Errorf("pairing URL %q", pair.URL)
	}
	alice := h.dial(aliceKey)
	res := rpcCall[map[string]string](t, alice, "result.save", m("title", "Weekly", "content", "# Weekly\n\nAll quiet.\n", "format", "markdown"))
	if !strings.HasPrefix(res["url"], r.LANURL+"/files/out?") {
		t.Fatalf("result.save url %q, want the LAN address %s", res["url"], r.LANURL)
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := insecure.Get(res["view_url"])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "All quiet.") || !strings.Contains(string(body), "<svg") {
		t.Errorf("the result page on the LAN: %d\n%s", resp.StatusCode, body)
	}
	after, _ := os.ReadFile(h.files.Config)
	if removed, added := linediff.Changed(ownerConfig, string(after)); len(removed) != 0 || strings.Join(added, "|") != "lan = true" {
		t.Errorf("config.toml: removed %q, added %q", removed, added)
	}

	r = rpcCall[settingsView](t, owner, "settings.set", m("values", m("server.lan", false)))
	if r.LANURL != "" {
		t.Errorf("after lan off: %+v", r)
	}
	// A connection left open gets nothing more; a new one is refused.
	if resp, err := insecure.Get(res["view_url"]); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("a LAN connection left open: %d after the LAN was turned off", resp.StatusCode)
		}
	}
	fresh := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}}
	if resp, err := fresh.Get(res["view_url"]); err == nil {
		resp.Body.Close()
		t.Errorf("the LAN address still answers (%d) after the LAN was turned off", resp.StatusCode)
	}
	res = rpcCall[map[string]string](t, alice, "result.save", m("title", "Two", "content", "two", "format", "markdown"))
	if !strings.HasPrefix(res["url"], h.url+"/files/out?") {
		t.Errorf("with the LAN off, result.save url %q", res["url"])
	}
}

// The QR code of a link is drawn by the server for the signed-in owner
// only, and only of an http(s) URL.
func TestQRImage(t *testing.T) {
	t.Parallel()
	svg, err := qrSVG("https://192.168.1.20:8765/files/out?path=a&token=b")
	if err != nil || !strings.HasPrefix(svg, "<svg") || strings.Contains(svg, "192.168") {
		t.Fatalf("qrSVG: %v %q", err, svg)
	}
	h := start(t, "")
	resp, err := http.Get(h.url + "/qr.svg?text=https%3A%2F%2Fexample.org%2F")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a session: %d", resp.StatusCode)
	}
}
