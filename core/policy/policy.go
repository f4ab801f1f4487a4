// Package policy decides accesses that cross the fence: it applies the
// owner's remembered rules and otherwise asks, through the approvals
// broker, every surface the owner has open (native dialog, browser,
// companion). It is seed 004's permission callback grown into a broker.
//
// Guarantees: the first answer to an approval wins and later answers get
// an error; identical pending requests (client, scope, access, target)
// share one approval, except that a domain question is shared only within
// its run (Request.Run): an allow_once or deny_once answer reaches only
// the run whose command the owner was shown, and a rule an answer creates
// also answers the same question pending for other runs; no answer by
// the timeout denies, recorded as
// "timeout", and never creates a rule; with Strict and no surface
// subscribed a question is denied at once; while paused (all agents, or
// one client) every question is denied at once and pausing withdraws
// those waiting; one-time-only approvals (network, asked commands)
// accept only allow_once and deny_once and never create a rule; deny rules
// beat allow rules; rule changes are audited. A command's domains asked in
// one question (Request.Domains) are decided by no rule as a list (the
// caller leaves out what rules decide), and an answer that makes rules
// makes one per domain. The owner's sentence with a denial (Answer.Reason)
// is accepted with deny answers only and reaches the outcome as one
// visible line of at most MaxAnswerReason runes.
//
// Not guaranteed: policy does not know scopes or roots — the sandbox
// facade allows those before it asks — and it trusts the "by" names its
// callers give for who answered.
package policy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/paths"
	"corral/core/visible"
)

// RuleStore persists "always" rules. Session rules never reach it.
type RuleStore interface {
	SaveRule(ctx context.Context, r Rule) error
	DeleteRule(ctx context.Context, id string) (bool, error)
	LoadRules(ctx context.Context) ([]Rule, error)
}

// RulesSaver is implemented by rule stores that can save several rules
// at once, all or none, even through a crash: ImportRules uses it when
// there (else it saves them one by one, deleting those saved when one
// fails, which a crash half-way cannot do).
type RulesSaver interface {
	SaveRules(ctx context.Context, rules []Rule) error
}

// Approval is a pending question (docs/protocol.md section 6, `approval`).
type Approval struct {
	ID          string
	Client      string
	User        string
	Access      Access
	Target      string
	Reason      string
	OneTimeOnly bool
	RequestedAt time.Time
	ExpiresAt   time.Time
	Description string
	Folder      string // what an answer widened to "folder" covers; empty if it cannot be widened
	// Domain is set on a network question about one domain (Target is the
	// domain too): a command wants to connect there. Command is that
	// command, as the owner reads it.
	Domain  string
	Command string
	// Domains, on a command's question asked before it starts, lists the
	// domains it declared that no rule covers (Target and Domain are
	// them joined by ", "): one answer decides them all, and an answer
	// that makes rules makes one per domain.
	Domains []string
	// Sensitive, when set, says why the target holds secrets (SSH keys, a
	// browser profile …): surfaces mark the question, make Deny the
	// default and offer no folder-wide answer.
	Sensitive string
	// Asked is the path the agent named when it leads elsewhere (through
	// a symbolic link): "asked for Asked, which is Target".
	Asked string
	// Preview shows what a write would do: its size, whether it replaces
	// a file, and its first lines.
	Preview string
	// Level is the asking agent's trust level when the question was
	// asked (SetLevelOf); "" when nothing tells the policy levels.
	Level Level
}

// Decisions lists the answers the approval accepts.
func (a Approval) Decisions() []Decision {
	var out []Decision
	for _, c := range a.Choices() {
		out = append(out, c.Decision)
	}
	return out
}

// Surface is a place where the owner can answer: the Asker side of the
// broker. Calls come from the broker's goroutines and must not block.
type Surface interface {
	ApprovalRequested(a Approval)
	ApprovalResolved(id string, d Decision, by string)
}

