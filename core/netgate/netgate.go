// Package netgate decides and opens the network connections of sandboxed
// commands. A command never shares the host's network: it runs in a
// network namespace of its own (core/execbox), and its only way out is
// Corral's egress proxy (app/egress), which asks a Run from this package
// for every connection. The Run is the fence.
//
// # What is guaranteed
//
//   - A connection is opened only to a public address. Loopback, private
//     (RFC 1918, unique-local), link-local, carrier-grade NAT, multicast,
//     unspecified and reserved addresses, their IPv4-mapped forms, every
//     address of the host's own interfaces, and every address on the
//     networks those interfaces are on (the LAN, whose devices may have
//     public addresses, as on most home IPv6 networks) are refused,
//     whether the program named them or a domain resolved to them, unless
//     the owner allowed that exact host and port (Config.AllowPrivate, or
//     an allow rule whose target is "host:port"). When the host's own
//     addresses or networks cannot be read, the gate cannot tell the LAN
//     from the internet and refuses every such connection. Names are
//     resolved here, once, and the checked address is the one dialled: a
//     name that resolves differently a moment later (DNS rebinding) cannot
//     redirect the connection.
//   - The domains a command may reach: with Command.AnyDomain (network:
//     true, which the owner allowed for this run), any public one; else only
//     those matching Command.Domains (its allowed_domains and package
//     bundles, "*.example.com" matching names below example.com), each
//     decided by the owner's rules or by the owner's answer to the one
//     question [Run.Ask] puts before the command starts, about every
//     declared domain no rule decides. A connection never waits for the
//     owner: a domain outside the list, or one that neither a rule nor
//     that answer decides, is refused at once, saying why. A deny rule
//     refuses in both modes. The answer holds for this run and for no
//     other run (unless it made rules).
//   - Every connection's event says what decided it (Event.Detail starts
//     with one of the Cause phrases: the command's list, a refused
//     address, a failed name lookup, a limit, a network rule, the owner's
//     answer) and names the command's event (Run.Started).
//   - Every connection attempt is one audit event (op "network.connect",
//     target "host:port"): a refusal before the proxy answers the program,
//     an allowed connection when it ends, with bytes up and down and its
//     duration. The command's request id and event link them to it.
//     Refusals cost Corral nothing but their event, so each agent's are
//     recorded one by one at a bounded rate (a token bucket of
//     RefusalBurst, refilled RefusalsPerSecond, shared by the agent's
//     commands); past it they are counted, and [Run.Close] records one
//     event saying how many of the run's were not recorded one by one.
//     A command looping on refused connections wrote 43,847 events (15 MB
//     of database, 148 MB of WAL) in 20 s before.
//   - At most MaxConns connections of a command are open at once, and all of
//     them together send at most MaxUpload bytes upstream.
//
// # What is not guaranteed
//
//   - An allowed domain is trusted with what the command sends it, up to
//     MaxUpload: the gate does not read the traffic.
//   - A domain's owner decides where its name points; the gate checks the
//     addresses, not who runs them.
//   - An allowed connection's event is written when it ends, so a crash
//     while it is open loses that one connection's event.
package netgate

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/policy"
	"corral/core/visible"
)

// Policy is what the gate needs of core/policy: rules without asking, and
// asking. *policy.Policy implements it.
type Policy interface {
	RuleFor(client, scope string, a policy.Access, target string) (policy.Rule, bool)
	Check(ctx context.Context, r policy.Request) (policy.Outcome, error)
}

// Resolver looks up a name's addresses (net.Resolver implements it).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config holds the gate's dependencies and limits.
type Config struct {
	Policy   Policy     // nil: only AnyDomain commands connect
	Audit    audit.Sink // required
	Resolver Resolver   // nil: net.DefaultResolver
	// Dial opens a TCP connection to a checked address; nil: net.Dialer
	// with a 10 s timeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// LocalAddrs lists the host's own addresses, refused like loopback;
	// nil: the addresses of every interface.
	LocalAddrs func() ([]netip.Addr, error)
	// LocalNets lists the networks the host is on (its interfaces'
	// prefixes, such as 192.168.1.0/24 or a home's public IPv6 /64):
	// every address in them is a neighbour on the owner's network, refused;
	// nil: the prefixes of every interface.
	LocalNets func() ([]netip.Prefix, error)
	// AllowPrivate lists "host:port" pairs the owner allows although they
	// are on the host or the home network (a printer, a home assistant).
	AllowPrivate []string
	MaxConns     int   // open connections per command; 0: 32
	MaxUpload    int64 // bytes sent upstream per command; 0: 256 MiB
	Logger       *slog.Logger
	Clock        func() time.Time // stamps the connections' events; nil: time.Now
}

