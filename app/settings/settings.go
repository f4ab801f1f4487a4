// Package settings is the owner's settings (docs/owner.md "Settings")
// and config.toml read again while Corral runs: Now shows the values a
// home user changes (settings.get), Set writes one or more of them into
// config.toml, editing only their lines (config.SetKey), and applies at
// once those the running daemon can change (the LAN, the question timeout
// and strict mode, the link limits, desktop notifications); the others are
// listed as needing a restart, which Restart asks for (corral.restart).
// Reload takes config.toml as read again (reload.go).
//
// The running Corral is reached only through Config's small hooks
// (Questions, Links, LAN, Record, the restart SetRestart installs), so
// this package builds on no server and no sandbox; app/server registers
// the methods over it.
//
// Guarantees: one Set at a time (read, edit, write, apply); config.toml
// is replaced atomically, keeping its mode, and only after its new text
// parses and validates as start-up would (config.Parse, CheckRoots);
// settings.set is audited before the file changes (pending, then
// completed with what happened), so a kill meanwhile leaves an event
// start-up marks interrupted; a write that fails leaves the file and
// what runs as they were. Restart refuses while config.toml would not
// start Corral.
//
// Not guaranteed: a live setting whose hook fails (the LAN address
// cannot be opened) is saved in config.toml all the same and reported
// as an error; settings other than Defs' live ones take effect only after
// a restart.
package settings

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"corral/app/config"
	"corral/core/audit"
	"corral/core/errs"
)

// Def is one setting of the Settings page.
type Def struct {
	Key   string `json:"key"`   // table.key in config.toml
	Group string `json:"group"` // the page's heading
	Label string `json:"label"`
	Help  string `json:"help"`
	Kind  string `json:"kind"` // bool, duration, int, string, list
	Live  bool   `json:"live"` // applied without a restart
}

// Defs are the settings the page shows, in its order.
var Defs = []Def{
	{"server.lan", "Phones on your network", "Accept paired phones from the LAN", "Turns on an HTTPS address on this computer's network, for phones you pair.", "bool", true},
	{"server.listen", "Phones on your network", "Address on this computer", "Where Corral listens for agents and this dashboard (host:port). The LAN address uses the same port.", "string", false},
	{"server.public_url", "Phones on your network", "Public address", "An address in front of Corral (a reverse proxy) that links should carry; empty: none.", "string", false},
	{"sandbox.approval_timeout", "Questions", "How long a question waits for you", "After this, an unanswered question is denied.", "duration", true},
	{"sandbox.strict", "Questions", "Deny at once when nobody can be asked", "On: with no dashboard, phone or tray open, a question is denied at once. Off: it waits until it times out.", "bool", true},
	{"exec.ask", "Commands", "Ask before each new command", "On: every command an agent runs needs your approval first.", "bool", false},
	{"exec.timeout", "Commands", "Longest a command may run", "A command still running after this is stopped.", "duration", false},
	{"exec.max_memory_mb", "Commands", "Memory of one command (MiB)", "", "int", false},
	{"exec.max_running", "Commands", "Commands at once, all agents", "More wait for a free place.", "int", false},
	{"exec.max_running_per_agent", "Commands", "Commands at once, per agent", "", "int", false},
	{"exec.max_connections", "Network for commands", "Connections open at once, per command", "", "int", false},
	{"exec.max_upload_mb", "Network for commands", "Most a command may send out (MiB)", "", "int", false},
	{"exec.allow_private", "Network for commands", "Addresses on this computer or your LAN commands may reach", "host:port, one per line, e.g. 192.168.1.20:8123.", "list", false},
	{"versions.enabled", "Undo", "Keep versions of what agents change", "", "bool", false},
	{"versions.retention", "Undo", "How long a version is kept", "", "duration", false},
	{"versions.max_size_mb", "Undo", "Most all versions may take (MiB)", "0: 5 GiB or a tenth of the free space, whichever is smaller.", "int", false},
	{"links.expiry", "Links", "How long a new link works", "", "duration", true},
	{"links.max_expiry", "Links", "The longest a link may be asked to work", "", "duration", true},
	{"links.save_result_max_kb", "Links", "Largest result page (KiB)", "", "int", true},
	{"audit.retention", "Activity log", "How long the log is kept", "", "duration", false},
	{"desktop.notifications", "Notifications", "Desktop notifications for questions", "The tray app shows a notification with each question, where the desktop has a notification service.", "bool", true},
}