// Request is an access that needs the owner's decision.
type Request struct {
	Client      string
	Scope       string
	Access      Access
	Target      string // absolute host path, or the command line
	Reason      string // the agent's own words, if any
	OneTimeOnly bool
	Folder      bool // Target is a folder: an answer widened to "folder" covers it, not its parent
	// Command, on a network request that is not one-time-only, is the
	// command wanting to reach the domain in Target (shown to the owner).
	Command string
	// Run names the run of Command (unique to it, such as netgate's run
	// id): domain questions of different runs are asked apart, so a
	// one-time answer covers only the run whose command the owner saw.
	// Questions of one run (two connections to the domain) share.
	Run string
	// Domains, on a network request that is not one-time-only, asks about
	// several domains in one question (Target is them joined by ", "):
	// a command's declared domains, before it starts. The caller leaves
	// out those a rule decides; Check applies no rule to the list.
	Domains []string
	// Sensitive, Asked and Preview are shown with the question (see
	// Approval).
	Sensitive, Asked, Preview string
}

// domainQuestion reports whether r asks about one domain for a command:
// rules apply to it and identical questions are shared.
func (r Request) domainQuestion() bool { return r.Access == Network && !r.OneTimeOnly }

// Outcome is the decision on a request.
type Outcome struct {
	Allowed  bool
	By       audit.DecidedBy // rule, owner, timeout, strict or paused
	Decision Decision        // the owner's answer when By is owner
	Via      string          // which of the owner's surfaces answered (Answer.Via)
	Rule     *Rule           // the rule that decided, or that the answer created
	// Reason is the owner's sentence with a denial (Answer.Reason), made
	// safe to pass on and show (AnswerReason); "" without one.
	Reason string
}

// Config holds the policy's dependencies and settings.
type Config struct {
	Rules   RuleStore
	Audit   audit.Sink
	Timeout time.Duration // approval_timeout
	Strict  bool          // no surface subscribed: deny at once
	// Guarded are folders no answer may be widened to cover: an answer
	// "for the whole folder" is not offered, and refused, when the folder
	// is one of them or holds one (the owner's home, Corral's own files,
	// the sandbox base). "/" holds everything, so it is never offered.
	Guarded []string
	// Home is the owner's home folder (one of Guarded): rules written by
	// hand may name what is inside it, but no folder of secrets in it.
	Home   string
	Logger *slog.Logger
	Clock  func() time.Time // nil: time.Now
}

// Policy holds the rules and the pending approvals. Safe for concurrent use.
type Policy struct {
	cfg Config
	log *slog.Logger
	now func() time.Time

	mu       sync.Mutex
	rules    []Rule
	pending  map[key]*pending
	byID     map[string]*pending
	surfaces map[*surfaceReg]struct{}
	paused   bool
	held     map[string]bool // clients paused one by one (SetClientPaused)

	levelOf atomic.Pointer[func(client string) Level] // SetLevelOf
}

// SetLevelOf tells the policy how to learn an agent's trust level (the
// agent directory's): every question then carries the asking agent's
// level, so each surface can show it. f is called without the policy's
// lock held and must not block.
func (p *Policy) SetLevelOf(f func(client string) Level) { p.levelOf.Store(&f) }

// levelFor is client's level as SetLevelOf's function says, or "".
func (p *Policy) levelFor(client string) Level {
	if f := p.levelOf.Load(); f != nil && *f != nil {
		return (*f)(client)
	}
	return ""
}

type key struct {
	client, scope string
	access        Access
	target        string
	run           string // set for domain questions: shared within a run only
	nonce         string // set for one-time-only questions, which are never shared
}

// MaxPendingPerClient bounds the questions one client can have waiting,
// so that no agent can flood the owner's surfaces.
const MaxPendingPerClient = 32

// pendingOf counts the client's waiting questions; p.mu is held.
func (p *Policy) pendingOf(client string) int {
	n := 0
	for k := range p.pending {
		if k.client == client {
			n++
		}
	}
	return n
}

