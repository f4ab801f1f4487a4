// Package commands is command.run, command.cancel and command.list, and
// the versions of what a command changed, built on core/sandbox's
// operation skeleton (sandbox.Op): the sandbox selects the scope,
// refuses a paused agent or one whose trust level may not run commands,
// asks the policy, commits the command's event before it starts and
// completes it before the answer; this package decides what the command
// may do, runs it under bubblewrap (core/execbox) with the network its
// gate allows (core/netgate), and applies what it changed.
//
// Guarantees: a command is audited before it starts (its event says
// "running" until it ends); it runs only under the runner's sandbox —
// never unsandboxed, never as the host's root, never on the host's
// network (only through the egress proxy, and only when it asked and
// was allowed); what the owner is asked about is exactly what runs (the
// command, its folder, environment and input, with no hidden
// characters). With a version store and a kernel that allows overlays,
// a command writes into layers, and its changes are applied to the real
// folders only after what they replace is kept and their intent is on
// its event (the sandbox's journal), so the owner can undo the command
// and sandbox.Recover rolls back an apply a crash interrupted.
//
// Not guaranteed: what a command changes where it runs without layers
// (no version store, no overlay) is not recorded and cannot be undone;
// special files it makes are not carried over; a command's output beyond
// the configured limit is cut.
package commands

import (
	"context"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"corral/core/execbox"
	"corral/core/netgate"
	"corral/core/sandbox"
	"corral/core/slots"
)

// Config configures command.run. Its limits are enforced here and
// nowhere else: the Runner is handed each command's limits in its Spec.
type Config struct {
	Runner  *execbox.Runner // nil: commands unavailable
	Enabled bool            // [exec] enabled
	Ask     bool            // [exec] ask: every command needs a one-time approval
	// Timeout is a command's default and longest wall time (an agent may
	// ask for less); 0: execbox.DefaultTimeout.
	Timeout time.Duration
	// MaxOutput is the output kept per stream, in bytes; 0:
	// execbox.DefaultMaxOutput.
	MaxOutput int
	// MaxRunning and MaxPerClient bound the commands running at once, for
	// all agents together and for each one (0: no bound); a command waits
	// up to QueueWait (0: 30 s) for a free slot, then is refused.
	MaxRunning, MaxPerClient int
	QueueWait                time.Duration
	// Gate decides a command's connections and Proxy serves each one it
	// opens (app/egress.Serve); both nil: commands get no network.
	Gate  *netgate.Gate
	Proxy func(ctx context.Context, c net.Conn, d netgate.Dialer)
}

// Service runs agents' commands in a sandbox's folders. It is safe for
// concurrent use.
type Service struct {
	box     *sandbox.Sandbox
	cfg     Config
	slots   *slots.Slots // bounds commands running at once (Config)
	running runningSet

	agents atomic.Pointer[func(client string) (sandbox.Caller, bool)] // SetAgents

	applyMu sync.Mutex // one command's changes applied at a time (apply.go)
	probeMu sync.Mutex
	probed  time.Time // when the overlay was last checked (Versions)
}

// New returns the commands of box, run as cfg says.
func New(box *sandbox.Sandbox, cfg Config) *Service {
	return &Service{box: box, cfg: cfg, slots: newSlots(cfg)}
}

// SetAgents tells the commands how to learn an agent's settings now
// (app/directory's Current: false once it is removed). A command judges
// its agent by them once it is listed, just before it starts, so one
// whose agent the owner removed, paused or made Read-only while it
// waited does not start; without it only its call's settings count.
func (s *Service) SetAgents(f func(client string) (sandbox.Caller, bool)) { s.agents.Store(&f) }

var commandWords = slots.Words{
	Cancelled: "The command was cancelled while it waited for a free slot.",
	Mine:      "%s already runs %d commands at once, its limit; this one waited %s for one of them to finish and did not start. Try again when one has finished.",
	Full:      "Corral already runs %d commands at once, its limit for all agents together; this one waited %s and did not start. Try again shortly.",
}

// newSlots bounds commands as cfg says.
func newSlots(cfg Config) *slots.Slots {
	return slots.New(cfg.MaxRunning, cfg.MaxPerClient, cfg.QueueWait, commandWords)
}

// ExecInfo says whether commands can run and under what (session.info).
func (s *Service) ExecInfo() (available bool, sandbox, why string) {
	ec := s.cfg
	if !ec.Enabled {
		return false, "", "Commands are turned off in Corral's config ([exec] enabled = false)."
	}
	if ec.Runner == nil {
		return false, "", "Commands are unavailable: Corral has no sandbox runner."
	}
	ok, version, why := ec.Runner.Available()
	return ok, version, why
}

// NetworkInfo says whether commands can be given network, and otherwise
// why not (session.info).
func (s *Service) NetworkInfo() (bool, string) {
	ec := s.cfg
	switch {
	case ec.Runner == nil:
		return false, "Commands are unavailable."
	case ec.Gate == nil || ec.Proxy == nil:
		return false, "Commands get no network: Corral's egress proxy is not set up."
	}
	return ec.Runner.Network()
}

// MemoryInfo says how a command's memory is bounded (session.info).
func (s *Service) MemoryInfo() string {
	if s.cfg.Runner == nil {
		return ""
	}
	return s.cfg.Runner.MemoryLimit()
}

// Running describes a command in progress (command.list).
type Running struct {
	RequestID string
	Client    string
	Scope     string
	Command   string
	Started   time.Time
	cancel    context.CancelFunc
}

// runningSet tracks commands in progress so they can be listed and stopped.
type runningSet struct {
	mu   sync.Mutex
	byID map[*Running]struct{}
}

func (rs *runningSet) add(r *Running) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.byID == nil {
		rs.byID = map[*Running]struct{}{}
	}
	rs.byID[r] = struct{}{}
}

func (rs *runningSet) remove(r *Running) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.byID, r)
}

// stop cancels the commands match selects and says how many.
func (rs *runningSet) stop(match func(r *Running) bool) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	n := 0
	for r := range rs.byID {
		if match(r) {
			r.cancel()
			n++
		}
	}
	return n
}

// Commands lists running commands, oldest first.
func (s *Service) Commands() []Running {
	s.running.mu.Lock()
	defer s.running.mu.Unlock()
	out := make([]Running, 0, len(s.running.byID))
	for r := range s.running.byID {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Running) int { return a.Started.Compare(b.Started) })
	return out
}

// CancelCommand stops the caller's command with requestID (the owner may
// stop anyone's). It reports whether one was running.
func (s *Service) CancelCommand(c sandbox.Caller, requestID string) bool {
	return s.running.stop(func(r *Running) bool { return r.RequestID == requestID && (c.Owner || r.Client == c.Client) }) > 0
}

// StopCommandsOf stops the running commands of one client (an agent
// paused or removed alone); it returns how many it stopped.
func (s *Service) StopCommandsOf(client string) int {
	return s.running.stop(func(r *Running) bool { return r.Client == client })
}

// StopCommands stops every running command (agents.pause).
func (s *Service) StopCommands() int {
	return s.running.stop(func(*Running) bool { return true })
}
