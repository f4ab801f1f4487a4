// Package sandbox is Corral's facade: the one place where an agent's
// request becomes a file operation. Every method selects the request's
// scope, resolves the path (core/paths), decides whether the access is
// allowed, performs it inside an os.Root (core/fsbox) and records exactly
// one audit event, committed before the method returns.
//
// Guarantees: no method opens a host path that did not come from the
// layout's scope folders, the shared folder or a configured root; every
// call that reaches a method is audited, including those denied before any
// disk access; errors are *errs.Error values whose sentences name only
// agent-visible paths. A change to the owner's folders is journaled: its
// intent is committed before it is made, and Recover rolls back what a
// crash interrupted (journal.go). Arguments and results are plain Go types: their
// JSON form (names, required parameters) is app/wire's, not core's.
//
// Packages built on the facade (core/links, core/undo, core/commands,
// core/applypatch, core/documents) use its operation skeleton, Op
// (op.go): Begin, Target and End are the same begin → target → end every
// method here runs, and Intend, Change, Keep and Priors the same journal
// (journal.go), so their operations are decided, kept and audited the
// same way, and the sandbox never imports them. Commands (core/commands)
// start from BeginOn, record their event before they start (RecordStart)
// and apply their layers through Priors and Intend; Recover rolls back an
// apply a crash interrupted as it does any other change, and removes the
// layers of commands that were running. Patches (core/applypatch) keep
// their files' old contents (Op.Keep) and commit the whole patch under
// one intent (Op.Change); their hunk searches take the same search turns
// as grep and find (Op.SearchSlot). Documents (core/documents) are read
// through Target and parsed by their own sandboxed helper, with their own
// slots.
//
// Size: about 2,400 lines of non-test code (1,770 without comments and
// blank lines), within the house's 2,500: the file operations on one
// path (on, change), the scope and its decisions, the quota, the version
// store's priors, and the journal with Recover.
//
// Not guaranteed: the facade does not bound how long a file operation on
// a slow disk takes, and it trusts the Caller it is handed — transports
// authenticate.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/fsbox"
	"corral/core/killpoint"
	"corral/core/paths"
	"corral/core/policy"
	"corral/core/slots"
	"corral/core/versions"
)

// Config holds the sandbox's dependencies.
type Config struct {
	Layout paths.Layout
	Users  []string // configured user ids
	Audit  audit.Sink
	Policy *policy.Policy // nil: nothing outside the fence is ever allowed
	// Private are host folders agents never reach, not even with the
	// owner's approval: Corral's config and data folders.
	Private []string
	Clock   func() time.Time // nil: time.Now
	Logger  *slog.Logger     // nil: slog.Default()
	// Quota is the most each scope folder and the shared folder may hold,
	// in bytes (quota.go); 0: no quota.
	Quota int64
	// Versions configures the version store: what agents change is kept
	// there (versions.go; the owner's undo is core/undo). Its Dir must be in Corral's own data
	// folder; it is private like Private. Dir "": no versions, no undo.
	Versions versions.Config
}

// Sandbox performs agents' file operations. It is safe for concurrent use.
type Sandbox struct {
	layout  paths.Layout
	usersMu sync.RWMutex
	users   map[string]bool // people: configured, and added at runtime (AddUser)
	audit   audit.Sink
	policy  *policy.Policy
	private []string // Base and Config.Private, cleaned
	now     func() time.Time
	log     *slog.Logger
	quota   int64
	usage   usage

	// searchSlots bounds hunk searches (core/applypatch), greps and finds
	// running at once: they run in this process, on its few cores.
	searchSlots *slots.Slots

	mu    sync.Mutex
	roots map[string]*os.Root // by host folder

	versions *versions.Store // nil: no versions kept
	rec      recovered
}

