package server

import (
	"context"
	"fmt"

	"corral/app/config"
	"corral/app/rpc"
	"corral/app/settings"
	"corral/core/errs"
)

// The owner's settings and config.toml read again while Corral runs live
// in app/settings; this is their adapter: the methods settings.get,
// settings.set, corral.restart and config.status, the hooks the settings
// apply the running server through (the LAN listener, the policy's
// questions, the link limits), and the people and agents of a reloaded
// config.toml (the directory is the server's).

// newSettings builds the settings of s, started with o.
func (s *Server) newSettings(o Config) *settings.Settings {
	c := settings.Config{
		Config: o.Config, Files: o.Files, Home: o.Home, Audit: o.Audit, Record: s.record,
		LAN: s.setLAN, Clock: s.now, Logger: s.log,
	}
	if o.Sandbox != nil {
		if p := o.Sandbox.Policy(); p != nil {
			c.Questions = p
		}
	}
	if o.Links != nil {
		c.Links = o.Links
	}
	return settings.New(c)
}

// settingsArea answers settings.get, settings.set and corral.restart.
type settingsArea struct {
	set    *settings.Settings
	lanURL func() string // the LAN address while it is open (Server.LANURL)
}

func (s *Server) settingsArea() settingsArea {
	return settingsArea{set: s.settings, lanURL: s.LANURL}
}

func (x settingsArea) methods(add func(name string, m method)) {
	add("settings.get", method{owner: true, fn: x.get})
	add("settings.set", method{owner: true, fn: x.setValues})
	add("corral.restart", method{owner: true, fn: x.restart})
}

// now is settings.get's answer.
func (x settingsArea) now() settings.Result {
	r := x.set.Now()
	r.LANURL = x.lanURL()
	return r
}

func (x settingsArea) get(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	return x.now(), nil
}

func (x settingsArea) setValues(ctx context.Context, c *call) (any, error) {
	var a struct {
		Values map[string]any `json:"values" rpc:"required"`
	}
	if err := rpc.DecodeParams(c.params, &a); err != nil {
		return nil, err
	}
	if len(a.Values) == 0 || len(a.Values) > len(settings.Defs) {
		return nil, errs.New(errs.InvalidParams, "", "Give the settings to change in values, as {\"key\": value}.")
	}
	applied, err := x.set.Set(ctx, c.caller.Client, a.Values)
	if err != nil {
		return nil, err
	}
	r := x.now()
	r.Applied = applied
	return r, nil
}

// restart answers corral.restart: after the answer, the daemon closes
// gracefully (calls under way finish) and starts again.
func (x settingsArea) restart(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	if err := x.set.Restart(ctx, c.caller.Client); err != nil {
		return nil, err
	}
	return restartResult{Restarting: true}, nil
}

type restartResult struct {
	Restarting bool `json:"restarting"`
}

// configStatusResult answers config.status.
type configStatusResult = settings.Status

// configArea answers config.status from what the server says of
// config.toml (Server.ConfigStatus).
type configArea struct {
	status func() configStatusResult
}

func (x configArea) methods(add func(name string, m method)) {
	add("config.status", method{owner: true, fn: x.statusNow})
}

func (x configArea) statusNow(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	return x.status(), nil
}

// Setting is the value of a setting (a key of settings.Defs) in effect
// now, as config.Value gives it; nil for another key.
func (s *Server) Setting(key string) any { return s.settings.Value(key) }

// SetSettings writes values (config.toml keys, as settings.set takes
// them) into config.toml and applies at once those the running Corral
// can; it returns those. by names who asked, for the audit log. The tray
// turns the LAN on through it.
func (s *Server) SetSettings(ctx context.Context, by string, values map[string]any) ([]string, error) {
	return s.settings.Set(ctx, by, values)
}

// SettingLine is one setting as the tray's Settings window shows it.
type SettingLine = settings.Line

// SettingLines are the settings of the Settings page, in its order, with
// the values in effect, written for reading.
func (s *Server) SettingLines() []SettingLine { return s.settings.Lines() }

// SetRestart installs what corral.restart calls: the daemon closes
// gracefully and starts again with the same program, arguments and
// environment (app/serve.go).
func (s *Server) SetRestart(f func()) { s.settings.SetRestart(f) }

// ConfigStatus says whether config.toml as it is now is in effect.
func (s *Server) ConfigStatus() configStatusResult { return s.settings.Status() }

// ReloadConfig applies config.toml as read again: cfg is its new content,
// or loadErr says why it could not be used (the message start-up gives).
// People and agents change at once; their connections whose key or
// settings went away are closed. It returns the message recorded.
func (s *Server) ReloadConfig(ctx context.Context, cfg *config.Config, loadErr error) string {
	return s.settings.Reload(ctx, cfg, loadErr, s.reloadPeople)
}

// reloadPeople puts in effect the [[users]] and [[clients]] of a
// reloaded config.toml: new people get their folders, the folders of
// those gone stay, and agents whose key or settings went away lose their
// commands and connections. An error leaves the directory as it was.
func (s *Server) reloadPeople(cfg *config.Config) error {
	if err := s.dir.Reload(cfg); err != nil {
		return fmt.Errorf("%s: %v — Corral keeps running with the agents it had.", cfg.Path, err)
	}
	return nil
}

// setLAN opens or closes the LAN listener (server.lan, set live).
func (s *Server) setLAN(on bool) error {
	if on {
		return s.StartLAN()
	}
	s.StopLAN()
	return nil
}

// StartLAN opens the LAN listener while Corral runs ([server] lan turned
// on): it is served like the others from then on.
func (s *Server) StartLAN() error {
	s.lanMu.Lock()
	defer s.lanMu.Unlock()
	s.mu.Lock()
	on := s.lanLn != nil
	s.mu.Unlock()
	if on {
		return nil
	}
	ln, err := s.ListenLAN()
	if err != nil {
		return errs.Wrap(err, errs.Unavailable, "", "Corral could not open its LAN address: %v", err)
	}
	go s.http.Serve(ln)
	return nil
}

// StopLAN closes the LAN listener and ends paired devices' connections:
// the LAN no longer reaches Corral.
func (s *Server) StopLAN() {
	s.lanMu.Lock()
	defer s.lanMu.Unlock()
	s.mu.Lock()
	ln := s.lanLn
	s.lanLn, s.lanURL = nil, ""
	s.mu.Unlock()
	s.lanOn.Store(false)
	if ln != nil {
		ln.Close()
	}
	s.finishConns(func(c *conn) bool { return c.deviceID != "" })
}
