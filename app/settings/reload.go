package settings

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"corral/app/config"
)

// config.toml while Corral runs (docs/owner.md "Agents and people"): [[users]]
// and [[clients]] take effect at once (through the caller's people hook),
// and so do the live settings (settings.go); other changes need a
// restart, which the dashboard says; a file that does not parse or
// validate keeps what runs and shows the same message start-up would.

type reloadState struct {
	mu      sync.Mutex
	problem string   // the validation message of the file as it is, if any
	restart []string // sections changed in the file that need a restart
	at      time.Time
}

// Status answers config.status: whether config.toml as it is now is in
// effect.
type Status struct {
	Path          string     `json:"path"`
	Problem       string     `json:"problem,omitempty"`
	RestartNeeded []string   `json:"restart_needed"`
	ReloadedAt    *time.Time `json:"reloaded_at,omitempty"`
}

// Status says whether config.toml as it is now is in effect.
func (s *Settings) Status() Status {
	s.reload.mu.Lock()
	defer s.reload.mu.Unlock()
	r := Status{Path: s.path(), Problem: s.reload.problem, RestartNeeded: slices.Clone(s.reload.restart)}
	if r.RestartNeeded == nil {
		r.RestartNeeded = []string{}
	}
	if !s.reload.at.IsZero() {
		t := s.reload.at.UTC()
		r.ReloadedAt = &t
	}
	return r
}

// Reload applies config.toml as read again: cfg is its new content, or
// loadErr says why it could not be used (the message start-up gives).
// The live settings are applied; people applies its [[users]] and
// [[clients]] (an error it returns is the problem config.status shows,
// and what runs stays as it was). It returns the message recorded, or
// the problem.
func (s *Settings) Reload(ctx context.Context, cfg *config.Config, loadErr error, people func(*config.Config) error) string {
	s.reload.mu.Lock()
	defer s.reload.mu.Unlock()
	s.reload.at = s.c.Clock()
	if loadErr != nil {
		s.reload.problem = loadErr.Error() + " — Corral keeps running with the settings it had."
		return s.reload.problem
	}
	var restart []string
	// Settings the running daemon can change are applied (settings.go);
	// what runs is then compared with the file.
	var live []string
	for _, d := range Defs {
		live = append(live, d.Key)
	}
	if _, err := s.applyLive(cfg, live); err != nil {
		s.c.Logger.Warn("config.toml: a setting could not be applied", "err", err)
	}
	run := s.Running()
	for _, sec := range []struct {
		name     string
		old, new any
	}{
		{"server", run.Server, cfg.Server}, {"sandbox", run.Sandbox, cfg.Sandbox}, {"links", run.Links, cfg.Links},
		{"exec", run.Exec, cfg.Exec}, {"audit", run.Audit, cfg.Audit}, {"versions", run.Versions, cfg.Versions},
	} {
		if !reflect.DeepEqual(sec.old, sec.new) {
			restart = append(restart, sec.name)
		}
	}
	s.reload.restart = restart
	// People and agents, by the caller (the server's directory).
	if err := people(cfg); err != nil {
		s.reload.problem = err.Error()
		return s.reload.problem
	}
	s.reload.problem = ""
	msg := "config.toml reloaded: people and agents are in effect"
	if len(restart) > 0 {
		msg += fmt.Sprintf("; changes to %v take effect after a restart", restart)
	}
	s.c.Record(context.WithoutCancel(ctx), "owner", "config.reload", s.path(), msg)
	return msg
}