// Open returns a Sandbox wired with everything it uses, creating the
// sandbox base (mode 0700) if needed. Nothing is installed later.
func Open(cfg Config) (*Sandbox, error) {
	if cfg.Audit == nil {
		return nil, errors.New("sandbox: no audit sink")
	}
	if err := os.MkdirAll(cfg.Layout.Base, 0o700); err != nil {
		return nil, err
	}
	s := &Sandbox{
		layout:  cfg.Layout,
		users:   map[string]bool{},
		audit:   cfg.Audit,
		policy:  cfg.Policy,
		private: []string{filepath.Clean(cfg.Layout.Base)},
		now:     cfg.Clock,
		log:     cfg.Logger,
		quota:   cfg.Quota,
		roots:   map[string]*os.Root{},
	}
	s.searchSlots = newSearchSlots()
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	for _, u := range cfg.Users {
		s.users[u] = true
	}
	if cfg.Versions.Dir != "" {
		if cfg.Versions.Clock == nil {
			cfg.Versions.Clock = cfg.Clock
		}
		if cfg.Versions.Logger == nil {
			cfg.Versions.Logger = cfg.Logger
		}
		vs, err := versions.Open(cfg.Versions)
		if err != nil {
			return nil, err
		}
		s.versions = vs
		cfg.Private = append(cfg.Private, vs.Dir())
	}
	for _, p := range cfg.Private {
		if p != "" {
			s.private = append(s.private, filepath.Clean(p))
		}
	}
	// The same folders by their real names: a symlinked spelling must not
	// get past isPrivate.
	for _, p := range s.private {
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			s.private = append(s.private, real)
		}
	}
	return s, nil
}

// Close releases the open roots.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, r := range s.roots {
		r.Close()
		delete(s.roots, k)
	}
	return nil
}

// Versions returns the version store, or nil.
func (s *Sandbox) Versions() *versions.Store { return s.versions }

// Layout returns the path layout the sandbox resolves against.
func (s *Sandbox) Layout() paths.Layout { return s.layout }

// Policy returns the policy the sandbox asks, or nil.
func (s *Sandbox) Policy() *policy.Policy { return s.policy }

// need is the kind of access an operation needs on a path.
type need = policy.Access

const (
	needRead   = policy.Read
	needWrite  = policy.Write
	needDelete = policy.Delete
)

// op is one audited operation in progress.
type op struct {
	s      *Sandbox
	ctx    context.Context
	ev     audit.Event
	start  time.Time
	scope  string
	reason string       // the agent's reason, shown when the owner is asked
	closer []*os.Root   // roots opened for this operation only
	level  policy.Level // the agent's trust level (permits)
	// recorded is the id of the event recordStart committed before the
	// operation began; end completes it instead of recording anew.
	recorded int64
	// data is what a write will write, for the owner's question.
	data []byte
	// keeper is whose share of the version store the operation's
	// versions count in: the agent's client name, "" for the owner.
	keeper string
}

// writePreview says what writing data to host would do, for the owner:
// its size, whether it replaces a file, and its first lines.
func writePreview(host string, data []byte) string {
	var b strings.Builder
	if fi, err := os.Lstat(host); err == nil && fi.Mode().IsRegular() {
		fmt.Fprintf(&b, "Replaces the existing file (%d bytes) with %d bytes.", fi.Size(), len(data))
	} else {
		fmt.Fprintf(&b, "Creates a file of %d bytes.", len(data))
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		b.WriteString(" The content is binary.")
		return b.String()
	}
	lines := strings.SplitN(string(data), "\n", 7)
	more := len(lines) == 7
	if more {
		lines = lines[:6]
	}
	b.WriteString(" First lines:\n")
	b.WriteString(strings.Join(lines, "\n"))
	if more {
		b.WriteString("\n…")
	}
	return b.String()
}

// Writable reports whether the audit log and the version store can be
// written now; when either cannot, the error is unavailable with a
// sentence for the owner, and no agent operation starts.
func (s *Sandbox) Writable() error {
	if h, ok := s.audit.(audit.Health); ok {
		if err := h.Writable(); err != nil {
			return errs.Wrap(err, errs.Unavailable, "", "%s.", err.Error())
		}
	}
	if s.versions != nil {
		if err := s.versions.Writable(); err != nil {
			return errs.Wrap(err, errs.Unavailable, "", "%s.", err.Error())
		}
	}
	return nil
}

// recordStart commits the operation's event before the operation begins
// (a command before it starts), where the audit sink can complete events
// later. The event says "running" until end completes it.
func (o *op) recordStart(what string) error {
	if _, ok := o.s.audit.(audit.Completer); !ok {
		return nil
	}
	ev := o.ev
	ev.Time = o.start.UTC()
	ev.Detail = appendDetail(ev.Detail, audit.Running)
	id, err := o.s.audit.Record(context.WithoutCancel(o.ctx), ev)
	if err != nil {
		o.s.log.Error("audit record failed", "op", ev.Op, "client", ev.Client, "err", err)
		return errs.Wrap(err, errs.Unavailable, "", "Corral could not write its audit log, so %s did not start.", what)
	}
	o.recorded = id
	return nil
}

