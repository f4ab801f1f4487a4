package settings

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/app/config"
	"corral/core/audit"
	"corral/core/errs"
	"corral/core/testkit/errkind"
)

// The settings over a real config.toml in a temporary folder, with the
// running Corral's hooks recorded: what the end-to-end tests in
// app/server (settings_test.go, dashboard_settings_test.go) check
// through a real server, here checked of the logic alone.

const ownerText = "# My Corral: do not lose this comment.\n" + `
[sandbox]
# approval_timeout = "2m"      # how long a question waits
strict = true                  # deny when nobody can be asked

[links]   # links I hand out
expiry = "24h"
`

// events is an audit log in memory that completes events as the store
// does (audit.Completer).
type events struct {
	mu  sync.Mutex
	all []audit.Event
	err error // Record fails with it
}

func (e *events) Record(_ context.Context, ev audit.Event) (int64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return 0, e.err
	}
	e.all = append(e.all, ev)
	return int64(len(e.all)), nil
}

func (e *events) Complete(_ context.Context, ev audit.Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all[ev.ID-1] = ev
	return nil
}

func (e *events) list() []audit.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.all)
}

// hooks records what the settings applied to the running Corral.
type hooks struct {
	mu       sync.Mutex
	timeout  time.Duration
	strict   bool
	expiry   time.Duration
	lan      []bool
	lanErr   error
	recorded []string // op target detail
}

func (h *hooks) SetAsking(timeout time.Duration, strict bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.timeout, h.strict = timeout, strict
}

func (h *hooks) SetLinkLimits(expiry, maxExpiry time.Duration, saveResultMaxKB int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expiry = expiry
}

func (h *hooks) setLAN(on bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lan = append(h.lan, on)
	return h.lanErr
}

func (h *hooks) record(_ context.Context, who, op, target, detail string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recorded = append(h.recorded, who+" "+op+" "+detail)
	return nil
}

// fixture is one Corral's settings over config.toml holding text.
type fixture struct {
	s    *Settings
	path string
	log  *events
	h    *hooks
}