type pending struct {
	a       Approval
	waiters int
	done    chan struct{} // closed when answered, timed out or withdrawn
	out     Outcome
}

type surfaceReg struct{ s Surface }

// New loads the persisted rules and returns the policy.
func New(ctx context.Context, cfg Config) (*Policy, error) {
	if cfg.Rules == nil || cfg.Audit == nil {
		return nil, errors.New("policy: Rules and Audit are required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	p := &Policy{cfg: cfg, log: cfg.Logger, now: cfg.Clock, pending: map[key]*pending{}, byID: map[string]*pending{}, surfaces: map[*surfaceReg]struct{}{}}
	if p.log == nil {
		p.log = slog.Default()
	}
	if p.now == nil {
		p.now = time.Now
	}
	rules, err := cfg.Rules.LoadRules(ctx)
	if err != nil {
		return nil, fmt.Errorf("load rules: %w", err)
	}
	for i := range rules {
		rules[i].Description = rules[i].describe()
	}
	p.rules = rules
	return p, nil
}

func newID(prefix string) string {
	b := make([]byte, 9)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Subscribe adds a surface; it is told about every pending approval at
// once and about each new one and each answer until cancel is called.
func (p *Policy) Subscribe(s Surface) (cancel func()) {
	reg := &surfaceReg{s: s}
	p.mu.Lock()
	p.surfaces[reg] = struct{}{}
	current := p.pendingLocked()
	p.mu.Unlock()
	for _, a := range current {
		s.ApprovalRequested(a)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			delete(p.surfaces, reg)
			p.mu.Unlock()
		})
	}
}

func (p *Policy) surfacesLocked() []Surface {
	out := make([]Surface, 0, len(p.surfaces))
	for r := range p.surfaces {
		out = append(out, r.s)
	}
	return out
}

// Pending lists the pending approvals, oldest first.
func (p *Policy) Pending() []Approval {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pendingLocked()
}

func (p *Policy) pendingLocked() []Approval {
	out := make([]Approval, 0, len(p.byID))
	for _, pd := range p.byID {
		out = append(out, pd.a)
	}
	slices.SortFunc(out, func(a, b Approval) int { return a.RequestedAt.Compare(b.RequestedAt) })
	return out
}

// visibleReason makes an agent's free text safe to show a person: invisible and
// reordering characters are made visible as escapes (visible.Text) and
// the text is cut to n runes, saying so.
func visibleReason(s string, n int) string {
	return visible.Cut(visible.Text(s), n)
}

// Describe is the one-line question for a request, in plain words.
func Describe(client string, a Access, target string) string {
	switch a {
	case Execute:
		return fmt.Sprintf("%s wants to run: %s", client, target)
	case Network:
		return fmt.Sprintf("%s wants network access for: %s", client, target)
	}
	return fmt.Sprintf("%s wants to %s %s", client, a.verb(), target)
}

// widened is the folder an answer to r widened to "folder" covers: the
// target itself when it is a folder, else the folder holding it.
func widened(r Request) string {
	switch {
	case r.Access == Execute || r.Access == Network:
		return ""
	case r.Folder:
		return r.Target
	}
	return path.Dir(r.Target)
}

// widenable returns folder when an answer may cover it, else "".
func (p *Policy) widenable(folder string) string {
	if folder == "" || folder == "/" {
		return ""
	}
	for _, g := range p.cfg.Guarded {
		if paths.Within(g, folder) {
			return ""
		}
	}
	return folder
}

type waitingKey struct{}

// WithWaiting returns ctx carrying f, which Check calls (on its own
// goroutine, once) when the request under ctx starts waiting for the
// owner's answer: a transport tells its client what the call waits for.
func WithWaiting(ctx context.Context, f func(Approval)) context.Context {
	return context.WithValue(ctx, waitingKey{}, f)
}

var errWithdrawn = errs.New(errs.Denied, "", "The request was withdrawn before the owner answered.")

// Check decides a request: a matching rule answers; otherwise the owner
// is asked (unless paused, or strict with nobody to ask) and the call
// blocks until an answer, the timeout, or ctx ending (which withdraws the
// caller's interest; the approval is withdrawn when nobody waits). With
// an error, Outcome.By may still say how the refusal is to be recorded.
func (p *Policy) Check(ctx context.Context, r Request) (Outcome, error) {
	if !r.Access.valid() {
		return Outcome{}, fmt.Errorf("policy: unknown access %q", r.Access)
	}
	now := p.now()
	level := p.levelFor(r.Client) // before the lock: the directory has its own
	p.mu.Lock()
	if !r.OneTimeOnly && len(r.Domains) == 0 {
		// A folder-wide allow never answers for a secret inside the
		// folder (as an answer is never widened to one): it is asked.
		if rule, ok := decide(p.rules, r.Client, r.Scope, r.Access, r.Target, now); ok && !(r.Sensitive != "" && rule.Decision == EffectAllow && rule.Match == Prefix && rule.Target != r.Target) {
			p.mu.Unlock()
			return Outcome{Allowed: rule.Decision == EffectAllow, By: audit.ByRule, Rule: &rule}, nil
		}
	}
	if p.paused || p.held[r.Client] {
		p.mu.Unlock()
		return Outcome{By: audit.ByPaused}, nil
	}
	if p.cfg.Strict && len(p.surfaces) == 0 {
		p.mu.Unlock()
		return Outcome{By: audit.ByStrict}, nil
	}
	if ctx.Err() != nil {
		p.mu.Unlock()
		return Outcome{By: audit.ByTimeout}, errWithdrawn // asking would only flash a question
	}
	once := r.OneTimeOnly
	k := key{client: r.Client, scope: r.Scope, access: r.Access, target: r.Target}
	if once {
		// A one-time answer lets exactly one request through: identical
		// one-time requests are asked one by one, never shared.
		k.nonce = newID("")
	}
	if r.domainQuestion() {
		// The owner sees one run's command: the answer is that run's.
		k.run = r.Run
	}
	pd, shared := p.pending[k]
	if !shared && p.pendingOf(r.Client) >= MaxPendingPerClient {
		p.mu.Unlock()
		return Outcome{}, errs.New(errs.Denied, "", "This agent already has %d questions waiting for the owner; Corral refused another one.", MaxPendingPerClient)
	}
	if !shared {
		pd = &pending{done: make(chan struct{}), a: Approval{
			ID: newID("ap_"), Client: r.Client, User: r.Scope, Access: r.Access, Target: r.Target,
			Reason: visibleReason(r.Reason, 500), OneTimeOnly: once, RequestedAt: now.UTC(), ExpiresAt: now.Add(p.cfg.Timeout).UTC(),
			Description: Describe(r.Client, r.Access, r.Target), Folder: p.widenable(widened(r)), Level: level,
		}}
		pd.a.Sensitive, pd.a.Asked, pd.a.Preview = r.Sensitive, visibleReason(r.Asked, 2000), visibleReason(r.Preview, 2000)
		if r.Sensitive != "" {
			pd.a.Folder = "" // never a folder-wide answer for secrets
		}
		if r.domainQuestion() {
			pd.a.Domain, pd.a.Command = r.Target, visibleReason(r.Command, 500)
			pd.a.Domains = slices.Clone(r.Domains)
			pd.a.Description = fmt.Sprintf("%s wants to connect to %s for: %s", r.Client, r.Target, pd.a.Command)
		}
		p.pending[k], p.byID[pd.a.ID] = pd, pd
	}
	pd.waiters++
	surfaces := p.surfacesLocked()
	p.mu.Unlock()
	if !shared {
		for _, s := range surfaces {
			s.ApprovalRequested(pd.a)
		}
	}
	if f, ok := ctx.Value(waitingKey{}).(func(Approval)); ok && f != nil {
		f(pd.a)
	}

	timer := time.NewTimer(pd.a.ExpiresAt.Sub(p.now()))
	defer timer.Stop()
	select {
	case <-pd.done:
		return pd.out, nil
	case <-timer.C:
		p.finish(pd, Outcome{By: audit.ByTimeout}, DenyOnce, "timeout")
		<-pd.done
		return pd.out, nil
	case <-ctx.Done():
		p.mu.Lock()
		pd.waiters--
		last := pd.waiters == 0
		p.mu.Unlock()
		if last {
			p.finish(pd, Outcome{By: audit.ByOwner}, DenyOnce, "withdrawn")
		}
		// Recorded as a timeout: nobody answered while the agent waited.
		return Outcome{By: audit.ByTimeout}, errWithdrawn
	}
}

// finish resolves pd once with out; it reports whether this call did.
func (p *Policy) finish(pd *pending, out Outcome, d Decision, by string) bool {
	if !p.claim(pd) {
		return false
	}
	p.complete(pd, out, d, by)
	return true
}

// claim takes pd's id out of the pending set so that only one answer
// wins. Until complete, identical requests still join pd: they get the
// same answer as the ones already waiting.
func (p *Policy) claim(pd *pending) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, live := p.byID[pd.a.ID]; !live {
		return false
	}
	delete(p.byID, pd.a.ID)
	return true
}