// intend makes the intent of a change durable before the change touches
// the owner's folders (journal.go): the operation's event is committed as
// "pending" with the changes it will make, whose old contents are already
// in the version store. A command's event, recorded when it started, is
// completed that way; any other operation's is recorded now, and end
// completes it. When intend fails nothing may change.
func (o *op) intend(changes []audit.Change) error {
	if _, ok := o.s.audit.(audit.Completer); !ok {
		return nil
	}
	ev := o.ev
	ev.Time = o.start.UTC()
	ev.Changes = changes
	ev.Detail = appendDetail(ev.Detail, audit.Pending)
	ctx := context.WithoutCancel(o.ctx)
	var err error
	if o.recorded != 0 {
		ev.ID = o.recorded
		err = o.s.audit.(audit.Completer).Complete(ctx, ev)
	} else {
		o.recorded, err = o.s.audit.Record(ctx, ev)
	}
	if err != nil {
		o.s.log.Error("audit record failed", "op", ev.Op, "client", ev.Client, "err", err)
		return errs.Wrap(err, errs.IO, "", "Corral could not write its audit log, so it changed nothing.")
	}
	killpoint.Here("change.before")
	return nil
}

// onPath is an operation on one path, for on.
type onPath struct {
	name, reason, path string
	need               need
	detail             string // added to the event before the target is decided
}

// on is the skeleton of an operation on one path, written once: begin
// (scope, pause, level), target (resolve, decide, open its folder), do,
// end (the one audit event, committed before the answer). A method on
// one path is a call of it, as each os.Root method is one line over a
// shared function.
func on[R any](s *Sandbox, ctx context.Context, c Caller, cx *Context, p onPath, do func(o *op, d fsbox.Dir, t paths.Target) (R, error)) (R, error) {
	var r R
	o, err := s.beginOn(ctx, c, cx, p.name, p.reason, p.path)
	if err != nil {
		return r, err
	}
	if p.detail != "" {
		o.ev.Detail = appendDetail(o.ev.Detail, p.detail)
	}
	d, t, err := o.target(p.path, p.need)
	if err == nil {
		r, err = do(o, d, t)
	}
	return r, o.end(ctx, err)
}

// change is the step of the skeleton that changes the owner's folders,
// once the targets are decided and what the change replaces is kept
// (priors): the intent cs is committed, do makes the change, and cs
// become the event's changes. Nothing is changed when the intent cannot
// be committed; the changes are not recorded when do fails.
func (o *op) change(cs []audit.Change, do func() error) error {
	// The owner may have paused the agent, or made it Read-only, since the
	// operation began (a patch waits for its search turns).
	if err := o.stillMay(policy.Write); err != nil {
		return err
	}
	if err := o.intend(cs); err != nil {
		return err
	}
	if err := do(); err != nil {
		return err
	}
	o.ev.Changes = cs
	return nil
}

// begin starts an operation: it selects the scope and, when the caller may
// not act in it, records the refusal and returns the error.
func (s *Sandbox) begin(ctx context.Context, c Caller, cx *Context, name, reason string) (*op, error) {
	return s.beginOn(ctx, c, cx, name, reason, "")
}

// beginOn is begin for an operation on named (the path or command as the
// agent gave it): a refusal before the target is resolved (agents paused)
// is recorded with it, so the log says what was refused.
func (s *Sandbox) beginOn(ctx context.Context, c Caller, cx *Context, name, reason, named string) (*op, error) {
	if err := s.Writable(); err != nil {
		// Nothing may happen that cannot be recorded; this refusal itself
		// cannot be recorded either, so it is logged.
		s.log.Warn("operation refused: the audit log cannot be written", "op", name, "client", c.Client, "err", err)
		return nil, err
	}
	o := &op{s: s, ctx: ctx, start: s.now(), ev: audit.Event{Client: c.Client, Op: name}, reason: reason}
	if !c.Owner {
		o.keeper = c.Client
	}
	scope, err := s.ScopeFor(c, cx)
	if err != nil {
		o.ev.User = c.User
		o.ev.Decision, o.ev.DecidedBy = audit.Deny, audit.ByScope
		return nil, o.end(ctx, err)
	}
	o.scope, o.ev.User = scope, scope
	if err := s.refusePaused(c); err != nil {
		// Pause stops everything an agent does, not only what would ask.
		o.ev.Decision, o.ev.DecidedBy, o.ev.Target = audit.Deny, audit.ByPaused, clip(named, 2000)
		return nil, o.end(ctx, err)
	}
	if !c.Owner {
		o.level = c.Level
	}
	return o, nil
}