func newFixture(t *testing.T, text string) fixture {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(path, []byte(text), dir, filepath.Join(dir, "sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{path: path, log: &events{}, h: &hooks{}}
	f.s = New(Config{Config: cfg, Home: dir, Audit: f.log, Record: f.h.record,
		Questions: f.h, Links: f.h, LAN: f.h.setLAN})
	return f
}

func (f fixture) file(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSetEditsItsLinesAndAppliesLive: Set edits only the lines of its
// keys (the owner's comments stay), applies the live ones through the
// hooks, leaves the others for a restart (Now says which), keeps the
// file's mode, and audits pending then completed.
func TestSetEditsItsLinesAndAppliesLive(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ownerText)
	applied, err := f.s.Set(context.Background(), "owner", map[string]any{
		"sandbox.approval_timeout": "5m", "links.expiry": "2h", "exec.timeout": "10m", "sandbox.strict": false,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"links.expiry", "sandbox.approval_timeout", "sandbox.strict"}; !slices.Equal(applied, want) {
		t.Errorf("applied %v, want %v", applied, want)
	}
	text := f.file(t)
	for _, keep := range []string{"# My Corral: do not lose this comment.", "# approval_timeout = \"2m\"", "[links]   # links I hand out"} {
		if !strings.Contains(text, keep) {
			t.Errorf("config.toml lost %q:\n%s", keep, text)
		}
	}
	for _, line := range []string{`approval_timeout = "5m"`, `expiry = "2h"`, `timeout = "10m"`, "strict = false"} {
		if !strings.Contains(text, line) {
			t.Errorf("config.toml has no %q:\n%s", line, text)
		}
	}
	if fi, _ := os.Stat(f.path); fi.Mode().Perm() != 0o640 {
		t.Errorf("config.toml mode %v, want 0640 kept", fi.Mode().Perm())
	}
	if f.h.timeout != 5*time.Minute || f.h.strict || f.h.expiry != 2*time.Hour {
		t.Errorf("hooks got timeout %v strict %v expiry %v", f.h.timeout, f.h.strict, f.h.expiry)
	}
	if v := f.s.Value("sandbox.approval_timeout"); v != 5*time.Minute {
		t.Errorf("Value(approval_timeout) = %v, want 5m in effect", v)
	}
	if v := f.s.Value("exec.timeout"); v == 10*time.Minute {
		t.Errorf("exec.timeout in effect at once; it needs a restart")
	}
	if v := f.s.Value("no.such"); v != nil {
		t.Errorf("Value of no setting = %v", v)
	}
	now := f.s.Now()
	if !slices.Equal(now.RestartNeeded, []string{"exec.timeout"}) || now.Problem != "" {
		t.Errorf("Now: restart %v, problem %q; want exec.timeout alone", now.RestartNeeded, now.Problem)
	}
	for _, it := range now.Settings {
		if it.Key == "exec.timeout" && (it.Saved != "10m" || !it.RestartNeeded) {
			t.Errorf("exec.timeout shown as %+v", it)
		}
	}
	evs := f.log.list()
	if len(evs) != 1 || evs[0].Op != "settings.set" || evs[0].Client != "owner" || strings.HasSuffix(evs[0].Detail, audit.Pending) ||
		!strings.Contains(evs[0].Detail, `exec.timeout = "10m"`) {
		t.Errorf("audit events %+v, want one completed settings.set", evs)
	}
}

// TestSetRefusesBeforeAnythingChanges: a value of the wrong kind, a key
// that is no setting, or a value the config would refuse at start-up
// leaves the file, the log and what runs as they were.
func TestSetRefusesBeforeAnythingChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ownerText)
	for _, values := range []map[string]any{
		{"sandbox.strict": "yes"},
		{"sandbox.approval_timeout": 5},
		{"exec.max_running": 1.5},
		{"server.listen": "a\nb"},
		{"exec.allow_private": []any{"ok:1", 2}},
		{"sandbox.base": "/tmp"},
		{"sandbox.approval_timeout": "soon"},
	} {
		_, err := f.s.Set(context.Background(), "owner", values)
		if err == nil {
			t.Errorf("Set(%v) succeeded", values)
			continue
		}
		errkind.Want(t, err, errs.InvalidParams)
	}
	if f.file(t) != ownerText || len(f.log.list()) != 0 || f.h.timeout != 0 {
		t.Errorf("a refused Set changed something: file %v, events %d, hooks %+v", f.file(t) != ownerText, len(f.log.list()), f.h)
	}
}

// TestSetWithoutAuditChangesNothing: when the audit log cannot record
// settings.set, config.toml is not written.
func TestSetWithoutAuditChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ownerText)
	f.log.err = errors.New("disk full")
	_, err := f.s.Set(context.Background(), "owner", map[string]any{"links.expiry": "1h"})
	errkind.Want(t, err, errs.IO)
	if f.file(t) != ownerText || f.h.expiry != 0 {
		t.Errorf("config.toml or links changed without an audit event")
	}
}

// TestLANHookFailure: a LAN that cannot open is reported, the file keeps
// the new value (a restart will try again), and the setting is not
// counted as in effect.
func TestLANHookFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ownerText)
	f.h.lanErr = errs.New(errs.Unavailable, "", "no LAN here")
	applied, err := f.s.Set(context.Background(), "tray", map[string]any{"server.lan": true})
	errkind.Want(t, err, errs.Unavailable)
	if len(applied) != 0 || !strings.Contains(f.file(t), "lan = true") || f.s.Value("server.lan") != false {
		t.Errorf("applied %v, file %q, in effect %v", applied, f.file(t), f.s.Value("server.lan"))
	}
	f.h.lanErr = nil
	if applied, err := f.s.Set(context.Background(), "tray", map[string]any{"server.lan": true}); err != nil || !slices.Equal(applied, []string{"server.lan"}) {
		t.Errorf("second try: %v %v", applied, err)
	}
	if !slices.Equal(f.h.lan, []bool{true, true}) {
		t.Errorf("LAN hook called with %v", f.h.lan)
	}
}