// complete wakes pd's waiters with out and tells the surfaces.
func (p *Policy) complete(pd *pending, out Outcome, d Decision, by string) {
	p.mu.Lock()
	for k, v := range p.pending {
		if v == pd {
			delete(p.pending, k)
			break
		}
	}
	pd.out = out
	close(pd.done)
	surfaces := p.surfacesLocked()
	p.mu.Unlock()
	for _, s := range surfaces {
		s.ApprovalResolved(pd.a.ID, d, by)
	}
}

// Answer is the owner's response to an approval.
type Answer struct {
	ID        string
	Decision  Decision
	Widen     string        // "folder": the rule covers the target's folder
	ExpiresIn time.Duration // for *_always: the rule expires after this long (0: never)
	By        string        // who answered: "owner", "tray", "browser", a device name
	// Via is the surface that answered, as the audit log records it
	// (audit.Event.AnsweredBy): "dialog", "cli", "dashboard:<browser>",
	// "device:<name>".
	Via string
	// Reason is the owner's short sentence with a denial ("use the share
	// folder instead"): the agent reads it in the error it gets and the
	// audit log keeps it. Only deny_once and deny_always take one. It is
	// passed through AnswerReason.
	Reason string
}

// MaxAnswerReason bounds the owner's sentence with a denial, in runes.
const MaxAnswerReason = 500