// permits asks the agent's trust level whether it may make access a at
// all, and records a refusal as decided by the level.
func (o *op) permits(a policy.Access) error {
	if err := o.level.Permits(a); err != nil {
		o.ev.Decision, o.ev.DecidedBy = audit.Deny, audit.ByLevel
		return err
	}
	return nil
}

// target resolves p in the operation's scope, decides the access and
// opens the folder the operation runs in. The first target of an
// operation is its audit target; a second (file.move) goes to the detail.
func (o *op) target(p string, n need) (fsbox.Dir, paths.Target, error) {
	t, err := o.s.layout.Resolve(o.scope, p)
	if o.ev.Target == "" {
		o.ev.Target = p
		if err == nil {
			o.ev.Target = t.Visible
		}
	} else if err == nil {
		o.ev.Detail = appendDetail(o.ev.Detail, "to "+t.Visible)
	}
	if n != needRead {
		if err := o.permits(n); err != nil {
			return fsbox.Dir{}, t, err
		}
	}
	if err != nil {
		// end() records a refused escape as deny and a malformed path as
		// an error.
		o.ev.DecidedBy = audit.ByScope
		return fsbox.Dir{}, t, err
	}
	if t.Area == paths.InScope || t.Area == paths.InShare {
		o.ev.DecidedBy = audit.ByScope
	} else {
		// A host folder: judge it by its real name, so that no symlinked
		// spelling (/dev/fd/N, /proc/self/root/…, a link to the sandbox
		// base) reaches Corral's own files or another scope, and so that
		// the owner is asked about the folder that would really be opened.
		real := paths.Resolved(t.Dir)
		var host string
		if t.Area == paths.Outside {
			// The file itself by its real name too, and the operation then
			// runs on exactly that: a symlink named in the question cannot
			// lead somewhere else once allowed.
			host = paths.Resolved(filepath.Join(real, t.Rel))
			real, t.Rel = filepath.Dir(host), filepath.Base(host)
		} else {
			host = filepath.Join(real, filepath.FromSlash(t.Rel))
		}
		if o.s.isPrivate(host) || systemFolder(host) {
			// Never offered to the owner as a question: one click must not
			// leak them.
			o.ev.Decision, o.ev.DecidedBy = audit.Deny, audit.ByScope
			if rel := o.s.ownSpelling(o.scope, host); rel != "" {
				return fsbox.Dir{}, t, errs.New(errs.Denied, t.Visible, "%s is in your own folders; name it %q instead (paths are relative to your folder).", t.Visible, rel)
			}
			return fsbox.Dir{}, t, errs.New(errs.Denied, t.Visible, "%s belongs to Corral, to another user's folder or to the system; agents can never use it.", t.Visible)
		}
		if t.Area == paths.InRoot && (n == needRead || t.Access == paths.ReadWrite) {
			o.ev.DecidedBy = audit.ByRoot
		} else {
			// Outside the fence, or more than the root allows: the policy's
			// rules answer, or the owner does.
			t.Host = host
			if err := o.ask(t, n); err != nil {
				return fsbox.Dir{}, t, err
			}
			r, err := os.OpenRoot(real)
			if err != nil {
				return fsbox.Dir{}, t, hostOpenError(err, t)
			}
			o.closer = append(o.closer, r)
			o.ev.Decision = audit.Allow
			return fsbox.Dir{Root: r, Prefix: t.Prefix}, t, nil
		}
	}
	if n == needWrite {
		if err := o.s.checkQuota(t.Dir, o.s.folderName(t)); err != nil {
			o.ev.Decision = audit.Deny
			return fsbox.Dir{}, t, err
		}
	}
	if n == needDelete && o.s.quota > 0 {
		o.s.stale(t.Dir) // measured again after the delete
	}
	o.ev.Decision = audit.Allow
	r, err := o.s.root(t)
	if err != nil {
		return fsbox.Dir{}, t, err
	}
	return fsbox.Dir{Root: r, Prefix: t.Prefix}, t, nil
}

// folderName is how a quota refusal names the folder of t.
func (s *Sandbox) folderName(t paths.Target) string {
	if t.Area == paths.InShare {
		return "The shared folder"
	}
	return "Your folder"
}

