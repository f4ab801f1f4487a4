package sandbox

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/fsbox"
	"corral/core/paths"
	"corral/core/policy"
	"corral/core/versions"
)

// Op is the operation skeleton the packages built on the sandbox use
// (core/links, core/undo, core/commands, core/applypatch,
// core/documents): begin → target → op → end,
// written once here, as each
// os.Root method is one line over a shared function. Begin selects the
// scope and refuses what the caller may not do (paused, its trust
// level), recording the refusal; Target resolves a path, decides the
// access and opens its folder; End records the operation's one audit
// event and returns the error to answer with. Fields of the event the
// operation adds (its detail, its bytes) are set through Event.
type Op struct{ o *op }

// Begin starts the operation name for caller c in the scope cx selects;
// a refusal is already recorded when it returns an error.
func (s *Sandbox) Begin(ctx context.Context, c Caller, cx *Context, name string) (*Op, error) {
	o, err := s.begin(ctx, c, cx, name, "")
	if err != nil {
		return nil, err
	}
	return &Op{o}, nil
}

// BeginOn is Begin for an operation on named (the command or path as
// the agent gave it) for the agent's reason: a refusal before a target
// is resolved (agents paused) is recorded with named, and the reason is
// shown whenever the owner is asked.
func (s *Sandbox) BeginOn(ctx context.Context, c Caller, cx *Context, name, reason, named string) (*Op, error) {
	o, err := s.beginOn(ctx, c, cx, name, reason, named)
	if err != nil {
		return nil, err
	}
	return &Op{o}, nil
}

// Started starts an operation no agent's call began — the owner's own
// (a key rotation) or a link's visitor — with ev as its event so far,
// in scope: nothing is checked, and End records it.
func (s *Sandbox) Started(ctx context.Context, ev audit.Event, scope string) *Op {
	return &Op{&op{s: s, ctx: ctx, start: s.now(), ev: ev, scope: scope}}
}

// Event is the operation's event, to add to before End.
func (o *Op) Event() *audit.Event { return &o.o.ev }

// Scope is the scope the operation acts in.
func (o *Op) Scope() string { return o.o.scope }

// Context is the context of the call the operation answers.
func (o *Op) Context() context.Context { return o.o.ctx }

// AddDetail adds d to the event's detail.
func (o *Op) AddDetail(d string) { o.o.ev.Detail = appendDetail(o.o.ev.Detail, d) }

// Permits asks the caller's trust level whether it may make access a at
// all (a command: policy.Execute) and records a refusal as the level's.
func (o *Op) Permits(a policy.Access) error { return o.o.permits(a) }

// Check puts r, as the operation's client and scope with the agent's
// reason, to the policy, which must not be nil, and records on the event
// who decided, the owner's answer (after label) and the rule that
// answered. The decision itself is left to the caller.
func (o *Op) Check(r policy.Request, label string) (policy.Outcome, error) {
	return o.o.check(r, label)
}

// RecordStart commits the operation's event before the operation begins
// (a command before it starts); the event says "running" until End
// completes it. On an error (what names the operation in its sentence)
// the operation must not begin.
func (o *Op) RecordStart(what string) error { return o.o.recordStart(what) }

// Recorded is the id of the event RecordStart or Intend committed, 0
// before either did.
func (o *Op) Recorded() int64 { return o.o.recorded }

// Priors keeps the content at rel of d, as Sandbox.Priors does, but in
// the share of the version store of the operation's caller (an agent's
// own, the owner's for the owner).
func (o *Op) Priors(d fsbox.Dir, rel string) ([]Prior, error) {
	ps, err := o.o.s.priors(o.o.keeper, d, rel, false, false)
	return exported(ps), err
}

// Target resolves p in the operation's scope, decides access a (asking
// the policy or the owner across the fence) and opens the folder the
// operation runs in.
func (o *Op) Target(p string, a policy.Access) (fsbox.Dir, paths.Target, error) {
	return o.o.target(p, a)
}

// End records the operation's event and returns err, or an io error when
// the event could not be recorded: no answer goes out unaudited.
func (o *Op) End(err error) error { return o.o.end(o.o.ctx, err) }

// Dir opens the folder of t, a target resolved in a scope or the shared
// folder, without deciding anything: for a caller that has checked t
// itself (a signed link).
func (s *Sandbox) Dir(t paths.Target) (fsbox.Dir, error) {
	r, err := s.root(t)
	if err != nil {
		return fsbox.Dir{}, err
	}
	return fsbox.Dir{Root: r, Prefix: t.Prefix}, nil
}

// CheckQuota refuses a write in dir (a scope or the shared folder, named
// what for the agent) when it is at or over its quota (quota.go).
func (s *Sandbox) CheckQuota(dir, what string) error { return s.checkQuota(dir, what) }

// Stale makes dir be measured again for its quota (a command wrote in
// it).
func (s *Sandbox) Stale(dir string) { s.stale(dir) }

// Note records ev, an event beside an operation's own (a question asked
// for a command); a failure is logged, not returned.
func (s *Sandbox) Note(ctx context.Context, ev audit.Event) {
	if _, err := s.audit.Record(context.WithoutCancel(ctx), ev); err != nil {
		s.log.Error("audit record failed", "op", ev.Op, "client", ev.Client, "err", err)
	}
}

// Now is the sandbox's clock.
func (s *Sandbox) Now() time.Time { return s.now() }

// Intend commits the operation's intent before it changes the owner's
// folders (journal.go): its event, "pending", with the changes it will
// make, whose old contents are already kept (Priors). When Intend fails
// nothing may change.
func (o *Op) Intend(changes []audit.Change) error { return o.o.intend(changes) }