// AnswerReason makes the owner's sentence with a denial safe to pass on
// and show on any surface: trimmed, one line (control, format and line
// characters made visible as escapes, visible.Line), cut to
// MaxAnswerReason runes, saying so. Whoever typed it, it is shown as text.
func AnswerReason(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return visible.Cut(visible.Line(s), MaxAnswerReason)
}

// WithReason ends a denial sentence with the owner's reason, if any:
// "The owner denied access to /x." becomes "The owner denied access to
// /x: use the share folder instead."
func WithReason(sentence, reason string) string {
	if reason == "" {
		return sentence
	}
	end := ""
	if !strings.ContainsAny(reason[len(reason)-1:], ".!?") {
		end = "."
	}
	return strings.TrimSuffix(sentence, ".") + ": " + reason + end
}

// Respond answers a pending approval. The first answer wins; later ones,
// and answers to unknown ids, are errors.
func (p *Policy) Respond(ctx context.Context, ans Answer) error {
	if !ans.Decision.valid() {
		return errs.New(errs.InvalidParams, "", "decision must be one of allow_once, allow_session, allow_always, deny_once, deny_always.")
	}
	if ans.Widen != "" && ans.Widen != "folder" {
		return errs.New(errs.InvalidParams, "", `widen must be "folder" or left out.`)
	}
	if ans.ExpiresIn < 0 || (ans.ExpiresIn > 0 && ans.Decision != AllowAlways && ans.Decision != DenyAlways) {
		return errs.New(errs.InvalidParams, "", "expires_in goes with allow_always or deny_always only.")
	}
	ans.Reason = AnswerReason(ans.Reason)
	if ans.Reason != "" && ans.Decision.Allows() {
		return errs.New(errs.InvalidParams, "", "reason goes with deny_once or deny_always only.")
	}
	p.mu.Lock()
	pd, ok := p.byID[ans.ID]
	p.mu.Unlock()
	if !ok {
		return errs.New(errs.NotFound, "", "There is no pending approval %q: it was already answered, withdrawn or timed out.", ans.ID)
	}
	a := pd.a
	if !slices.Contains(a.Decisions(), ans.Decision) {
		return errs.New(errs.InvalidParams, "", "This request can only be allowed or denied once (%s is not accepted).", ans.Decision)
	}
	if ans.Widen == "folder" && (a.Access == Execute || a.Access == Network) {
		return errs.New(errs.InvalidParams, "", "Only file requests can be widened to their folder.")
	}
	if ans.Widen == "folder" && a.Folder == "" {
		return errs.New(errs.InvalidParams, "", "This answer cannot cover the whole folder: it would reach your home folder, Corral's own files or the whole disk. Answer for %s alone.", a.Target)
	}
	out := Outcome{Allowed: ans.Decision.Allows(), By: audit.ByOwner, Decision: ans.Decision, Via: ans.Via, Reason: ans.Reason}
	var rule *Rule
	if ans.Decision == AllowSession || ans.Decision == AllowAlways || ans.Decision == DenyAlways {
		r := Rule{
			ID: newID("ru_"), Client: a.Client, User: a.User, Access: a.Access, Target: a.Target, Match: Exact,
			Decision: EffectAllow, Lifetime: Always, Created: p.now().UTC(), CreatedBy: ans.By,
		}
		if ans.Decision == DenyAlways {
			r.Decision = EffectDeny
		}
		if ans.Decision == AllowSession {
			r.Lifetime = Session
		}
		if ans.Widen == "folder" {
			r.Target, r.Match = a.Folder, Prefix
		}
		if len(a.Domains) > 1 {
			r.Target = a.Domains[0] // and one rule like it per other domain
		}
		if ans.ExpiresIn > 0 {
			exp := r.Created.Add(ans.ExpiresIn)
			r.Expires = &exp
		}
		rule = &r
	}
	// Claim the approval first so a concurrent answer loses cleanly, then
	// store the rule before waking the waiters: the next identical request
	// must see it. If the rule cannot be stored, the answer still holds
	// for this request and the answerer is told.
	if !p.claim(pd) {
		return errs.New(errs.Conflict, "", "Approval %q was answered a moment ago by someone else.", ans.ID)
	}
	var err error
	if rule != nil {
		if err = p.addRules(ctx, *rule, a.Domains); err == nil {
			out.Rule = rule
		}
	}
	p.complete(pd, out, ans.Decision, ans.By)
	if out.Rule != nil && len(a.Domains) < 2 {
		p.answerByRule(pd, *out.Rule, ans.Decision)
	}
	return err
}