// ask puts an access across the fence to the policy and records how it
// was decided; it returns a denied error unless the access is allowed.
func (o *op) ask(t paths.Target, n need) error {
	o.ev.Decision, o.ev.DecidedBy = audit.Deny, audit.ByStrict
	if o.s.policy == nil {
		return errs.New(errs.Denied, t.Visible, "%s is outside the folders agents may use, so Corral refused it.", t.Visible)
	}
	r := policy.Request{Access: n, Target: t.Host, Folder: isFolder(t.Host), Sensitive: paths.Sensitive(t.Host, o.s.layout.Home)}
	if t.Visible != t.Host {
		r.Asked = t.Visible
	}
	if n == needWrite && o.data != nil {
		r.Preview = writePreview(t.Host, o.data)
	}
	out, err := o.check(r, "")
	if err != nil {
		return err
	}
	if !out.Allowed {
		return errs.New(errs.Denied, t.Visible, "%s", policy.WithReason(deniedSentence(t.Visible, out.By), out.Reason))
	}
	return nil
}

// check puts r, as this operation's client and scope with the agent's
// reason, to the policy (which must not be nil) and records on the event
// who decided, the owner's answer (after label) and the rule that
// answered. The decision itself is left to the caller.
func (o *op) check(r policy.Request, label string) (policy.Outcome, error) {
	r.Client, r.Scope, r.Reason = o.ev.Client, o.scope, o.reason
	out, err := o.s.policy.Check(o.ctx, r)
	if err != nil {
		if out.By != "" {
			o.ev.DecidedBy = out.By
		}
		return out, err
	}
	o.ev.DecidedBy = out.By
	if out.Decision != "" {
		o.ev.Detail = appendDetail(o.ev.Detail, label+"owner answered "+string(out.Decision))
		o.ev.Answer, o.ev.AnsweredBy = string(out.Decision), out.Via
	}
	if out.Reason != "" {
		o.ev.Detail = appendDetail(o.ev.Detail, "owner's reason: "+out.Reason)
	}
	if out.Rule != nil {
		o.ev.Detail = appendDetail(o.ev.Detail, "rule "+out.Rule.ID)
		o.ev.Rule = out.Rule.ID
	}
	return out, nil
}

// isFolder reports whether host, a real host path, is an existing folder:
// the owner's answer widened to "folder" then covers it rather than the
// folder above.
func isFolder(host string) bool {
	fi, err := os.Stat(host)
	return err == nil && fi.IsDir()
}

func deniedSentence(p string, by audit.DecidedBy) string {
	switch by {
	case audit.ByTimeout:
		return "The owner did not answer in time, so access to " + p + " was denied."
	case audit.ByPaused:
		return "Agents are paused by the owner, so access to " + p + " was denied."
	case audit.ByStrict:
		return "Nobody is there to approve access to " + p + ", so Corral refused it."
	case audit.ByRule:
		return "The owner's rules deny access to " + p + "."
	}
	return "The owner denied access to " + p + "."
}

