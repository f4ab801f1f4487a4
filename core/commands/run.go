package commands

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/execbox"
	"corral/core/fsbox"
	"corral/core/killpoint"
	"corral/core/netgate"
	"corral/core/paths"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/visible"
)

// RunArgs are command.run's parameters.
type RunArgs struct {
	Context    *sandbox.Context
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

// Run answers command.run: the command runs under bubblewrap in the
// scope's folder, after any approvals it needs. requestID names it for
// command.cancel; onOutput, if set, receives output as it comes.
//
// Its steps, each a method of run: check the command (check), decide
// whether it may run and with what network (decide), prepare its folders
// and layers (prepare), ask about its domains (openNetwork), take a slot
// and record its event before it starts (start), run it, and report it
// with its changes applied (ended).
func (s *Service) Run(ctx context.Context, c sandbox.Caller, a RunArgs, requestID string, onOutput func(stream string, data []byte)) (RunResult, error) {
	o, err := s.box.BeginOn(ctx, c, a.Context, "command.run", a.Reason, a.Command)
	if err != nil {
		return RunResult{}, err
	}
	if !c.Owner {
		// The agent's trust level judges a command before anything else
		// (file operations are judged by each path they write).
		if err := o.Permits(policy.Execute); err != nil {
			return RunResult{}, o.End(err)
		}
	}
	o.Event().Target = sandbox.Clip(a.Command, 2000)
	r := &run{s: s, o: o, ev: o.Event(), a: a, id: requestID, owner: c.Owner, ask: c.AskCommands, noNetwork: c.NoNetwork}
	res, err := r.run(onOutput)
	return res, o.End(err)
}

// run is one command.run in progress.
type run struct {
	s  *Service
	o  *sandbox.Op
	ev *audit.Event // o's
	a  RunArgs
	id string // the request's id (command.cancel)
	// owner: the owner's command, which no agent's pause or level stops.
	owner bool
	// The caller's per-agent settings.
	ask, noNetwork bool

	timeout   time.Duration
	whole     string // the command as the owner reads it (describeRun)
	domains   []string
	wantsNet  bool
	anyDomain bool

	spec  execbox.Spec
	dirs  map[string]fsbox.Dir // the writable folders, when it runs over layers
	gate  *netgate.Run
	asked netgate.Question
	// after is undone in reverse once the command has ended, before its
	// event is completed.
	after []func()
}

func (r *run) run(onOutput func(string, []byte)) (RunResult, error) {
	defer func() {
		for i := len(r.after) - 1; i >= 0; i-- {
			r.after[i]()
		}
	}()
	r.ev.DecidedBy = audit.ByScope
	if err := r.check(); err != nil {
		return RunResult{}, err
	}
	if err := r.decide(); err != nil {
		return RunResult{}, err
	}
	if err := r.prepare(onOutput); err != nil {
		return RunResult{}, err
	}
	if err := r.openNetwork(); err != nil {
		return RunResult{}, err
	}
	rctx, err := r.start()
	if err != nil {
		return RunResult{}, err
	}
	res, err := r.s.cfg.Runner.Run(rctx, r.spec)
	if err != nil {
		return RunResult{}, err
	}
	killpoint.Here("command.ended")
	return r.ended(res), nil
}

// check checks the command before anything is decided (not empty, no
// hidden characters, a runner available, a timeout that is not negative,
// agents not paused) and sets how long it may run.
func (r *run) check() error {
	a, ec := r.a, r.s.cfg
	if a.Command == "" {
		return errs.New(errs.InvalidParams, "", "command must not be empty.")
	}
	// What the owner reads and the audit log keeps must be what runs:
	// invisible or reordering characters could make them differ.
	if visible.Hidden(a.Command) || visible.Hidden(a.WorkingDir) {
		return errs.New(errs.InvalidParams, "", "The command contains invisible or control characters (such as bidirectional overrides); write it without them.")
	}
	// The runner's own check of the text (only white space, 128 KiB),
	// before the owner is asked about a command that could never run.
	if err := execbox.CheckCommand(a.Command); err != nil {
		return err
	}
	if ok, _, why := r.s.ExecInfo(); !ok {
		return errs.New(errs.Unavailable, "", "%s", why)
	}
	if a.TimeoutMs < 0 {
		return errs.New(errs.InvalidParams, "", "timeout_ms must not be negative.")
	}
	r.timeout = ec.Timeout
	if r.timeout <= 0 {
		r.timeout = execbox.DefaultTimeout
	}
	if a.TimeoutMs > 0 && time.Duration(a.TimeoutMs)*time.Millisecond < r.timeout {
		r.timeout = time.Duration(a.TimeoutMs) * time.Millisecond
	}
	if pol := r.s.box.Policy(); pol != nil && pol.Paused() {
		r.ev.Decision, r.ev.DecidedBy = audit.Deny, audit.ByPaused
		return errs.New(errs.Denied, "", "Agents are paused by the owner, so the command did not run.")
	}
	return nil
}

// decide decides whether the command may run and with what network.
// Asked every time, never remembered: a command when [exec] ask is on,
// and network for this one run. The question shows everything that
// decides what runs: the command and also its folder, environment and
// input (a "sh" fed a script on stdin is not the harmless "sh" it looks
// like).
func (r *run) decide() error {
	if err := r.decideCommand(); err != nil {
		return err
	}
	return r.decideNetwork()
}

// prepare makes the command's Spec: its folders (the quota checked, and
// measured again once it has ended), its mounts, and, when what commands
// change is recorded, the layers over its writable folders (apply.go).
func (r *run) prepare(onOutput func(string, []byte)) error {
	box, a, o := r.s.box, r.a, r.o
	layout := box.Layout()
	scopeDir, err := box.ScopeDir(o.Scope())
	if err != nil {
		return err
	}
	share := paths.Target{Area: paths.InShare, Dir: filepath.Join(layout.Base, layout.SharedDir)}
	if _, err := box.Dir(share); err != nil {
		return err
	}
	if err := box.CheckQuota(scopeDir, "Your folder"); err != nil {
		r.ev.Decision = audit.Deny
		return err
	}
	// What the command writes is not counted as it goes: measure again.
	r.after = append(r.after, func() { box.Stale(scopeDir) }, func() { box.Stale(share.Dir) })
	r.spec = execbox.Spec{
		Command: a.Command, ScopeDir: scopeDir, ShareDir: share.Dir, ShareLink: layout.SharedDir,
		WorkingDir: a.WorkingDir, Env: a.Env, Stdin: []byte(a.Stdin),
		Timeout: r.timeout, MaxOutput: r.s.cfg.MaxOutput, User: o.Scope(),
	}
	if a.Stream {
		r.spec.OnOutput = onOutput
	}
	for _, root := range layout.Roots {
		r.spec.Mounts = append(r.spec.Mounts, execbox.Mount{Host: root.Path, ReadWrite: root.Access == paths.ReadWrite})
	}
	if ok, why := r.s.CommandVersions(o.Context()); ok {
		if r.dirs, err = r.s.layerDirs(o.Scope(), share); err != nil {
			return err
		}
		r.spec.LayerDir = r.s.layerDir()
		// Once applied, the layers are only removed: the answer need not
		// wait for that.
		dir := r.spec.LayerDir
		r.after = append(r.after, func() { go execbox.RemoveLayers(dir) })
	} else if box.Versions() != nil {
		o.AddDetail("changes not recorded: " + why)
	}
	return nil
}

// openNetwork opens the command's gate when it wants network, and asks
// the owner, in one question now, about the declared domains no rule
// decides, so that no connection waits for the owner.
func (r *run) openNetwork() error {
	if !r.wantsNet {
		return nil
	}
	ec := r.s.cfg
	r.gate = ec.Gate.Open(netgate.Command{
		Client: r.ev.Client, Scope: r.o.Scope(), RequestID: r.id, Command: sandbox.Clip(r.a.Command, 2000), Reason: r.a.Reason,
		AnyDomain: r.anyDomain, Domains: r.domains,
	})
	gate := r.gate
	r.spec.Egress = func(ctx context.Context, c net.Conn) { ec.Proxy(ctx, c, gate) }
	var err error
	if r.asked, err = gate.Ask(r.o.Context()); err != nil {
		r.ev.Decision = audit.Deny
		if r.asked.Outcome.By != "" {
			r.ev.DecidedBy = r.asked.Outcome.By
		}
		return err
	}
	if r.asked.Domains != nil {
		r.o.AddDetail(askedDetail(r.asked))
	}
	return nil
}

// start takes a slot, records the command's event before it starts, and
// lists it (command.list, command.cancel); it returns the context the
// command runs under.
func (r *run) start() (context.Context, error) {
	release, err := r.s.slots.Acquire(r.o.Context(), r.ev.Client)
	if err != nil {
		return nil, err
	}
	r.after = append(r.after, release)
	if pol := r.s.box.Policy(); pol != nil {
		// The owner may have paused the agent, or all agents, or made it
		// Read-only while it waited (for its slot, a question, its
		// folders): the Caller it began with is not asked again.
		if by, err := pol.Holds(r.ev.Client, policy.Execute); err != nil {
			r.ev.Decision, r.ev.DecidedBy = audit.Deny, by
			return nil, err
		}
	}
	r.ev.Decision = audit.Allow
	if err := r.o.RecordStart("the command"); err != nil {
		return nil, err
	}
	if r.gate != nil {
		r.gate.Started(r.o.Recorded())
		if r.asked.Domains != nil {
			r.recordAsked()
		}
	}
	rctx, cancel := context.WithCancel(r.o.Context())
	run := &Running{RequestID: r.id, Client: r.ev.Client, Scope: r.o.Scope(), Command: sandbox.Clip(r.a.Command, 500), Started: r.s.box.Now().UTC(), cancel: cancel}
	r.s.running.add(run)
	r.after = append(r.after, cancel, func() { r.s.running.remove(run) })
	if pol := r.s.box.Policy(); pol != nil {
		if by, _ := pol.Holds(r.ev.Client, policy.Execute); by != "" {
			// Paused (or made Read-only) after the check above but before
			// the command was listed: StopCommands did not see it, so stop
			// it here (the owner's change sets its flag before it stops
			// what runs).
			cancel()
		}
	}
	if err := r.stillThere(); err != nil {
		return nil, err
	}
	return rctx, nil
}

// stillThere refuses an agent's command that is listed but has not
// started when the owner has removed that agent since its call read the
// agent (while it waited for a slot or a question, say): StopCommandsOf
// did not see it then, and the directory removes the agent before it
// stops its commands, so one of the two catches it. A pause or a
// Read-only level since then is the policy's to say (Holds, above).
func (r *run) stillThere() error {
	f := r.s.agents.Load()
	if r.owner || f == nil {
		return nil
	}
	if _, ok := (*f)(r.ev.Client); !ok {
		r.ev.Decision, r.ev.DecidedBy = audit.Deny, audit.ByOwner
		return errs.New(errs.Forbidden, "", "The owner has removed this agent (%s), so the command did not run.", r.ev.Client)
	}
	return nil
}

// ended reports a command that ran: its layers applied to the folders
// (apply.go), what its network did, and how it ended, on the event and
// in the answer.
func (r *run) ended(res execbox.Result) RunResult {
	o := r.o
	var notApplied *NotApplied
	if len(res.Layers) > 0 {
		changes, failed, err := r.s.applyLayers(o, res.Layers, r.dirs)
		r.ev.Changes = changes
		if len(failed) > 0 || err != nil {
			notApplied = notAppliedOf(failed, err)
			o.AddDetail(fmt.Sprintf("%d changes could not be applied: %s", len(failed), sandbox.Clip(notApplied.Message, 500)))
			res.Stderr += fmt.Sprintf("corral: %d of the command's changes could not be applied to your folders: %s\n", len(failed), sandbox.Clip(strings.Join(failed, ", "), 1000))
		}
	} else if res.NoLayers != "" {
		o.AddDetail("changes not recorded: " + res.NoLayers)
	}
	out := RunResult{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, Truncated: res.Truncated, TimedOut: res.TimedOut, Cancelled: res.Cancelled, DurationMs: res.Duration.Milliseconds(),
		NotApplied: notApplied}
	if res.Signal != "" {
		sig := res.Signal
		out.Signal = &sig
	}
	if r.spec.LayerDir != "" {
		out.Changes = []FileChange{}
		for _, c := range r.ev.Changes {
			if len(out.Changes) == maxReportedChanges {
				out.ChangesTruncated = true
				break
			}
			out.Changes = append(out.Changes, FileChange{Path: c.Path, Kind: c.Kind})
		}
	}
	if r.gate != nil {
		r.gate.Close(o.Context())
		sum := r.gate.Summary()
		out.Network = &sum
		for _, f := range sum.Refused {
			out.Stderr += "corral: " + f.Reason + "\n"
		}
		if len(sum.Refused) > 0 || sum.Connections > 0 {
			o.AddDetail(fmt.Sprintf("network: %d connections, %d refused", sum.Connections, len(sum.Refused)))
		}
	}
	r.ev.Bytes = int64(len(res.Stdout) + len(res.Stderr))
	switch {
	case res.TimedOut:
		o.AddDetail("timed out")
	case res.Cancelled:
		o.AddDetail("cancelled")
	case res.Signal != "":
		o.AddDetail("killed by " + res.Signal)
	default:
		o.AddDetail(fmt.Sprintf("exit %d", res.ExitCode))
	}
	return out
}

// decideCommand decides whether the command may run: the agent's trust
// level, the owner's command rules, then the owner when [exec] ask is on
// or the agent is asked about each command.
func (r *run) decideCommand() error {
	a, o := r.a, r.o
	r.whole = describeRun(a)
	if r.whole != a.Command {
		o.AddDetail(sandbox.Clip(strings.TrimPrefix(r.whole, a.Command+"\n"), 1000))
	}
	// The owner's command rules answer first: a deny rule always, an
	// allow rule only for the command line alone (an environment or input
	// could make the same words do something else), so it spares the
	// question.
	ruled := false
	if pol := r.s.box.Policy(); pol != nil {
		if rule, ok := pol.RuleFor(r.ev.Client, o.Scope(), policy.Execute, a.Command); ok {
			if rule.Decision == policy.EffectDeny {
				r.ev.Decision, r.ev.DecidedBy, r.ev.Rule = audit.Deny, audit.ByRule, rule.ID
				o.AddDetail("rule " + rule.ID)
				return errs.New(errs.Denied, "", "The owner's rules deny this command: %s.", rule.Description)
			}
			if len(a.Env) == 0 && a.Stdin == "" {
				ruled = true
				r.ev.DecidedBy, r.ev.Rule = audit.ByRule, rule.ID
				o.AddDetail("rule " + rule.ID)
			}
		}
	}
	if (r.s.cfg.Ask || r.ask) && !ruled {
		return r.askOnce(policy.Execute, r.whole)
	}
	return nil
}

// decideNetwork decides the network the command asks for: none, the
// declared domains (checked, and the gate and proxy there), or any
// domain, which the owner is asked about for this run.
func (r *run) decideNetwork() error {
	a, o, ec := r.a, r.o, r.s.cfg
	r.wantsNet = a.Network || len(a.AllowedDomains) > 0 || len(a.PackageManagers) > 0
	if r.wantsNet && r.noNetwork {
		r.ev.Decision = audit.Deny
		return errs.New(errs.Denied, "", "The owner has turned network off for this agent, so the command did not run. Run it without network, or ask the owner.")
	}
	if r.wantsNet {
		var err error
		if r.domains, err = netgate.CheckDomains(a.AllowedDomains, a.PackageManagers); err != nil {
			return err
		}
		if ec.Gate == nil || ec.Proxy == nil {
			return errs.New(errs.Unavailable, "", "Commands cannot have network here: Corral's egress proxy is not set up.")
		}
		if ok, why := ec.Runner.Network(); !ok {
			return errs.New(errs.Unavailable, "", "%s", why)
		}
	}
	r.anyDomain = a.Network && len(r.domains) == 0
	if r.anyDomain {
		if err := r.askOnce(policy.Network, r.whole); err != nil {
			return err
		}
		o.AddDetail("network allowed for this run")
	} else if r.wantsNet {
		o.AddDetail("network to " + sandbox.Clip(strings.Join(r.domains, ", "), 500))
	}
	return nil
}

// layerDirs maps the folders a command may write to their fsbox.Dir,
// keyed as execbox.Layer.Host names them.
func (s *Service) layerDirs(scope string, share paths.Target) (map[string]fsbox.Dir, error) {
	layout := s.box.Layout()
	dirs := map[string]fsbox.Dir{}
	t, err := layout.Resolve(scope, ".")
	if err != nil {
		return nil, err
	}
	share.Prefix = layout.SharedDir
	targets := []paths.Target{t, share}
	for _, r := range layout.Roots {
		if r.Access == paths.ReadWrite {
			targets = append(targets, paths.Target{Area: paths.InRoot, Dir: r.Path, Prefix: r.Path, Access: r.Access})
		}
	}
	for _, t := range targets {
		d, err := s.box.Dir(t)
		if err != nil {
			if t.Area == paths.InRoot {
				continue // a missing root is left out of the sandbox too
			}
			return nil, err
		}
		dirs[t.Dir] = d
	}
	return dirs, nil
}

// askedDetail says, in the command's event, what the owner was asked
// about its domains before it started and how it was answered.
func askedDetail(q netgate.Question) string {
	return fmt.Sprintf("network asked before it started (%s): %s", sandbox.Clip(strings.Join(q.Domains, ", "), 500), answerWords(q.Outcome))
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
func (r *run) recordAsked() {
	q := r.asked
	ev := audit.Event{
		Time: q.Start.UTC(), Client: r.ev.Client, User: r.o.Scope(), Op: "network.ask", Target: sandbox.Clip(strings.Join(q.Domains, ", "), 2000),
		Decision: audit.Deny, DecidedBy: q.Outcome.By, Answer: string(q.Outcome.Decision), AnsweredBy: q.Outcome.Via,
		DurationMs: r.s.box.Now().Sub(q.Start).Milliseconds(),
	}
	if q.Outcome.Allowed {
		ev.Decision = audit.Allow
	}
	if q.Outcome.Rule != nil {
		ev.Rule = q.Outcome.Rule.ID
	}
	link := "for command " + visible.Line(r.id)
	if id := r.o.Recorded(); id > 0 {
		link += fmt.Sprintf(" (event %d)", id)
	}
	n := fmt.Sprintf("%d domains", len(q.Domains))
	if len(q.Domains) == 1 {
		n = "1 domain"
	}
	ev.Detail = fmt.Sprintf("%s; %s asked before the command started; %s", link, n, answerWords(q.Outcome))
	r.s.box.Note(r.o.Context(), ev)
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
	c := sandbox.Clip(s, n)
	if len(c) == len(s) {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…(cut: %d more bytes)", c, len(s)-len(c))
}

// askOnce asks a one-time-only question; nothing is remembered.
func (r *run) askOnce(a policy.Access, target string) error {
	r.ev.Decision, r.ev.DecidedBy = audit.Deny, audit.ByStrict
	if r.s.box.Policy() == nil {
		return errs.New(errs.Denied, "", "Nobody is there to approve this, so Corral refused it.")
	}
	out, err := r.o.Check(policy.Request{Access: a, Target: target, OneTimeOnly: true}, string(a)+": ")
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