// answerByRule answers, with rule (made by the answer d to pd), the
// questions still pending that ask what pd asked for another run (domain
// questions are asked per run): the owner's rule decides them as it
// decides the next one.
func (p *Policy) answerByRule(pd *pending, rule Rule, d Decision) {
	a := pd.a
	p.mu.Lock()
	var same []*pending
	for k, v := range p.pending {
		if v != pd && k.nonce == "" && k.client == a.Client && k.scope == a.User && k.access == a.Access && k.target == a.Target {
			same = append(same, v)
		}
	}
	p.mu.Unlock()
	out := Outcome{Allowed: rule.Decision == EffectAllow, By: audit.ByRule, Rule: &rule}
	for _, v := range same {
		p.finish(v, out, d, "rule")
	}
}

// addRules adds r and, for a question about several domains (r is for
// the first), one rule like r for each of the others.
func (p *Policy) addRules(ctx context.Context, r Rule, domains []string) error {
	if err := p.addRule(ctx, r); err != nil || len(domains) < 2 {
		return err
	}
	for _, d := range domains[1:] {
		each := r
		each.ID, each.Target = newID("ru_"), d
		if err := p.addRule(ctx, each); err != nil {
			return err
		}
	}
	return nil
}

// addRule stores (always) or keeps (session) a rule and audits it.
func (p *Policy) addRule(ctx context.Context, r Rule) error {
	if err := CheckTarget(r.Access, r.Target); err != nil {
		return err
	}
	r.Description = r.describe()
	if r.Lifetime == Always {
		if err := p.cfg.Rules.SaveRule(ctx, r); err != nil {
			return errs.Wrap(err, errs.IO, "", "Corral could not save the rule.")
		}
	}
	p.mu.Lock()
	p.rules = append(p.rules, r)
	p.mu.Unlock()
	return p.record(ctx, "rule.create", r.User, r.Target, r.Description, r.CreatedBy)
}

