package server

import (
	"context"

	"corral/app/directory"
	"corral/app/rpc"
	"corral/core/sandbox"
)

// The agents and people the owner manages live in app/directory; here
// are the rows of their methods and what the server asks of them.

// AgentStore is what the directory needs of the store (directory.Store):
// nil, only config.toml's agents and people, and none can be added.
type AgentStore = directory.Store

type (
	agentInfo  = directory.AgentInfo
	personInfo = directory.PersonInfo
	clientInfo = directory.ClientInfo
)

func newDirectory(s *Server, o Config) *directory.Directory {
	return directory.New(o.Config, directory.Options{Store: o.Agents, Folders: o.Sandbox, Runs: directory.SandboxRuns(o.Sandbox, o.Commands),
		HangUp: s.hangUpAgent, Record: s.record, Now: s.now, Log: s.log})
}

// agentBook is what the agent and person methods call.
type agentBook interface {
	Managed() bool
	Clients() []directory.ClientInfo
	Agents() []directory.AgentInfo
	AddAgent(context.Context, string, directory.AgentParams) (directory.AgentKey, error)
	UpdateAgent(context.Context, string, directory.AgentParams) (directory.AgentInfo, error)
	RotateKey(context.Context, string, directory.NameParams) (directory.AgentKey, error)
	Pause(context.Context, string, directory.NameParams) (directory.AgentInfo, error)
	Resume(context.Context, string, directory.NameParams) (directory.AgentInfo, error)
	SetLevel(context.Context, string, directory.LevelParams) (directory.AgentInfo, error)
	RemoveAgent(context.Context, string, directory.NameParams) (int, error)
	People() []directory.PersonInfo
	AddPerson(context.Context, string, directory.PersonParams) (directory.PersonInfo, error)
	RenamePerson(context.Context, string, directory.PersonParams) (directory.PersonInfo, error)
	RemovePerson(context.Context, string, directory.IDParams) (directory.PersonRemoved, error)
}

// agentArea answers client.list, the agent.* methods but agent.connect
// (connect.go) and the person.* methods, all the owner's.
type agentArea struct{ dir agentBook }

func (x agentArea) methods(add func(name string, m method)) {
	d := x.dir
	add("client.list", owned(func(context.Context, string, struct{}) (clientsResult, error) {
		return clientsResult{Clients: d.Clients()}, nil
	}))
	add("agent.list", owned(func(context.Context, string, struct{}) (agentsResult, error) {
		return agentsResult{Agents: d.Agents(), Managed: d.Managed()}, nil
	}))
	add("agent.add", owned(d.AddAgent))
	add("agent.update", owned(oneAgent(d.UpdateAgent)))
	add("agent.rotate_key", owned(d.RotateKey))
	add("agent.pause", owned(oneAgent(d.Pause)))
	add("agent.resume", owned(oneAgent(d.Resume)))
	add("agent.set_level", owned(oneAgent(d.SetLevel)))
	add("agent.remove", owned(func(ctx context.Context, by string, p directory.NameParams) (agentRemovedResult, error) {
		n, err := d.RemoveAgent(ctx, by, p)
		return agentRemovedResult{Name: p.Name, Removed: true, ConnectionsClosed: n}, err
	}))
	add("person.list", owned(func(context.Context, string, struct{}) (peopleResult, error) {
		return peopleResult{People: d.People(), Managed: d.Managed()}, nil
	}))
	add("person.add", owned(onePerson(d.AddPerson)))
	add("person.rename", owned(onePerson(d.RenamePerson)))
	add("person.remove", owned(func(ctx context.Context, by string, p directory.IDParams) (personRemovedResult, error) {
		r, err := d.RemovePerson(ctx, by, p)
		return personRemovedResult{ID: p.ID, Folder: r.Folder, Kept: true, Message: r.Message}, err
	}))
}

// owned is an owner's method calling f with its params decoded and the
// caller's name; an error is answered alone.
func owned[P, R any](f func(context.Context, string, P) (R, error)) method {
	return method{owner: true, fn: func(ctx context.Context, c *call) (any, error) {
		var p P
		if err := rpc.DecodeParams(c.params, &p); err != nil {
			return nil, err
		}
		r, err := f(ctx, c.caller.Client, p)
		if err != nil {
			return nil, err
		}
		return r, nil
	}}
}

func oneAgent[P any](f func(context.Context, string, P) (agentInfo, error)) func(context.Context, string, P) (agentResult, error) {
	return func(ctx context.Context, by string, p P) (agentResult, error) {
		a, err := f(ctx, by, p)
		return agentResult{Agent: a}, err
	}
}

func onePerson[P any](f func(context.Context, string, P) (personInfo, error)) func(context.Context, string, P) (personResult, error) {
	return func(ctx context.Context, by string, p P) (personResult, error) {
		pi, err := f(ctx, by, p)
		return personResult{Person: pi}, err
	}
}

// LoadAgents makes live the agents and people added at runtime, from the
// store (directory.Load). The daemon calls it once after New.
func (s *Server) LoadAgents(ctx context.Context) error { return s.dir.Load(ctx) }

// touchAgent notes that an agent authenticated.
func (s *Server) touchAgent(ctx context.Context, c sandbox.Caller) {
	if !c.Owner {
		s.dir.Touch(ctx, c.Client)
	}
}

// hangUpAgent ends the agent's open connections and says how many.
func (s *Server) hangUpAgent(name string) int {
	return s.finishConns(func(cn *conn) bool { return !cn.caller.Owner && cn.caller.Client == name })
}

// FirstRun reports whether no agent has worked here yet: the tray's first
// notification and the dashboard's guide then point to connecting one.
func (s *Server) FirstRun() bool { return s.dir.FirstRun() }