// Value is the value of a setting (a key of Defs) in effect now, as
// config.Value gives it; nil for another key.
func (s *Settings) Value(key string) any {
	if _, ok := ByKey(key); !ok {
		return nil
	}
	v, _ := s.Running().Value(key)
	return v
}

// ByKey is the setting of Defs with key.
func ByKey(key string) (Def, bool) {
	i := slices.IndexFunc(Defs, func(d Def) bool { return d.Key == key })
	if i < 0 {
		return Def{}, false
	}
	return Defs[i], true
}

// Questions is what the question settings change of the running Corral
// (core/policy's *Policy).
type Questions interface {
	SetAsking(timeout time.Duration, strict bool)
}

// LinkLimits is what the link settings change of the running Corral
// (core/links' *Service).
type LinkLimits interface {
	SetLinkLimits(expiry, maxExpiry time.Duration, saveResultMaxKB int)
}

// RecordFunc writes one of the owner's own actions in the audit log
// (corral.restart, config.reload), as the server records its own: the
// answer waits for it.
type RecordFunc func(ctx context.Context, who, op, target, detail string) error

// Config is what New builds the settings from: the config Corral started
// with and the hooks that apply a setting to the running Corral.
type Config struct {
	Config *config.Config // what Corral started with; Config.Path is config.toml
	// Files are Corral's own files: a changed config.toml's roots are
	// checked against them as start-up does. Zero: not checked.
	Files config.Files
	Home  string // the owner's home folder ("~" in config.toml)
	// Audit records settings.set: pending while config.toml is written,
	// then completed, when it is an audit.Completer.
	Audit  audit.Sink
	Record RecordFunc // required
	// The live hooks. A nil one is skipped: its settings count as in
	// effect with nothing to change (a Corral without that part).
	Questions Questions           // sandbox.approval_timeout, sandbox.strict
	Links     LinkLimits          // links.expiry, links.max_expiry, links.save_result_max_kb
	LAN       func(on bool) error // server.lan: open or close the LAN listener
	Clock     func() time.Time    // nil: time.Now
	Logger    *slog.Logger        // nil: slog.Default()
}

// Settings are the owner's settings of one running Corral.
type Settings struct {
	c     Config
	write sync.Mutex // one Set at a time: read, edit, write, apply
	mu    sync.Mutex
	live  map[string]any // keys applied live since start, their values
	// restart is what the owner asks corral.restart to do; nil: this
	// Corral cannot restart itself (tests, a server without a daemon).
	restart func()
	reload  reloadState // config.toml picked up while running (reload.go)
}

// New returns the settings of a Corral started with c.Config.
func New(c Config) *Settings {
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return &Settings{c: c}
}

// SetRestart installs what corral.restart calls: the daemon closes
// gracefully and starts again with the same program, arguments and
// environment (app/serve.go).
func (s *Settings) SetRestart(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restart = f
}

// Running is the configuration in effect: the one Corral started with
// and the settings applied since.
func (s *Settings) Running() *config.Config {
	c := *s.c.Config
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.live {
		setValue(&c, k, v)
	}
	return &c
}

// setValue writes v (as config.Value gives it) into c's field for key.
func setValue(c *config.Config, key string, v any) {
	table, name, _ := strings.Cut(key, ".")
	sec := reflect.ValueOf(c).Elem()
	for i := range sec.NumField() {
		if sec.Type().Field(i).Tag.Get("toml") != table {
			continue
		}
		t := sec.Field(i)
		for j := range t.NumField() {
			if t.Type().Field(j).Tag.Get("toml") != name {
				continue
			}
			f := t.Field(j)
			if d, ok := v.(time.Duration); ok {
				f.Set(reflect.ValueOf(config.Duration(d)))
			} else {
				f.Set(reflect.ValueOf(v))
			}
		}
	}
}

