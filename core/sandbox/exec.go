package sandbox

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/execbox"
	"corral/core/fsbox"
	"corral/core/killpoint"
	"corral/core/netgate"
	"corral/core/paths"
	"corral/core/policy"
	"corral/core/visible"
)

// ExecConfig configures command.run. Its limits are enforced here and
// nowhere else: the Runner is handed each command's limits in its Spec.
type ExecConfig struct {
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

// ExecInfo says whether commands can run and under what (session.info).
func (s *Sandbox) ExecInfo() (available bool, sandbox, why string) {
	ec := s.exec
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
func (s *Sandbox) NetworkInfo() (bool, string) {
	ec := s.exec
	switch {
	case ec.Runner == nil:
		return false, "Commands are unavailable."
	case ec.Gate == nil || ec.Proxy == nil:
		return false, "Commands get no network: Corral's egress proxy is not set up."
	}
	return ec.Runner.Network()
}

// MemoryInfo says how a command's memory is bounded (session.info).
func (s *Sandbox) MemoryInfo() string {
	ec := s.exec
	if ec.Runner == nil {
		return ""
	}
	return ec.Runner.MemoryLimit()
}

// RunArgs are command.run's parameters.
type RunArgs struct {
	Context    *Context
	Command    string
	WorkingDir string
	Network    bool
	// AllowedDomains and PackageManagers give the command network to
	// those domains only: those no rule decides are asked of the owner in
	// one question before the command starts.
	AllowedDomains  []string
	PackageManagers []string
	TimeoutMs       int64
	Env             map[string]string
	Stdin           string
	Stream          bool
	Reason          string
}

// RunResult is command.run's answer.
type RunResult struct {
	ExitCode   int
	Signal     *string
	Stdout     string
	Stderr     string
	Truncated  bool
	TimedOut   bool
	Cancelled  bool
	DurationMs int64
	// Network says what the command did on the network, and which
	// connections Corral refused and why; absent without network.
	Network *netgate.Summary
	// Changes lists the files the command created, modified or deleted in
	// its writable folders (at most maxReportedChanges, then
	// ChangesTruncated); null when Corral could not record them.
	Changes          []FileChange
	ChangesTruncated bool
	// NotApplied, when set, says that some of the command's changes were
	// not applied to the folders, and why; those paths hold what they held
	// before the command. The command itself ran: its exit code and output
	// are its own.
	NotApplied *NotApplied
}

// NotApplied is what of a command's changes Corral did not apply: all
// of them when what one replaces could not be kept (applyLayers), else
// those whose swap into place failed.
type NotApplied struct {
	// Kind is unavailable when the version store could not keep what
	// the changes replace (the agent's share of it is full), io for
	// another failure.
	Kind    errs.Kind
	Message string   // a sentence saying why and what can be done
	Paths   []string // at most maxReportedChanges of them
	Count   int
}

// maxReportedChanges bounds the changes command.run lists (the audit
// event keeps them all).
const maxReportedChanges = 1000

// layerDirs maps the folders a command may write to their fsbox.Dir,
// keyed as execbox.Layer.Host names them.
func (s *Sandbox) layerDirs(scope string, share paths.Target) (map[string]fsbox.Dir, error) {
	dirs := map[string]fsbox.Dir{}
	t, err := s.layout.Resolve(scope, ".")
	if err != nil {
		return nil, err
	}
	share.Prefix = s.layout.SharedDir
	targets := []paths.Target{t, share}
	for _, r := range s.layout.Roots {
		if r.Access == paths.ReadWrite {
			targets = append(targets, paths.Target{Area: paths.InRoot, Dir: r.Path, Prefix: r.Path, Access: r.Access})
		}
	}
	for _, t := range targets {
		root, err := s.root(t)
		if err != nil {
			if t.Area == paths.InRoot {
				continue // a missing root is left out of the sandbox too
			}
			return nil, err
		}
		dirs[t.Dir] = fsbox.Dir{Root: root, Prefix: t.Prefix}
	}
	return dirs, nil
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

// Commands lists running commands, oldest first.
func (s *Sandbox) Commands() []Running {
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
func (s *Sandbox) CancelCommand(c Caller, requestID string) bool {
	s.running.mu.Lock()
	defer s.running.mu.Unlock()
	found := false
	for r := range s.running.byID {
		if r.RequestID == requestID && (c.Owner || r.Client == c.Client) {
			r.cancel()
			found = true
		}
	}
	return found
}

// StopCommandsOf stops the running commands of one client (an agent
// paused or removed alone); it returns how many it stopped.
func (s *Sandbox) StopCommandsOf(client string) int {
	s.running.mu.Lock()
	defer s.running.mu.Unlock()
	n := 0
	for r := range s.running.byID {
		if r.Client == client {
			r.cancel()
			n++
		}
	}
	return n
}

// StopCommands stops every running command (agents.pause).
func (s *Sandbox) StopCommands() int {
	s.running.mu.Lock()
	defer s.running.mu.Unlock()
	for r := range s.running.byID {
		r.cancel()
	}
	return len(s.running.byID)
}

// Run answers command.run: the command runs under bubblewrap in the
// scope's folder, after any approvals it needs. requestID names it for
// command.cancel; onOutput, if set, receives output as it comes.
func (s *Sandbox) Run(ctx context.Context, c Caller, a RunArgs, requestID string, onOutput func(stream string, data []byte)) (RunResult, error) {
	o, err := s.beginOn(ctx, c, a.Context, "command.run", a.Reason, a.Command)
	if err != nil {
		return RunResult{}, err
	}
	o.ev.Target = clip(a.Command, 2000)
	o.askCommand, o.noNetwork = c.AskCommands, c.NoNetwork
	res, err := s.run(o, a, requestID, onOutput)
	return res, o.end(ctx, err)
}

func (s *Sandbox) run(o *op, a RunArgs, requestID string, onOutput func(string, []byte)) (RunResult, error) {
	ec := s.exec
	o.ev.DecidedBy = audit.ByScope
	timeout, err := s.runTimeout(a)
	if err != nil {
		return RunResult{}, err
	}
	if s.policy != nil && s.policy.Paused() {
		o.ev.Decision, o.ev.DecidedBy = audit.Deny, audit.ByPaused
		return RunResult{}, errs.New(errs.Denied, "", "Agents are paused by the owner, so the command did not run.")
	}
	// Asked every time, never remembered: a command when [exec] ask is on,
	// and network for this one run.
	// The question shows everything that decides what runs: the command
	// and also its folder, environment and input (a "sh" fed a script on
	// stdin is not the harmless "sh" it looks like).
	whole, err := o.decideCommand(a)
	if err != nil {
		return RunResult{}, err
	}
	domains, wantsNet, anyDomain, err := o.decideNetwork(a, whole)
	if err != nil {
		return RunResult{}, err
	}
	scopeDir, err := s.ScopeDir(o.scope)
	if err != nil {
		return RunResult{}, err
	}
	share := paths.Target{Area: paths.InShare, Dir: filepath.Join(s.layout.Base, s.layout.SharedDir)}
	if _, err := s.root(share); err != nil {
		return RunResult{}, err
	}
	if err := s.checkQuota(scopeDir, "Your folder"); err != nil {
		o.ev.Decision = audit.Deny
		return RunResult{}, err
	}
	// What the command writes is not counted as it goes: measure again.
	defer s.stale(scopeDir)
	defer s.stale(share.Dir)
	spec := execbox.Spec{
		Command: a.Command, ScopeDir: scopeDir, ShareDir: share.Dir, ShareLink: s.layout.SharedDir,
		WorkingDir: a.WorkingDir, Env: a.Env, Stdin: []byte(a.Stdin),
		Timeout: timeout, MaxOutput: ec.MaxOutput, User: o.scope,
	}
	if a.Stream {
		spec.OnOutput = onOutput
	}
	for _, r := range s.layout.Roots {
		spec.Mounts = append(spec.Mounts, execbox.Mount{Host: r.Path, ReadWrite: r.Access == paths.ReadWrite})
	}
	// Versions: the writable folders get overlays, applied when the
	// command ends (cmdversions.go).
	var dirs map[string]fsbox.Dir
	if ok, why := s.CommandVersions(o.ctx); ok {
		if dirs, err = s.layerDirs(o.scope, share); err != nil {
			return RunResult{}, err
		}
		spec.LayerDir = s.layerDir()
		// Once applied, the layers are only removed: the answer need not
		// wait for that.
		defer func() { go execbox.RemoveLayers(spec.LayerDir) }()
	} else if s.keeping() {
		o.ev.Detail = appendDetail(o.ev.Detail, "changes not recorded: "+why)
	}
	var gate *netgate.Run
	var asked netgate.Question
	if wantsNet {
		gate = ec.Gate.Open(netgate.Command{
			Client: o.ev.Client, Scope: o.scope, RequestID: requestID, Command: clip(a.Command, 2000), Reason: o.reason,
			AnyDomain: anyDomain, Domains: domains,
		})
		spec.Egress = func(ctx context.Context, c net.Conn) { ec.Proxy(ctx, c, gate) }
		// The declared domains no rule decides: one question, now, so
		// that no connection waits for the owner.
		if asked, err = gate.Ask(o.ctx); err != nil {
			o.ev.Decision = audit.Deny
			if asked.Outcome.By != "" {
				o.ev.DecidedBy = asked.Outcome.By
			}
			return RunResult{}, err
		}
		if asked.Domains != nil {
			o.ev.Detail = appendDetail(o.ev.Detail, askedDetail(asked))
		}
	}
	release, err := s.slots.acquire(o.ctx, o.ev.Client)
	if err != nil {
		return RunResult{}, err
	}
	defer release()
	o.ev.Decision = audit.Allow
	if err := o.recordStart("the command"); err != nil {
		return RunResult{}, err
	}
	if gate != nil {
		gate.Started(o.recorded)
		if asked.Domains != nil {
			o.recordAsked(asked, requestID)
		}
	}
	rctx, cancel := context.WithCancel(o.ctx)
	defer cancel()
	run := &Running{RequestID: requestID, Client: o.ev.Client, Scope: o.scope, Command: clip(a.Command, 500), Started: s.now().UTC(), cancel: cancel}
	s.running.add(run)
	defer s.running.remove(run)
	if s.policy != nil && s.policy.Paused() {
		// Paused after the check above but before the command was listed:
		// StopCommands did not see it, so stop it here (SetPaused sets
		// the flag before it stops what runs).
		cancel()
	}
	r, err := ec.Runner.Run(rctx, spec)
	if err != nil {
		return RunResult{}, err
	}
	killpoint.Here("command.ended")
	return o.ended(r, dirs, spec.LayerDir != "", gate), nil
}

// ended reports a command that ran: its layers applied to the folders
// (cmdversions.go; layered: it ran over layers), what its network did,
// and how it ended, on the event and in the answer.
func (o *op) ended(r execbox.Result, dirs map[string]fsbox.Dir, layered bool, gate *netgate.Run) RunResult {
	var notApplied *NotApplied
	if len(r.Layers) > 0 {
		changes, failed, err := o.s.applyLayers(o, r.Layers, dirs)
		o.ev.Changes = changes
		if len(failed) > 0 || err != nil {
			notApplied = notAppliedOf(failed, err)
			o.ev.Detail = appendDetail(o.ev.Detail, fmt.Sprintf("%d changes could not be applied: %s", len(failed), clip(notApplied.Message, 500)))
			r.Stderr += fmt.Sprintf("corral: %d of the command's changes could not be applied to your folders: %s\n", len(failed), clip(strings.Join(failed, ", "), 1000))
		}
	} else if r.NoLayers != "" {
		o.ev.Detail = appendDetail(o.ev.Detail, "changes not recorded: "+r.NoLayers)
	}
	res := RunResult{ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr, Truncated: r.Truncated, TimedOut: r.TimedOut, Cancelled: r.Cancelled, DurationMs: r.Duration.Milliseconds(),
		NotApplied: notApplied}
	if r.Signal != "" {
		sig := r.Signal
		res.Signal = &sig
	}
	if layered {
		res.Changes = []FileChange{}
		for _, c := range o.ev.Changes {
			if len(res.Changes) == maxReportedChanges {
				res.ChangesTruncated = true
				break
			}
			res.Changes = append(res.Changes, FileChange{Path: c.Path, Kind: c.Kind})
		}
	}
	if gate != nil {
		gate.Close(o.ctx)
		sum := gate.Summary()
		res.Network = &sum
		for _, f := range sum.Refused {
			res.Stderr += "corral: " + f.Reason + "\n"
		}
		if len(sum.Refused) > 0 || sum.Connections > 0 {
			o.ev.Detail = appendDetail(o.ev.Detail, fmt.Sprintf("network: %d connections, %d refused", sum.Connections, len(sum.Refused)))
		}
	}
	o.ev.Bytes = int64(len(r.Stdout) + len(r.Stderr))
	switch {
	case r.TimedOut:
		o.ev.Detail = appendDetail(o.ev.Detail, "timed out")
	case r.Cancelled:
		o.ev.Detail = appendDetail(o.ev.Detail, "cancelled")
	case r.Signal != "":
		o.ev.Detail = appendDetail(o.ev.Detail, "killed by "+r.Signal)
	default:
		o.ev.Detail = appendDetail(o.ev.Detail, fmt.Sprintf("exit %d", r.ExitCode))
	}
	return res
}

// runTimeout checks a command before anything is decided (not empty, no
// hidden characters, a runner available, a timeout that is not negative)
// and returns how long it may run.
func (s *Sandbox) runTimeout(a RunArgs) (time.Duration, error) {
	ec := s.exec
	if a.Command == "" {
		return 0, errs.New(errs.InvalidParams, "", "command must not be empty.")
	}
	// What the owner reads and the audit log keeps must be what runs:
	// invisible or reordering characters could make them differ.
	if visible.Hidden(a.Command) || visible.Hidden(a.WorkingDir) {
		return 0, errs.New(errs.InvalidParams, "", "The command contains invisible or control characters (such as bidirectional overrides); write it without them.")
	}
	if ok, _, why := s.ExecInfo(); !ok {
		return 0, errs.New(errs.Unavailable, "", "%s", why)
	}
	if a.TimeoutMs < 0 {
		return 0, errs.New(errs.InvalidParams, "", "timeout_ms must not be negative.")
	}
	timeout := ec.Timeout
	if timeout <= 0 {
		timeout = execbox.DefaultTimeout
	}
	if a.TimeoutMs > 0 && time.Duration(a.TimeoutMs)*time.Millisecond < timeout {
		timeout = time.Duration(a.TimeoutMs) * time.Millisecond
	}
	return timeout, nil
}

// decideCommand decides whether the command may run: the owner's command
// rules first, then the owner when [exec] ask is on or the agent is asked
// about each command. It returns the command as the owner reads it
// (describeRun).
func (o *op) decideCommand(a RunArgs) (string, error) {
	whole := describeRun(a)
	if whole != a.Command {
		o.ev.Detail = appendDetail(o.ev.Detail, clip(strings.TrimPrefix(whole, a.Command+"\n"), 1000))
	}
	// The owner's command rules answer first: a deny rule always, an
	// allow rule only for the command line alone (an environment or input
	// could make the same words do something else), so it spares the
	// question.
	ruled := false
	if o.s.policy != nil {
		if rule, ok := o.s.policy.RuleFor(o.ev.Client, o.scope, policy.Execute, a.Command); ok {
			if rule.Decision == policy.EffectDeny {
				o.ev.Decision, o.ev.DecidedBy, o.ev.Rule = audit.Deny, audit.ByRule, rule.ID
				o.ev.Detail = appendDetail(o.ev.Detail, "rule "+rule.ID)
				return whole, errs.New(errs.Denied, "", "The owner's rules deny this command: %s.", rule.Description)
			}
			if len(a.Env) == 0 && a.Stdin == "" {
				ruled = true
				o.ev.DecidedBy, o.ev.Rule = audit.ByRule, rule.ID
				o.ev.Detail = appendDetail(o.ev.Detail, "rule "+rule.ID)
			}
		}
	}
	if (o.s.exec.Ask || o.askCommand) && !ruled {
		if err := o.askOnce(policy.Execute, whole); err != nil {
			return whole, err
		}
	}
	return whole, nil
}

// decideNetwork decides the network the command asks for: none, the
// declared domains (checked, and the gate and proxy there), or any
// domain, which the owner is asked about for this run.
func (o *op) decideNetwork(a RunArgs, whole string) (domains []string, wantsNet, anyDomain bool, err error) {
	wantsNet = a.Network || len(a.AllowedDomains) > 0 || len(a.PackageManagers) > 0
	if wantsNet && o.noNetwork {
		o.ev.Decision = audit.Deny
		return nil, false, false, errs.New(errs.Denied, "", "The owner has turned network off for this agent, so the command did not run. Run it without network, or ask the owner.")
	}
	if wantsNet {
		if domains, err = netgate.CheckDomains(a.AllowedDomains, a.PackageManagers); err != nil {
			return nil, false, false, err
		}
		if o.s.exec.Gate == nil || o.s.exec.Proxy == nil {
			return nil, false, false, errs.New(errs.Unavailable, "", "Commands cannot have network here: Corral's egress proxy is not set up.")
		}
		if ok, why := o.s.exec.Runner.Network(); !ok {
			return nil, false, false, errs.New(errs.Unavailable, "", "%s", why)
		}
	}
	anyDomain = a.Network && len(domains) == 0
	if anyDomain {
		if err := o.askOnce(policy.Network, whole); err != nil {
			return nil, false, false, err
		}
		o.ev.Detail = appendDetail(o.ev.Detail, "network allowed for this run")
	} else if wantsNet {
		o.ev.Detail = appendDetail(o.ev.Detail, "network to "+clip(strings.Join(domains, ", "), 500))
	}
	return domains, wantsNet, anyDomain, nil
}

// askedDetail says, in the command's event, what the owner was asked
// about its domains before it started and how it was answered.
func askedDetail(q netgate.Question) string {
	return fmt.Sprintf("network asked before it started (%s): %s", clip(strings.Join(q.Domains, ", "), 500), answerWords(q.Outcome))
}

// answerWords is how a question was answered: "owner answered
// allow_once", "timeout", "rule ru_…".
func answerWords(out policy.Outcome) string {
	switch {
	case out.Decision != "":
		return "owner answered " + string(out.Decision)
	case out.Rule != nil:
		return "rule " + out.Rule.ID
	}
	return string(out.By)
}

// recordAsked records the question about a command's domains as its own
// event (op network.ask), once the command's event exists so that it can
// name it. It is recorded at the time it was asked; the answer was given
// before the command started (the command's event says so too), so a
// failure to record it is logged, not fatal.
func (o *op) recordAsked(q netgate.Question, requestID string) {
	ev := audit.Event{
		Time: q.Start.UTC(), Client: o.ev.Client, User: o.scope, Op: "network.ask", Target: clip(strings.Join(q.Domains, ", "), 2000),
		Decision: audit.Deny, DecidedBy: q.Outcome.By, Answer: string(q.Outcome.Decision), AnsweredBy: q.Outcome.Via,
		DurationMs: o.s.now().Sub(q.Start).Milliseconds(),
	}
	if q.Outcome.Allowed {
		ev.Decision = audit.Allow
	}
	if q.Outcome.Rule != nil {
		ev.Rule = q.Outcome.Rule.ID
	}
	link := "for command " + visible.Line(requestID)
	if o.recorded > 0 {
		link += fmt.Sprintf(" (event %d)", o.recorded)
	}
	n := fmt.Sprintf("%d domains", len(q.Domains))
	if len(q.Domains) == 1 {
		n = "1 domain"
	}
	ev.Detail = fmt.Sprintf("%s; %s asked before the command started; %s", link, n, answerWords(q.Outcome))
	if _, err := o.s.audit.Record(context.WithoutCancel(o.ctx), ev); err != nil {
		o.s.log.Error("audit record failed", "op", ev.Op, "client", ev.Client, "err", err)
	}
}

// notAppliedOf says which of a command's changes were not applied and
// why. With err (what its old content could not be kept: the store is
// gone or full, or the agent's share is), none was applied.
func notAppliedOf(failed []string, err error) *NotApplied {
	n := &NotApplied{Kind: errs.IO, Count: len(failed), Paths: failed[:min(len(failed), maxReportedChanges)],
		Message: fmt.Sprintf("%d of the command's changes could not be applied to the folders; those files are as they were before it ran.", len(failed))}
	if err != nil {
		e := errs.As(err)
		n.Kind = e.Kind
		n.Message = "None of the command's changes were applied: your folders are as they were before it ran. " + e.Msg
	}
	return n
}

// describeRun is a command as the owner is asked about it: the command
// line, then its folder, environment and input when there are any.
func describeRun(a RunArgs) string {
	var b strings.Builder
	b.WriteString(a.Command)
	if a.WorkingDir != "" {
		fmt.Fprintf(&b, "\n(in %s)", a.WorkingDir)
	}
	if len(a.Env) > 0 {
		keys := make([]string, 0, len(a.Env))
		for k := range a.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteString("\n(environment:")
		for _, k := range keys {
			name := k
			if visible.Hidden(k) || strings.ContainsAny(k, " =\"") {
				name = strconv.Quote(k)
			}
			fmt.Fprintf(&b, " %s=%s", name, quotedCut(a.Env[k], 200))
		}
		b.WriteString(")")
	}
	if a.Stdin != "" {
		fmt.Fprintf(&b, "\n(input, %d bytes: %s)", len(a.Stdin), quotedCut(a.Stdin, 500))
	}
	return b.String()
}

// quotedCut is s quoted (escapes for what cannot be seen) and cut to n
// bytes, saying so when it is: "abc"…(cut: 1200 more bytes).
func quotedCut(s string, n int) string {
	c := clip(s, n)
	if len(c) == len(s) {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…(cut: %d more bytes)", c, len(s)-len(c))
}

// askOnce asks a one-time-only question; nothing is remembered.
func (o *op) askOnce(a policy.Access, target string) error {
	o.ev.Decision, o.ev.DecidedBy = audit.Deny, audit.ByStrict
	if o.s.policy == nil {
		return errs.New(errs.Denied, "", "Nobody is there to approve this, so Corral refused it.")
	}
	out, err := o.check(policy.Request{Access: a, Target: target, OneTimeOnly: true}, string(a)+": ")
	if err != nil {
		return err
	}
	if !out.Allowed {
		what := "running this command"
		if a == policy.Network {
			what = "network access for this command"
		}
		switch out.By {
		case audit.ByTimeout:
			return errs.New(errs.Denied, "", "The owner did not answer in time, so %s was not allowed.", what)
		case audit.ByPaused:
			return errs.New(errs.Denied, "", "Agents are paused by the owner, so %s was not allowed.", what)
		case audit.ByStrict:
			return errs.New(errs.Denied, "", "Nobody is there to approve %s, so Corral refused it.", what)
		}
		return errs.New(errs.Denied, "", "%s", policy.WithReason("The owner did not allow "+what+".", out.Reason))
	}
	return nil
}

// clip is Clip.
func clip(s string, n int) string { return Clip(s, n) }

// Clip cuts s to at most n bytes of valid UTF-8, as the sandbox clips
// what it records of an agent's text.
func Clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}