// Change is the step that changes the owner's folders once the targets
// are decided: the intent cs (whose old contents are already kept) is
// committed, do makes the change, and cs become the event's changes.
// Nothing is changed when the intent cannot be committed; the changes
// are not recorded when do fails.
func (o *Op) Change(cs []audit.Change, do func() error) error { return o.o.change(cs, do) }

// SearchSlot waits, under the call's context, for the operation's turn
// at a search in this process (a patch's hunks, a grep, a find): one
// agent's searches run one at a time, all agents' a few at once. release
// gives the turn back.
func (o *Op) SearchSlot() (release func(), err error) { return o.o.searchSlot() }

// StillMay asks the owner's pause and the caller's level again, as they
// are now, after the operation waited (a document helper's slot): the
// refusal recorded as the pause's or the level's; nil for the owner.
func (o *Op) StillMay(a policy.Access) error { return o.o.stillMay(a) }

// Keep keeps b, the whole old content of the file at vis, in the share of
// the version store of the operation's caller, and returns its version
// (or, when it was too large to keep, why not: audit.Change.NotKept). An
// error means it could not be kept; the change must then not happen.
// Without a version store it keeps nothing and returns "".
func (o *Op) Keep(vis string, b []byte) (version, notKept string, err error) {
	s := o.o.s
	if !s.keeping() {
		return "", "", nil
	}
	v, err := s.versions.PutBytes(o.o.keeper, b)
	switch {
	case errors.Is(err, versions.ErrTooLarge):
		return "", notKeptTooLarge, nil
	case errors.Is(err, versions.ErrFull):
		return "", "", err
	case err != nil:
		return "", "", errs.Wrap(err, errs.IO, vis, "Corral could not keep the previous version of %s, so it did not change it.", vis)
	}
	return v, "", nil
}

// Logger is the sandbox's logger.
func (s *Sandbox) Logger() *slog.Logger { return s.log }

// Prior is what was at one path before a change, its content kept in
// the version store.
type Prior struct {
	Path    string // agent-visible
	Dir     bool
	Link    string // a symlink's target
	Size    int64
	Mode    uint32
	Version string // the kept content, "" when not kept
	NotKept string // why not
}

// Priors keeps, in the owner's share of the version store, the content
// at rel of d (a file, or with a folder everything below it, not
// following a symlink at rel) and describes it. An error means a version
// could not be kept; the change must then not happen. Without a version
// store it keeps nothing.
func (s *Sandbox) Priors(d fsbox.Dir, rel string) ([]Prior, error) {
	ps, err := s.priors(versions.Owner, d, rel, false, false)
	return exported(ps), err
}

func exported(ps []prior) []Prior {
	var out []Prior
	for _, p := range ps {
		out = append(out, Prior{Path: p.vis, Dir: p.dir, Link: p.link, Size: p.size, Mode: p.mode, Version: p.version, NotKept: p.notKept})
	}
	return out
}

// Removed turns what a deletion took away into changes. Folders are not
// listed: putting a file back makes the folders above it.
func Removed(ps []Prior) []audit.Change {
	var out []audit.Change
	for _, p := range ps {
		if p.Dir {
			continue
		}
		out = append(out, audit.Change{Path: p.Path, Kind: audit.Deleted, SizeBefore: p.Size, Version: p.Version, Mode: p.Mode, Link: p.Link, NotKept: p.NotKept})
	}
	return out
}

// OwnerDir opens the folder of the agent-visible path vis of scope for
// the owner: as an agent's operation would, but without asking (the
// owner is the one who would be asked), and never in Corral's own or
// system folders. done closes what it opened.
func (s *Sandbox) OwnerDir(scope, vis string) (fsbox.Dir, string, func(), error) {
	t, err := s.layout.Resolve(scope, vis)
	if err != nil {
		return fsbox.Dir{}, "", nil, err
	}
	if t.Area == paths.InScope || t.Area == paths.InShare || t.Area == paths.InRoot {
		host := filepath.Join(paths.Resolved(t.Dir), filepath.FromSlash(t.Rel))
		if t.Area == paths.InRoot && (s.isPrivate(host) || systemFolder(host)) {
			return fsbox.Dir{}, "", nil, errs.New(errs.Denied, vis, "%s belongs to Corral or the system.", vis)
		}
		r, err := s.root(t)
		if err != nil {
			return fsbox.Dir{}, "", nil, err
		}
		return fsbox.Dir{Root: r, Prefix: t.Prefix}, t.Rel, func() {}, nil
	}
	host := paths.Resolved(filepath.Join(paths.Resolved(t.Dir), t.Rel))
	if s.isPrivate(host) || systemFolder(host) {
		return fsbox.Dir{}, "", nil, errs.New(errs.Denied, vis, "%s belongs to Corral or the system.", vis)
	}
	dir := filepath.Dir(host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fsbox.Dir{}, "", nil, errs.Wrap(err, errs.IO, vis, "Corral could not make the folder of %s.", vis)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return fsbox.Dir{}, "", nil, hostOpenError(err, t)
	}
	return fsbox.Dir{Root: r, Prefix: t.Prefix}, filepath.Base(host), func() { r.Close() }, nil
}

// NotKeptSentence says why a version was not kept (audit.Change.NotKept),
// for a sentence to the owner.
func NotKeptSentence(why string) string {
	switch why {
	case notKeptTooLarge:
		return "the file was over the size limit for versions"
	case notKeptHardLinked:
		return "the file had more than one name"
	case notKeptSpecial:
		return "it was not a regular file"
	case NotKeptTooMany:
		return "the folder held too many files for Corral to keep"
	}
	return "Corral kept no versions then"
}
