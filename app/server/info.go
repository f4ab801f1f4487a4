package server

import (
	"context"
	"fmt"
	"time"

	"corral/app/sessioninfo"
	"corral/app/wire"
	"corral/core/commands"
	"corral/core/sandbox"
)

// session.info is answered by app/sessioninfo; session.login (a one-time
// dashboard login) is the server's own.

type (
	sessionBox  = sessioninfo.Box
	sessionInfo = sessioninfo.Info
	rootInfo    = sessioninfo.Root
)

// sessionParts are the sandbox and its commands, as session.info reads
// them (sessioninfo.Box).
type sessionParts struct {
	*sandbox.Sandbox
	*commands.Service
}

// sessionArea answers session.info and session.login.
type sessionArea struct {
	sessioninfo.Session
	record   recordFunc
	loginURL func() (string, time.Time) // a one-time dashboard login (Server.LoginURL)
}

// sessionArea is the session methods over this server's sandbox, its
// settings as they were read at start (a change to them needs a restart)
// and its directory of people.
func (s *Server) sessionArea() sessionArea {
	x := sessioninfo.Session{Box: sessionParts{s.box, s.cmds}, SharedDir: s.cfg.Sandbox.SharedDir, OutputDir: s.cfg.Sandbox.OutputDir,
		Running: fmt.Sprintf("at most %d commands at once for all agents together and %d per agent; more wait up to %s for a free slot", s.cfg.Exec.MaxRunning, s.cfg.Exec.MaxRunningPerAgent, s.cfg.Exec.QueueWait.D()),
		People:  s.dir.PersonIDs, Version: s.version, Now: s.now}
	x.LogSize, _ = s.audit.(sessioninfo.LogSizer)
	x.Limit = s.calls.describe()
	x.Timeout = s.cfg.Exec.Timeout.D()
	for _, r := range s.cfg.Sandbox.Roots {
		x.Roots = append(x.Roots, rootInfo{Path: r.Path, Access: r.Access})
	}
	return sessionArea{Session: x, record: s.record, loginURL: s.LoginURL}
}

func (x sessionArea) methods(add func(name string, m method)) {
	add("session.info", method{fn: x.info})
	add("session.login", method{owner: true, fn: x.login})
}

func (x sessionArea) info(ctx context.Context, c *call) (any, error) {
	a, err := decode[wire.InfoArgs](c)
	if err != nil {
		return nil, err
	}
	info, err := x.Info(ctx, c.caller, a)
	if err != nil {
		return nil, err
	}
	return info, nil
}

func (x sessionArea) login(ctx context.Context, c *call) (any, error) {
	if err := x.record(ctx, c.caller.Client, "session.login", "dashboard", "a one-time dashboard login was issued"); err != nil {
		return nil, err
	}
	u, exp := x.loginURL()
	return loginResult{URL: u, ExpiresAt: exp.UTC().Format(time.RFC3339)}, nil
}