// Item is one setting as settings.get shows it.
type Item struct {
	Def
	Value any `json:"value"`
	// Saved is what config.toml holds when it differs from what runs:
	// the setting waits for a restart.
	Saved         any  `json:"saved,omitempty"`
	RestartNeeded bool `json:"restart_needed"`
}

// Result answers settings.get and settings.set.
type Result struct {
	Applied       []string `json:"applied,omitempty"` // settings.set: the keys in effect at once
	CanRestart    bool     `json:"can_restart"`
	LANURL        string   `json:"lan_url,omitempty"`
	Path          string   `json:"path"`
	Problem       string   `json:"problem,omitempty"` // config.toml as it is cannot be used
	RestartNeeded []string `json:"restart_needed"`
	Settings      []Item   `json:"settings"`
}

// wireValue is v as the page shows and sends it.
func wireValue(v any) any {
	switch x := v.(type) {
	case time.Duration:
		return formatDuration(x)
	case []string:
		if x == nil {
			return []string{}
		}
	}
	return v
}

// formatDuration writes d as config.toml would ("2m", "24h", "30d").
func formatDuration(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	s := d.String() // "2h0m0s", "5m0s", "1m30s", "500ms"
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// path is config.toml's.
func (s *Settings) path() string { return s.c.Config.Path }

// savedConfig reads and validates config.toml as it is on disk.
func (s *Settings) savedConfig() ([]byte, *config.Config, error) {
	data, err := os.ReadFile(s.path())
	if err != nil {
		return nil, nil, errs.Wrap(err, errs.Unavailable, "", "Corral cannot read its config file %s.", s.path())
	}
	c, err := s.parseConfig(data)
	return data, c, err
}

// parseConfig validates config text as start-up does.
func (s *Settings) parseConfig(data []byte) (*config.Config, error) {
	c, err := config.Parse(s.path(), data, s.c.Home, s.c.Config.Sandbox.Base)
	if err == nil && s.c.Files.Config != "" {
		err = c.CheckRoots(s.c.Files)
	}
	return c, err
}

// Now is every setting with the value in effect and, where config.toml
// holds another, that one (waiting for a restart). LANURL is left for
// the caller, which knows the LAN listener.
func (s *Settings) Now() Result {
	run := s.Running()
	_, saved, err := s.savedConfig()
	r := Result{Path: s.path(), RestartNeeded: []string{}}
	if err != nil {
		r.Problem = err.Error()
		saved = nil
	}
	for _, d := range Defs {
		v, _ := run.Value(d.Key)
		o := Item{Def: d, Value: wireValue(v)}
		if saved != nil {
			if sv, _ := saved.Value(d.Key); !reflect.DeepEqual(normal(sv), normal(v)) {
				o.Saved, o.RestartNeeded = wireValue(sv), true
				r.RestartNeeded = append(r.RestartNeeded, d.Key)
			}
		}
		r.Settings = append(r.Settings, o)
	}
	s.mu.Lock()
	r.CanRestart = s.restart != nil
	s.mu.Unlock()
	return r
}

// normal makes an empty list and none compare equal.
func normal(v any) any {
	if l, ok := v.([]string); ok && len(l) == 0 {
		return []string(nil)
	}
	return v
}

// valueOf checks a value sent for d and returns it as config.toml
// writes it.
func valueOf(d Def, raw any) (any, error) {
	bad := func() error {
		return errs.New(errs.InvalidParams, "", "%s: %v is not a %s.", d.Key, raw, map[string]string{
			"bool": "yes or no", "duration": "duration such as \"90s\", \"5m\" or \"7d\"", "int": "whole number", "string": "text", "list": "list of texts"}[d.Kind])
	}
	switch d.Kind {
	case "bool":
		if b, ok := raw.(bool); ok {
			return b, nil
		}
	case "duration":
		if str, ok := raw.(string); ok && len(str) <= 32 {
			return strings.TrimSpace(str), nil
		}
	case "int":
		switch n := raw.(type) {
		case float64:
			if n == float64(int64(n)) && n >= -1<<53 && n <= 1<<53 {
				return int64(n), nil
			}
		case string:
			if i, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64); err == nil {
				return i, nil
			}
		}
	case "string":
		if str, ok := raw.(string); ok && len(str) <= 2048 && !strings.ContainsAny(str, "\r\n") {
			return strings.TrimSpace(str), nil
		}
	case "list":
		l, ok := raw.([]any)
		if !ok || len(l) > 256 {
			return nil, bad()
		}
		out := []string{}
		for _, e := range l {
			str, ok := e.(string)
			if !ok || len(str) > 256 || strings.ContainsAny(str, "\r\n") {
				return nil, bad()
			}
			if str = strings.TrimSpace(str); str != "" {
				out = append(out, str)
			}
		}
		return out, nil
	}
	return nil, bad()
}

