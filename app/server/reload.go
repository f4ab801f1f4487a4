package server

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"corral/app/config"
	"corral/app/rpc"
)

// config.toml while Corral runs (docs/owner.md "Agents and people"): [[users]]
// and [[clients]] take effect at once, and so do the settings settings.go
// applies live; other changes need a restart, which the dashboard says; a
// file that does not parse or validate keeps what runs and shows the same
// message start-up would.

type reloadState struct {
	mu      sync.Mutex
	problem string   // the validation message of the file as it is, if any
	restart []string // sections changed in the file that need a restart
	at      time.Time
}

type configStatusResult struct {
	Path          string     `json:"path"`
	Problem       string     `json:"problem,omitempty"`
	RestartNeeded []string   `json:"restart_needed"`
	ReloadedAt    *time.Time `json:"reloaded_at,omitempty"`
}

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

// ConfigStatus says whether config.toml as it is now is in effect.
func (s *Server) ConfigStatus() configStatusResult {
	s.reload.mu.Lock()
	defer s.reload.mu.Unlock()
	r := configStatusResult{Path: s.cfg.Path, Problem: s.reload.problem, RestartNeeded: slices.Clone(s.reload.restart)}
	if r.RestartNeeded == nil {
		r.RestartNeeded = []string{}
	}
	if !s.reload.at.IsZero() {
		t := s.reload.at.UTC()
		r.ReloadedAt = &t
	}
	return r
}

// ReloadConfig applies config.toml as read again: cfg is its new content,
// or loadErr says why it could not be used (the message start-up gives).
// People and agents change at once; their connections whose key or
// settings went away are closed. It returns the message recorded.
func (s *Server) ReloadConfig(ctx context.Context, cfg *config.Config, loadErr error) string {
	s.reload.mu.Lock()
	defer s.reload.mu.Unlock()
	s.reload.at = s.now()
	if loadErr != nil {
		s.reload.problem = loadErr.Error() + " — Corral keeps running with the settings it had."
		return s.reload.problem
	}
	var restart []string
	// Settings the running daemon can change are applied (settings.go);
	// what runs is then compared with the file.
	var live []string
	for _, d := range settingDefs {
		live = append(live, d.Key)
	}
	if _, err := s.applyLive(cfg, live); err != nil {
		s.log.Warn("config.toml: a setting could not be applied", "err", err)
	}
	run := s.running()
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
	// Old config agents' keys and people, to see what went away.
	s.dir.mu.RLock()
	oldKeys := map[string][32]byte{}
	oldPeople := map[string]bool{}
	for n, a := range s.dir.agents {
		if a.fromConfig {
			oldKeys[n] = a.KeySHA256
		}
	}
	for id, p := range s.dir.people {
		if p.fromConfig {
			oldPeople[id] = true
		}
	}
	s.dir.mu.RUnlock()
	if err := s.dir.setConfig(cfg, nil); err != nil {
		s.reload.problem = fmt.Sprintf("%s: %v — Corral keeps running with the agents it had.", cfg.Path, err)
		return s.reload.problem
	}
	s.reload.problem = ""
	for _, u := range cfg.Users {
		if !oldPeople[u.ID] {
			if _, err := s.box.AddUser(u.ID); err != nil {
				s.log.Warn("new user from config.toml", "user", u.ID, "err", err)
			}
		}
		delete(oldPeople, u.ID)
	}
	// Under the directory's lock, as person.remove does: a person.add of
	// the same id since setConfig keeps its folder.
	s.dir.mu.Lock()
	for id := range oldPeople {
		if _, back := s.dir.people[id]; !back {
			s.box.RemoveUser(id) // the folder stays
		}
	}
	s.dir.mu.Unlock()
	for name, h := range oldKeys {
		if now, ok := s.dir.keyOf(name); !ok || now != h {
			s.cmds.StopCommandsOf(name)
			s.hangUpAgent(name)
		}
	}
	msg := "config.toml reloaded: people and agents are in effect"
	if len(restart) > 0 {
		msg += fmt.Sprintf("; changes to %v take effect after a restart", restart)
	}
	s.record(context.WithoutCancel(ctx), "owner", "config.reload", s.cfg.Path, msg)
	return msg
}