func (p *Policy) record(ctx context.Context, op, scope, target, detail, by string) error {
	_, err := p.cfg.Audit.Record(context.WithoutCancel(ctx), audit.Event{
		Time: p.now().UTC(), Client: by, User: scope, Op: op, Target: target,
		Decision: audit.Allow, DecidedBy: audit.ByOwner, Detail: detail,
	})
	if err != nil {
		return errs.Wrap(err, errs.IO, "", "Corral could not write its audit log.")
	}
	return nil
}

// RuleFor returns the rule that decides an access to target without
// asking: deny beats allow, the most specific allow wins.
func (p *Policy) RuleFor(client, scope string, a Access, target string) (Rule, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return decide(p.rules, client, scope, a, target, p.now())
}

// Rules lists the rules in force (expired ones left out), oldest first.
func (p *Policy) Rules() []Rule {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Rule, 0, len(p.rules))
	for _, r := range p.rules {
		if r.Expires == nil || now.Before(*r.Expires) {
			out = append(out, r)
		}
	}
	return out
}

// Revoke removes a rule.
func (p *Policy) Revoke(ctx context.Context, id, by string) error {
	p.mu.Lock()
	i := slices.IndexFunc(p.rules, func(r Rule) bool { return r.ID == id })
	if i < 0 {
		p.mu.Unlock()
		return errs.New(errs.NotFound, "", "There is no rule %q.", id)
	}
	r := p.rules[i]
	p.rules = slices.Delete(p.rules, i, i+1)
	p.mu.Unlock()
	if r.Lifetime == Always {
		if _, err := p.cfg.Rules.DeleteRule(ctx, id); err != nil {
			p.mu.Lock()
			p.rules = append(p.rules, r)
			p.mu.Unlock()
			return errs.Wrap(err, errs.IO, "", "Corral could not delete the rule.")
		}
	}
	return p.record(ctx, "rule.revoke", r.User, r.Target, r.Description, by)
}

// SetPaused pauses or resumes agents: while paused every question is
// denied at once and pending ones are denied now.
func (p *Policy) SetPaused(ctx context.Context, paused bool, by string) error {
	p.mu.Lock()
	changed := p.paused != paused
	p.paused = paused
	var live []*pending
	if paused {
		for _, pd := range p.byID {
			live = append(live, pd)
		}
	}
	p.mu.Unlock()
	for _, pd := range live {
		p.finish(pd, Outcome{By: audit.ByPaused}, DenyOnce, "paused")
	}
	if !changed {
		return nil
	}
	op := "agents.resume"
	if paused {
		op = "agents.pause"
	}
	return p.record(ctx, op, "", "", "", by)
}