// Set writes values (config.toml keys, as settings.set takes them) into
// config.toml and applies at once those the running Corral can; it
// returns those. by names who asked, for the audit log. The tray turns
// the LAN on through it.
func (s *Settings) Set(ctx context.Context, by string, values map[string]any) ([]string, error) {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s.write.Lock()
	defer s.write.Unlock()
	path := s.path()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errs.Wrap(err, errs.Unavailable, "", "Corral cannot read its config file %s.", path)
	}
	text := data
	var changes []string
	for _, k := range keys {
		d, ok := ByKey(k)
		if !ok {
			return nil, errs.New(errs.InvalidParams, "", "%q is not a setting the Settings page changes.", k)
		}
		v, err := valueOf(d, values[k])
		if err != nil {
			return nil, err
		}
		lit, err := config.Literal(v)
		if err != nil {
			return nil, errs.Wrap(err, errs.InvalidParams, "", "%s: %v cannot be written in config.toml.", k, v)
		}
		table, key, _ := strings.Cut(k, ".")
		if text, err = config.SetKey(text, table, key, lit); err != nil {
			return nil, errs.Wrap(err, errs.Conflict, "", "%s: %v", path, err)
		}
		changes = append(changes, k+" = "+lit)
	}
	cfg, err := s.parseConfig(text)
	if err != nil {
		// The message start-up would give: file, line and key.
		return nil, errs.Wrap(err, errs.InvalidParams, "", "%s", err.Error())
	}
	// Audited before anything changes: pending while the file is
	// written, so that a kill meanwhile leaves an event start-up marks
	// interrupted (sandbox.Recover), and completed with what happened.
	detail := strings.Join(changes, "; ")
	c, _ := s.c.Audit.(audit.Completer)
	ev := audit.Event{Time: s.c.Clock().UTC(), Client: by, Op: "settings.set", Target: path, Detail: detail,
		Decision: audit.Allow, DecidedBy: audit.ByOwner}
	if c != nil {
		ev.Detail = detail + "; " + audit.Pending
	}
	id, err := s.c.Audit.Record(context.WithoutCancel(ctx), ev)
	if err != nil {
		s.c.Logger.Error("audit record failed", "op", ev.Op, "err", err)
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not write its audit log, so it withholds the result of this action.")
	}
	ev.ID, ev.Detail = id, detail
	var werr error
	if !slices.Equal(text, data) {
		if werr = writeConfig(path, text); werr != nil {
			werr = errs.Wrap(werr, errs.IO, "", "Corral could not write %s (%v); nothing was changed.", path, causeOf(werr))
			ev.Decision, ev.Error = audit.Error, string(errs.IO)+": "+werr.Error()
		}
	}
	if c != nil {
		if err := c.Complete(context.WithoutCancel(ctx), ev); err != nil && werr == nil {
			s.c.Logger.Error("audit complete failed", "op", ev.Op, "err", err)
			werr = errs.Wrap(err, errs.IO, "", "%s is saved, but Corral could not complete its audit event, so it does not apply the change until it restarts.", path)
		}
	}
	if werr != nil {
		return nil, werr
	}
	applied, err := s.applyLive(cfg, keys)
	if applied == nil {
		applied = []string{}
	}
	return applied, err
}