// TestRestart: refused without a way to restart and while config.toml
// would not start Corral; otherwise audited, then the restart runs.
func TestRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ownerText)
	errkind.Want(t, f.s.Restart(context.Background(), "owner"), errs.Unavailable)
	if f.s.Now().CanRestart {
		t.Error("CanRestart without SetRestart")
	}
	restarted := make(chan struct{})
	f.s.SetRestart(func() { close(restarted) })
	os.WriteFile(f.path, []byte("[sandbox]\nstrict = maybe\n"), 0o600)
	errkind.Want(t, f.s.Restart(context.Background(), "owner"), errs.Conflict)
	if now := f.s.Now(); now.Problem == "" || !now.CanRestart {
		t.Errorf("Now with a broken file: %+v", now)
	}
	os.WriteFile(f.path, []byte(ownerText), 0o600)
	if err := f.s.Restart(context.Background(), "owner"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-restarted:
	case <-time.After(10 * time.Second):
		t.Fatal("the restart never ran")
	}
	if want := []string{"owner corral.restart restarting to apply settings"}; !slices.Equal(f.h.recorded, want) {
		t.Errorf("recorded %q, want %q", f.h.recorded, want)
	}
}

// TestReload: a file that does not load is a problem and nothing else; a
// people hook that refuses is a problem too; otherwise the live settings
// apply, the sections changed otherwise need a restart, and the reload
// is recorded.
func TestReload(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ownerText)
	ctx := context.Background()
	msg := f.s.Reload(ctx, nil, errors.New("config.toml:3: bad"), nil)
	if st := f.s.Status(); st.Problem != msg || !strings.Contains(msg, "keeps running") || st.ReloadedAt == nil {
		t.Errorf("Status after a bad file: %+v (message %q)", st, msg)
	}
	text := ownerText + "\n[exec]\ntimeout = \"1m\"\n"
	text = strings.Replace(text, "expiry = \"24h\"", "expiry = \"3h\"", 1)
	cfg, err := config.Parse(f.path, []byte(text), filepath.Dir(f.path), filepath.Join(filepath.Dir(f.path), "sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	refuse := func(*config.Config) error { return errors.New("agent x: no such person") }
	if msg := f.s.Reload(ctx, cfg, nil, refuse); msg != "agent x: no such person" || f.s.Status().Problem != msg {
		t.Errorf("a refused reload: %q, status %+v", msg, f.s.Status())
	}
	var saw *config.Config
	msg = f.s.Reload(ctx, cfg, nil, func(c *config.Config) error { saw = c; return nil })
	st := f.s.Status()
	if saw != cfg || st.Problem != "" || !slices.Equal(st.RestartNeeded, []string{"exec"}) || f.h.expiry != 3*time.Hour {
		t.Errorf("reload: people saw %v, status %+v, link expiry %v", saw != nil, st, f.h.expiry)
	}
	if !strings.Contains(msg, "[exec]") || len(f.h.recorded) == 0 || !strings.Contains(f.h.recorded[len(f.h.recorded)-1], "config.reload") {
		t.Errorf("message %q, recorded %q", msg, f.h.recorded)
	}
}

// TestLines are the tray's words for each value.
func TestLines(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ownerText)
	lines := f.s.Lines()
	if len(lines) != len(Defs) {
		t.Fatalf("%d lines for %d settings", len(lines), len(Defs))
	}
	byLabel := map[string]string{}
	for _, l := range lines {
		byLabel[l.Label] = l.Value
	}
	for label, want := range map[string]string{
		"Deny at once when nobody can be asked":                     "on",
		"Addresses on this computer or your LAN commands may reach": "none",
		"Public address":            "(none)",
		"How long a new link works": "1d",
	} {
		if byLabel[label] != want {
			t.Errorf("%s: %q, want %q", label, byLabel[label], want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{2 * time.Minute: "2m", 90 * time.Second: "1m30s", 2 * time.Hour: "2h",
		90 * time.Minute: "1h30m", 48 * time.Hour: "2d", 500 * time.Millisecond: "500ms", 2160 * time.Hour: "90d", 7 * time.Second: "7s"} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