// Defaults of Config.
const (
	DefaultMaxConns  = 32
	DefaultMaxUpload = 256 << 20
	dialTimeout      = 10 * time.Second
	resolveTimeout   = 10 * time.Second
	// MaxDomains bounds allowed_domains and the bundles together.
	MaxDomains = 64
	// RefusalBurst and RefusalsPerSecond bound how fast one agent's
	// refused connections are recorded one by one.
	RefusalBurst      = 200
	RefusalsPerSecond = 50
)

// Gate opens Runs. It is safe for concurrent use.
type Gate struct {
	cfg     Config
	log     *slog.Logger
	private map[string]bool
	// local lists the host's own addresses and its networks; by default
	// from one look at the interfaces per connection.
	local func() ([]netip.Addr, []netip.Prefix, error)

	mu      sync.Mutex
	buckets map[string]*refusalBucket // client → its refusals' bucket
}

// refusalBucket holds one agent's tokens for recording refusals.
type refusalBucket struct {
	tokens float64
	last   time.Time
}

// takeRefusal takes one token of client's bucket; false when it is empty.
func (g *Gate) takeRefusal(client string) bool {
	now := g.cfg.Clock()
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.buckets[client]
	if b == nil {
		b = &refusalBucket{tokens: RefusalBurst, last: now}
		g.buckets[client] = b
	}
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(RefusalBurst, b.tokens+d.Seconds()*RefusalsPerSecond)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// New checks cfg and returns a Gate.
func New(cfg Config) (*Gate, error) {
	if cfg.Audit == nil {
		return nil, errors.New("netgate: Audit is required")
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Dial == nil {
		d := &net.Dialer{Timeout: dialTimeout}
		cfg.Dial = d.DialContext
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	g := &Gate{cfg: cfg, log: cfg.Logger, private: map[string]bool{}, local: interfaces, buckets: map[string]*refusalBucket{}}
	if cfg.LocalAddrs != nil || cfg.LocalNets != nil {
		addrs, nets := cfg.LocalAddrs, cfg.LocalNets
		if addrs == nil {
			addrs = func() ([]netip.Addr, error) { a, _, err := interfaces(); return a, err }
		}
		if nets == nil {
			nets = func() ([]netip.Prefix, error) { _, n, err := interfaces(); return n, err }
		}
		g.local = func() ([]netip.Addr, []netip.Prefix, error) {
			a, errA := addrs()
			n, errN := nets()
			return a, n, errors.Join(errA, errN)
		}
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	for _, hp := range cfg.AllowPrivate {
		host, port, err := net.SplitHostPort(hp)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("netgate: allowed private address %q is not host:port", hp)
		}
		h, err := normalHost(host)
		if err != nil {
			return nil, fmt.Errorf("netgate: allowed private address %q: %w", hp, err)
		}
		g.private[net.JoinHostPort(h, port)] = true
	}
	return g, nil
}

// Command is what one command.run asks of the network.
type Command struct {
	Client, Scope string
	RequestID     string // the command's JSON-RPC id: links its connections to it
	Command       string // as the owner reads it in questions
	Reason        string // the agent's own words
	// AnyDomain: the owner allowed this run the network (network: true
	// with no list): every public domain, asked no further.
	AnyDomain bool
	// Domains are the patterns the command may ask for: "example.com" or
	// "*.example.com" (names below it). Checked by CheckDomains.
	Domains []string
}

// Refusal is a connection the gate refused, for the command's result.
type Refusal struct {
	Target string // host:port
	Reason string
}

// Summary is what a command did on the network.
type Summary struct {
	Connections int // allowed and opened
	Allowed     []string
	Refused     []Refusal
	BytesUp     int64
	BytesDown   int64
}

// Run decides the connections of one command; it implements Dialer.
type Run struct {
	g      *Gate
	id     string // unique to the run: its questions are its own
	cmd    Command
	budget atomic.Int64

	mu    sync.Mutex
	open  int
	once  map[string]onceAnswer // declared pattern → the owner's answer before the run, for this run
	event int64                 // the command's audit event, once it started
	sum   Summary
	// unrecorded counts refusals past the agent's bucket, not recorded
	// one by one; Close records them in one event.
	unrecorded int
}

var _ Dialer = (*Run)(nil)

// Open starts the gate for one command. Its Domains must have passed
// CheckDomains.
func (g *Gate) Open(c Command) *Run {
	r := &Run{g: g, id: "run-" + rand.Text(), cmd: c, once: map[string]onceAnswer{}}
	r.budget.Store(g.cfg.MaxUpload)
	return r
}

// Summary reports what the command did so far.
func (r *Run) Summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sum
	s.Allowed = slices.Clone(s.Allowed)
	s.Refused = slices.Clone(s.Refused)
	return s
}

// Dial implements Dialer.
func (r *Run) Dial(ctx context.Context, host string, port int) (*Conn, error) {
	start := r.g.cfg.Clock()
	target := net.JoinHostPort(host, strconv.Itoa(port))
	h, err := normalHost(host)
	if err != nil || port < 1 || port > 65535 {
		return nil, r.refuse(ctx, target, because(CauseLimit), fmt.Sprintf("Corral refused %s: it is not a valid host and port.", visible.Line(target)))
	}
	host, target = h, net.JoinHostPort(h, strconv.Itoa(port))

	r.mu.Lock()
	if r.open >= r.g.cfg.MaxConns {
		r.mu.Unlock()
		return nil, r.refuse(ctx, target, because(CauseLimit), fmt.Sprintf("Corral refused %s: the command already has %d connections open.", target, r.g.cfg.MaxConns))
	}
	r.open++
	r.mu.Unlock()
	release := func() {
		r.mu.Lock()
		r.open--
		r.mu.Unlock()
	}

	v, err := r.decide(ctx, host, target)
	if err != nil {
		release()
		return nil, err
	}
	addrs, err := r.addresses(ctx, host, port, target)
	if err != nil {
		release()
		return nil, err
	}
	var c net.Conn
	var last error
	for _, a := range addrs {
		c, last = r.g.cfg.Dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if last == nil {
			break
		}
	}
	if c == nil {
		release()
		kind, reason := dialFailure(last)
		why := fmt.Sprintf("Corral could not connect to %s: %s.", target, reason)
		v.cause = CauseConnect
		r.record(ctx, target, audit.Error, v, "", why, 0, start)
		r.note(Refusal{Target: target, Reason: why})
		return nil, errs.Wrap(last, kind, "", "%s", why)
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		c.Close()
		release()
		return nil, errs.New(errs.IO, "", "Corral could not connect to %s.", target)
	}
	remote := c.RemoteAddr().String()
	r.mu.Lock()
	r.sum.Connections++
	if !slices.Contains(r.sum.Allowed, target) {
		r.sum.Allowed = append(r.sum.Allowed, target)
	}
	r.mu.Unlock()
	return &Conn{TCPConn: tc, Budget: &r.budget, OnFinish: func(up, down int64) {
		release()
		r.mu.Lock()
		r.sum.BytesUp += up
		r.sum.BytesDown += down
		r.mu.Unlock()
		detail := fmt.Sprintf("to %s; up %d B, down %d B", remote, up, down)
		r.record(context.WithoutCancel(ctx), target, audit.Allow, v, detail, "", up+down, start)
	}}, nil
}

// Question is what the owner was asked before a command started, and
// the answer (Run.Ask).
type Question struct {
	Domains []string // the declared patterns no rule decided, asked in one question
	Outcome policy.Outcome
	Start   time.Time // when it was asked
}

// Ask puts the command's declared domains that no rule decides to the
// owner in one question, before the command starts, and keeps the answer
// for the run's connections: allowed domains connect without asking,
// denied ones are refused at once. It asks nothing (and returns a zero
// Question) for an AnyDomain command, whose question the caller asked,
// or when rules decide every domain. An error (ctx ended, too many
// questions waiting) means the command must not start; a denial or an
// unanswered question is no error: the command starts and those domains
// are refused, saying why.
func (r *Run) Ask(ctx context.Context) (Question, error) {
	pol := r.g.cfg.Policy
	if r.cmd.AnyDomain || pol == nil {
		return Question{}, nil
	}
	var open []string
	for _, d := range r.cmd.Domains {
		if _, ok := pol.RuleFor(r.cmd.Client, r.cmd.Scope, policy.Network, d); !ok {
			open = append(open, d)
		}
	}
	if len(open) == 0 {
		return Question{}, nil
	}
	q := Question{Domains: open, Start: r.g.cfg.Clock()}
	out, err := pol.Check(ctx, policy.Request{
		Client: r.cmd.Client, Scope: r.cmd.Scope, Access: policy.Network, Target: strings.Join(open, ", "), Domains: open,
		Command: r.cmd.Command, Reason: r.cmd.Reason, Run: r.id,
	})
	q.Outcome = out
	if err != nil {
		return q, err
	}
	v := verdict{by: out.By, cause: CauseAnswer, answer: string(out.Decision), via: out.Via}
	if out.By == audit.ByRule {
		v.cause = CauseRule
	}
	if out.Rule != nil {
		v.rule = out.Rule.ID
	}
	r.mu.Lock()
	for _, d := range open {
		r.once[d] = onceAnswer{out.Allowed, v, out.Reason}
	}
	r.mu.Unlock()
	return q, nil
}

// Started tells the run its command's audit event (recorded before the
// command started): the connections' events name it.
func (r *Run) Started(event int64) {
	r.mu.Lock()
	r.event = event
	r.mu.Unlock()
}

// decide applies the rules, the command's mode and its domains, and the
// owner's answer given before the command started. It never asks.
func (r *Run) decide(ctx context.Context, host, target string) (verdict, error) {
	// The list first: it is what this command asked for, and a rule for
	// another domain must not widen it.
	if !r.cmd.AnyDomain && !MatchAny(r.cmd.Domains, host) {
		return verdict{}, r.refuse(ctx, target, because(CauseList), fmt.Sprintf("Corral refused %s: %s is not in this command's allowed_domains or package_managers; ask for it there.", target, host))
	}
	pol := r.g.cfg.Policy
	if pol != nil {
		if rule, ok := pol.RuleFor(r.cmd.Client, r.cmd.Scope, policy.Network, host); ok {
			v := verdict{by: audit.ByRule, cause: CauseRule, rule: rule.ID}
			if rule.Decision == policy.EffectDeny {
				return verdict{}, r.refuse(ctx, target, v, fmt.Sprintf("Corral refused %s: the owner's rules deny %s.", target, host))
			}
			return v, nil
		}
	}
	if r.cmd.AnyDomain {
		return verdict{by: audit.ByOwner, cause: CauseAnyDomain}, nil
	}
	if pol == nil {
		return verdict{}, r.refuse(ctx, target, verdict{by: audit.ByStrict, cause: CauseAnswer}, fmt.Sprintf("Corral refused %s: nobody is there to approve it.", target))
	}
	// The answer before the run: an allow for any declared pattern the
	// host matches lets it through; else a denial says why.
	var denied *onceAnswer
	r.mu.Lock()
	for _, d := range r.cmd.Domains {
		a, ok := r.once[d]
		if !ok || !MatchAny([]string{d}, host) {
			continue
		}
		if a.allowed {
			r.mu.Unlock()
			return a.v, nil
		}
		denied = &a
	}
	r.mu.Unlock()
	if denied == nil {
		// A rule decided it when the command started and is gone now (or
		// the run was never asked).
		return verdict{}, r.refuse(ctx, target, because(CauseList), fmt.Sprintf("Corral refused %s: no rule allows %s now, and the owner is asked about a command's domains only before it starts; run the command again to be asked.", target, host))
	}
	var why string
	switch denied.v.by {
	case audit.ByTimeout:
		why = "the owner did not answer in time"
	case audit.ByPaused:
		why = "agents are paused"
	case audit.ByStrict:
		why = "nobody is there to approve it"
	case audit.ByRule:
		why = "the owner's rules deny it"
	default:
		why = "the owner denied it"
		if denied.reason != "" {
			why += ": " + denied.reason
		}
	}
	return verdict{}, r.refuse(ctx, target, denied.v, fmt.Sprintf("Corral refused %s: %s.", target, why))
}

// Cause is what decided a connection, as the first words of its event's
// Detail; the dashboard labels the event's row by them
// (assets/web/js/lib/netlabels.js), so they do not change.
type Cause string

// The causes.
const (
	CauseList      Cause = "the command's list"   // not in allowed_domains/package_managers (or no longer decided)
	CauseAddress   Cause = "refused address"      // this computer, the home network, a reserved range
	CauseLookup    Cause = "name lookup failed"   // the name has no address
	CauseLimit     Cause = "the command's limits" // too many connections, an invalid host or port
	CauseRule      Cause = "network rule"         // one of the owner's rules
	CauseAnswer    Cause = "the owner's answer"   // the question before the command (or nobody answering it)
	CauseAnyDomain Cause = "network for this run" // network: true, allowed by the owner for the run
	CauseConnect   Cause = "could not connect"    // allowed, but the host did not answer
)

// verdict is how a connection was decided, as its event records it: by
// what, and the owner's answer with the surface that gave it, or the rule.
type verdict struct {
	by                audit.DecidedBy
	cause             Cause
	answer, via, rule string
}

// because is a verdict of Corral's own fixed checks.
func because(c Cause) verdict { return verdict{by: audit.ByScope, cause: c} }

// onceAnswer is an answer that holds for the rest of a run, and how it
// was given.
type onceAnswer struct {
	allowed bool
	v       verdict
	reason  string // the owner's sentence with a denial, made safe (policy.AnswerReason)
}

// addresses resolves host and keeps the addresses a command may reach.
func (r *Run) addresses(ctx context.Context, host string, port int, target string) ([]netip.Addr, error) {
	if (host == "localhost" || strings.HasSuffix(host, ".localhost")) && !r.privateAllowed(host, target) {
		// RFC 6761: always this computer, whatever a resolver says.
		return nil, r.refuse(ctx, target, because(CauseAddress), fmt.Sprintf("Corral refused %s: %s is this computer itself, which commands may not reach.", target, host))
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		addrs, err = r.g.cfg.Resolver.LookupNetIP(rctx, "ip", host)
		cancel()
		if err != nil || len(addrs) == 0 {
			return nil, r.refuse(ctx, target, because(CauseLookup), fmt.Sprintf("Corral could not find the address of %s: the name lookup failed.", host))
		}
	}
	if r.privateAllowed(host, target) {
		return addrs, nil
	}
	// Without them a neighbour on the owner's network (or the host's own
	// public address) looks like the internet: refuse rather than guess.
	local, nets, err := r.g.local()
	if err != nil {
		r.g.log.Warn("netgate: the host's own addresses or networks are unknown", "err", err)
		return nil, r.refuse(ctx, target, because(CauseAddress), fmt.Sprintf("Corral refused %s: it could not read this computer's network addresses, so it cannot tell whether %s is on the home network.", target, host))
	}
	var ok []netip.Addr
	var bad netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if !Public(a) || slices.Contains(local, a) || onNet(nets, a) {
			bad = a
			continue
		}
		ok = append(ok, a)
	}
	if len(ok) == 0 {
		where := "an address on this computer or its home network"
		if bad.IsLoopback() || slices.Contains(local, bad) {
			where = "this computer itself"
		}
		name := host
		if name != bad.String() {
			name = fmt.Sprintf("%s (%s)", host, bad)
		}
		return nil, r.refuse(ctx, target, because(CauseAddress), fmt.Sprintf("Corral refused %s: %s is %s, which commands may not reach.", target, name, where))
	}
	return ok, nil
}

func (r *Run) privateAllowed(host, target string) bool {
	if r.g.private[target] {
		return true
	}
	if pol := r.g.cfg.Policy; pol != nil {
		rule, ok := pol.RuleFor(r.cmd.Client, r.cmd.Scope, policy.Network, target)
		return ok && rule.Decision == policy.EffectAllow && rule.Match == policy.Exact && rule.Target == target
	}
	return false
}

// refuse records a refused connection and returns the error the proxy
// passes on. A failed name lookup is recorded as a failure, not a
// refusal: nothing was decided against it.
func (r *Run) refuse(ctx context.Context, target string, v verdict, why string) error {
	if r.g.takeRefusal(r.cmd.Client) {
		d := audit.Deny
		if v.cause == CauseLookup {
			d = audit.Error
		}
		r.record(ctx, target, d, v, "", why, 0, r.g.cfg.Clock())
	} else {
		r.mu.Lock()
		r.unrecorded++
		r.mu.Unlock()
	}
	r.note(Refusal{Target: target, Reason: why})
	return errs.New(errs.Denied, "", "%s", why)
}

// Close records, in one event, how many of the run's refused connections
// were not recorded one by one (see the package doc). Call it once the
// command has ended; it does nothing when there are none.
func (r *Run) Close(ctx context.Context) {
	r.mu.Lock()
	n := r.unrecorded
	r.unrecorded = 0
	r.mu.Unlock()
	if n == 0 {
		return
	}
	r.record(ctx, "*", audit.Deny, because(CauseLimit), fmt.Sprintf("%d more refused connection attempts, over the %d a second recorded one by one", n, RefusalsPerSecond), "", 0, r.g.cfg.Clock())
}

func (r *Run) note(f Refusal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.sum.Refused) < 32 && !slices.Contains(r.sum.Refused, f) {
		r.sum.Refused = append(r.sum.Refused, f)
	}
}