// causeOf is err's innermost cause, without the path an *os.PathError
// or *os.LinkError repeats: "no space left on device".
func causeOf(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// writeConfig replaces path by data atomically (a temporary file synced,
// renamed, the folder synced), keeping the file's mode.
func writeConfig(path string, data []byte) error {
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := config.WriteAtomic(path, data, mode, true); err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// applyLive puts in effect the live settings among keys whose value in
// cfg differs from what runs, and returns them.
func (s *Settings) applyLive(cfg *config.Config, keys []string) ([]string, error) {
	run := s.Running()
	var applied []string
	var errsOut []error
	for _, k := range keys {
		d, ok := ByKey(k)
		if !ok || !d.Live {
			continue
		}
		nv, _ := cfg.Value(k)
		if ov, _ := run.Value(k); reflect.DeepEqual(ov, nv) {
			continue
		}
		if err := s.applyOne(k, nv, cfg); err != nil {
			errsOut = append(errsOut, err)
			continue
		}
		s.mu.Lock()
		if s.live == nil {
			s.live = map[string]any{}
		}
		s.live[k] = nv
		s.mu.Unlock()
		applied = append(applied, k)
	}
	return applied, errors.Join(errsOut...)
}

// applyOne puts one live setting in effect.
func (s *Settings) applyOne(key string, v any, cfg *config.Config) error {
	switch key {
	case "server.lan":
		if s.c.LAN != nil {
			return s.c.LAN(v.(bool))
		}
	case "sandbox.approval_timeout", "sandbox.strict":
		if s.c.Questions != nil {
			s.c.Questions.SetAsking(cfg.Sandbox.ApprovalTimeout.D(), cfg.Sandbox.Strict)
		}
	case "links.expiry", "links.max_expiry", "links.save_result_max_kb":
		if s.c.Links != nil {
			s.c.Links.SetLinkLimits(cfg.Links.Expiry.D(), cfg.Links.MaxExpiry.D(), cfg.Links.SaveResultMaxKB)
		}
	}
	return nil
}

// Restart answers corral.restart for by: after the answer, the daemon
// closes gracefully (calls under way finish) and starts again, through
// what SetRestart installed. It refuses when none was, or when
// config.toml would not start Corral; it is audited before it starts.
func (s *Settings) Restart(ctx context.Context, by string) error {
	s.mu.Lock()
	f := s.restart
	s.mu.Unlock()
	if f == nil {
		return errs.New(errs.Unavailable, "", "This Corral cannot restart itself; stop it and start it again.")
	}
	// A file that would not start keeps this Corral running.
	if _, _, err := s.savedConfig(); err != nil {
		return errs.Wrap(err, errs.Conflict, "", "Corral is not restarting: %s would not start it (%v). Correct it first.", s.path(), err)
	}
	if err := s.c.Record(ctx, by, "corral.restart", s.path(), "restarting to apply settings"); err != nil {
		return err
	}
	go f() // the shutdown drains this call, so its answer is sent
	return nil
}

// Line is one setting as the tray's Settings window shows it.
type Line struct {
	Label, Value string
	// RestartNeeded: config.toml holds another value, in effect after a
	// restart (Value is the one in effect now).
	RestartNeeded bool
}

// Lines are the settings of the Settings page, in its order, with the
// values in effect, written for reading.
func (s *Settings) Lines() []Line {
	r := s.Now()
	out := make([]Line, 0, len(r.Settings))
	for _, st := range r.Settings {
		v := ""
		switch x := st.Value.(type) {
		case bool:
			v = map[bool]string{true: "on", false: "off"}[x]
		case []string:
			v = strings.Join(x, ", ")
			if v == "" {
				v = "none"
			}
		case string:
			v = x
			if v == "" {
				v = "(none)"
			}
		default:
			v = fmt.Sprint(x)
		}
		out = append(out, Line{Label: st.Label, Value: v, RestartNeeded: st.RestartNeeded})
	}
	return out
}