// SetClientPaused pauses or resumes one client, as SetPaused does for
// all: while it is paused its questions are denied at once, and those it
// already has waiting are denied now (surfaces see them resolved by
// "paused"; other clients' questions stay). It returns how many were
// withdrawn. It records nothing: the caller audits the change.
func (p *Policy) SetClientPaused(client string, paused bool) int {
	p.mu.Lock()
	if paused {
		if p.held == nil {
			p.held = map[string]bool{}
		}
		p.held[client] = true
	} else {
		delete(p.held, client)
	}
	var live []*pending
	if paused {
		for _, pd := range p.byID {
			if pd.a.Client == client {
				live = append(live, pd)
			}
		}
	}
	p.mu.Unlock()
	n := 0
	for _, pd := range live {
		if p.finish(pd, Outcome{By: audit.ByPaused}, DenyOnce, "paused") {
			n++
		}
	}
	return n
}

// WithdrawForReadOnly withdraws (denies, by level) client's questions
// waiting for the owner other than reads, when the owner makes it
// Read-only: the sandbox judges a call's level when the call starts, so
// without this an owner's later Allow on a card shown before the change
// let a Read-only agent write, delete or run a command. It says how many
// it withdrew.
func (p *Policy) WithdrawForReadOnly(client string) int {
	return p.withdraw(client, func(a Approval) bool { return a.Access != Read },
		Outcome{By: audit.ByLevel, Reason: "the owner made this agent Read-only"}, "level")
}

// WithdrawRemoved withdraws (denies, by the owner) every question of
// client still waiting for the owner, when the owner removes that agent:
// hanging up does not end a question asked in an MCP request over HTTP,
// and the owner's later Allow on it would let the removed agent act. It
// says how many it withdrew.
func (p *Policy) WithdrawRemoved(client string) int {
	return p.withdraw(client, func(Approval) bool { return true },
		Outcome{By: audit.ByOwner, Reason: "the owner removed this agent"}, "withdrawn")
}

// withdraw denies client's waiting questions that which picks, with out.
func (p *Policy) withdraw(client string, which func(Approval) bool, out Outcome, via string) int {
	p.mu.Lock()
	var live []*pending
	for _, pd := range p.byID {
		if pd.a.Client == client && which(pd.a) {
			live = append(live, pd)
		}
	}
	p.mu.Unlock()
	n := 0
	for _, pd := range live {
		if p.finish(pd, out, DenyOnce, via) {
			n++
		}
	}
	return n
}

// Holds says whether client may not begin access a now, and why: every
// agent paused or this one (SetClientPaused) answer audit.ByPaused and
// the refusal; a client made Read-only (SetLevelOf's function) wanting
// more than to read answers audit.ByLevel and the level's refusal; else
// "" and nil. A call that began before the owner's change asks again
// before it starts (core/commands, once a command has its slot).
func (p *Policy) Holds(client string, a Access) (audit.DecidedBy, error) {
	p.mu.Lock()
	paused, held := p.paused, p.held[client]
	p.mu.Unlock()
	switch {
	case paused:
		return audit.ByPaused, errs.New(errs.Denied, "", "Agents are paused by the owner, so Corral refused this. It works again once the owner resumes agents.")
	case held:
		return audit.ByPaused, errs.New(errs.Denied, "", "The owner has paused this agent (%s), so Corral refused this. It works again once the owner resumes it.", client)
	}
	if err := p.levelFor(client).Permits(a); err != nil {
		return audit.ByLevel, err
	}
	return "", nil
}

// Paused reports whether agents are paused.
func (p *Policy) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}