func hostOpenError(err error, t paths.Target) error {
	if errors.Is(err, os.ErrNotExist) {
		return errs.New(errs.NotFound, t.Visible, "The folder holding %s does not exist.", t.Visible)
	}
	if errors.Is(err, os.ErrPermission) {
		return errs.New(errs.Denied, t.Visible, "Corral itself may not open the folder holding %s.", t.Visible)
	}
	return errs.Wrap(err, errs.IO, t.Visible, "Corral could not open the folder holding %s.", t.Visible)
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

func appendDetail(d, s string) string {
	if d == "" {
		return s
	}
	return d + "; " + s
}

// end records the operation's event and returns err, or an io error when
// the event could not be recorded: no answer goes out unaudited.
func (o *op) end(ctx context.Context, err error) error {
	for _, r := range o.closer {
		r.Close()
	}
	ev := &o.ev
	ev.Time = o.start.UTC()
	ev.DurationMs = o.s.now().Sub(o.start).Milliseconds()
	if err != nil {
		e := errs.As(err)
		if e.Err != nil && e.Kind == errs.IO {
			o.s.log.Error("operation failed", "op", ev.Op, "client", ev.Client, "scope", ev.User, "path", ev.Target, "err", e.Err)
		}
		if ev.Decision == "" || ev.Decision == audit.Allow {
			ev.Decision = audit.Error
			if e.Kind == errs.Denied || e.Kind == errs.Forbidden {
				ev.Decision = audit.Deny
			}
		}
		ev.Error = string(e.Kind) + ": " + e.Msg
		// The caller gave up (a cancel, a closed connection): say so, as
		// a cancelled command does, rather than leave a bare "withdrawn".
		if o.ctx != nil && errors.Is(o.ctx.Err(), context.Canceled) && !strings.Contains(ev.Detail, "cancelled") {
			ev.Detail = appendDetail(ev.Detail, "cancelled")
		}
	}
	if o.recorded != 0 {
		if len(ev.Changes) > 0 {
			killpoint.Here("change.after")
		}
		ev.ID = o.recorded
		if rerr := o.s.audit.(audit.Completer).Complete(context.WithoutCancel(ctx), *ev); rerr != nil {
			o.s.log.Error("audit completion failed", "op", ev.Op, "client", ev.Client, "id", ev.ID, "err", rerr)
			return errs.Wrap(rerr, errs.IO, "", "Corral could not complete its audit record of this operation, so it withholds the result.")
		}
		return err
	}
	id, rerr := o.s.audit.Record(context.WithoutCancel(ctx), *ev)
	if rerr != nil {
		o.s.log.Error("audit record failed", "op", ev.Op, "client", ev.Client, "err", rerr)
		return errs.Wrap(rerr, errs.IO, "", "Corral could not write its audit log, so it withholds the result of this operation.")
	}
	ev.ID = id
	return err
}

// root returns the os.Root for a target's folder, creating scope folders,
// their output folder and the shared folder on first use.
func (s *Sandbox) root(t paths.Target) (*os.Root, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.roots[t.Dir]; ok {
		return r, nil
	}
	if t.Area == paths.InScope || t.Area == paths.InShare {
		// t.Dir is Base/<segment>: one level, created without following
		// anything an agent could have planted (agents cannot write Base).
		if err := os.Mkdir(t.Dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, errs.Wrap(err, errs.IO, "", "Corral could not create the sandbox folder.")
		}
	}
	r, err := os.OpenRoot(t.Dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errs.New(errs.NotFound, t.Prefix, "The folder %s does not exist.", t.Prefix)
		}
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not open the folder.")
	}
	if t.Area == paths.InScope {
		if err := r.Mkdir(s.layout.OutputDir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			s.log.Warn("could not create output folder", "path", filepath.Join(t.Dir, s.layout.OutputDir), "err", err)
		}
	}
	s.roots[t.Dir] = r
	return r, nil
}

// ScopeDir returns the host folder of a scope, creating it if needed. It
// is for the command runner, which mounts the folder as $HOME.
func (s *Sandbox) ScopeDir(scope string) (string, error) {
	t, err := s.layout.Resolve(scope, ".")
	if err != nil {
		return "", err
	}
	if _, err := s.root(t); err != nil {
		return "", err
	}
	return t.Dir, nil
}

// systemFolder reports whether p is in a kernel-provided tree whose
// entries are doors to other places (/proc/self/root, /dev/fd/N).
func systemFolder(p string) bool {
	return paths.Within(p, "/proc") || paths.Within(p, "/dev") || paths.Within(p, "/sys")
}

// ownSpelling returns the agent-visible path of host, a real host path,
// when it lies in scope's own folder or the shared folder ("notes/a.txt",
// "share/x"), else "".
func (s *Sandbox) ownSpelling(scope, host string) string {
	base := paths.Resolved(filepath.Clean(s.layout.Base))
	for _, f := range []struct{ dir, prefix string }{
		{filepath.Join(base, s.layout.SharedDir), s.layout.SharedDir},
		{filepath.Join(base, scope), ""},
	} {
		rel, err := filepath.Rel(f.dir, host)
		if err != nil || paths.Within(rel, "..") {
			continue
		}
		v := path.Join(f.prefix, filepath.ToSlash(rel))
		if v == "" {
			v = "."
		}
		if t, err := s.layout.Resolve(scope, v); err == nil && (t.Area == paths.InScope || t.Area == paths.InShare) {
			return t.Visible
		}
	}
	return ""
}

// isPrivate reports whether host is, contains or lies inside a private
// folder (the sandbox base, Corral's own folders).
func (s *Sandbox) isPrivate(host string) bool {
	for _, p := range s.private {
		if paths.Overlap(host, p) {
			return true
		}
	}
	return false
}