// link names the command: "for command 7 (event 41)", the event once the
// command started (Run.Started). The dashboard makes it a link to that
// event.
func (r *Run) link() string {
	r.mu.Lock()
	ev := r.event
	r.mu.Unlock()
	s := "for command " + visible.Line(r.cmd.RequestID)
	if ev > 0 {
		s += fmt.Sprintf(" (event %d)", ev)
	}
	return s
}

// record writes a connection's event: its Detail is what decided it (the
// cause), the command it belongs to, then detail; a refusal's or
// failure's sentence is its Error.
func (r *Run) record(ctx context.Context, target string, d audit.Decision, v verdict, detail, why string, bytes int64, start time.Time) {
	full := string(v.cause) + "; " + r.link()
	if detail != "" {
		full += "; " + detail
	}
	_, err := r.g.cfg.Audit.Record(context.WithoutCancel(ctx), audit.Event{
		Time: start.UTC(), Client: r.cmd.Client, User: r.cmd.Scope, Op: "network.connect", Target: target,
		Decision: d, DecidedBy: v.by, Detail: full, Error: why, Bytes: bytes, DurationMs: r.g.cfg.Clock().Sub(start).Milliseconds(),
		Answer: v.answer, AnsweredBy: v.via, Rule: v.rule,
	})
	if err != nil {
		r.g.log.Error("netgate: audit event lost", "err", err, "target", target)
	}
}

// dialFailure is a connect failure's kind and, in a few words, its reason.
func dialFailure(err error) (errs.Kind, string) {
	var ne net.Error
	switch {
	case err == nil:
		return errs.IO, "no address to try"
	case errors.As(err, &ne) && ne.Timeout():
		return errs.Timeout, "it did not answer in time"
	case errors.Is(err, context.Canceled):
		return errs.IO, "the command ended"
	}
	return errs.IO, "the connection was refused or the host is unreachable"
}

// onNet reports whether a is on one of the networks.
func onNet(nets []netip.Prefix, a netip.Addr) bool {
	for _, p := range nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// interfaces lists the addresses of the host's interfaces and the
// networks they are on.
func interfaces() ([]netip.Addr, []netip.Prefix, error) {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil, nil, err
	}
	addrs := make([]netip.Addr, 0, len(as))
	nets := make([]netip.Prefix, 0, len(as))
	for _, a := range as {
		p, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		addrs = append(addrs, p.Addr().Unmap())
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		nets = append(nets, p.Masked())
	}
	return addrs, nets, nil
}
