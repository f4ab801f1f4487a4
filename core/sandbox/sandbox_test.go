package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/paths"
	"corral/core/policy"
	"corral/core/testkit/auditmem"
)

type memRules struct{ rules []policy.Rule }

func (m *memRules) SaveRule(_ context.Context, r policy.Rule) error {
	m.rules = append(m.rules, r)
	return nil
}
func (m *memRules) DeleteRule(context.Context, string) (bool, error) { return true, nil }
func (m *memRules) LoadRules(context.Context) ([]policy.Rule, error) { return m.rules, nil }

// answerer is an approvals surface that answers every question with d.
type answerer struct {
	p     *policy.Policy
	d     policy.Decision
	mu    sync.Mutex
	asked []policy.Approval
}

func (a *answerer) ApprovalRequested(ap policy.Approval) {
	a.mu.Lock()
	a.asked = append(a.asked, ap)
	a.mu.Unlock()
	go a.p.Respond(context.Background(), policy.Answer{ID: ap.ID, Decision: a.d, By: "test"})
}
func (a *answerer) ApprovalResolved(string, policy.Decision, string) {}

type world struct {
	dir, outside, roRoot, rwRoot, private string
	box                                   *Sandbox
	sink                                  *auditmem.Log
	pol                                   *policy.Policy
}

func newWorld(t testing.TB) *world {
	t.Helper()
	return newWorldWith(t, nil)
}

// newWorldWith is newWorld with the sandbox's Config changed by set first.
func newWorldWith(t testing.TB, set func(w *world, cfg *Config)) *world {
	t.Helper()
	w := &world{dir: t.TempDir(), sink: &auditmem.Log{}}
	w.outside = filepath.Join(w.dir, "outside")
	w.roRoot = filepath.Join(w.dir, "ro")
	w.rwRoot = filepath.Join(w.dir, "rw")
	w.private = filepath.Join(w.dir, "corral-data")
	for _, d := range []string{w.outside, w.roRoot, w.rwRoot, w.private} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "f.txt"), []byte("content of "+filepath.Base(d)), 0o644)
	}
	pol, err := policy.New(context.Background(), policy.Config{Rules: &memRules{}, Audit: w.sink, Timeout: time.Minute, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	w.pol = pol
	layout := paths.Layout{Base: filepath.Join(w.dir, "base"), SharedDir: "share", OutputDir: "output", Home: w.dir,
		Roots: []paths.Root{{Path: w.roRoot, Access: paths.Read}, {Path: w.rwRoot, Access: paths.ReadWrite}}}
	cfg := Config{Layout: layout, Users: []string{"alice", "bob"}, Audit: w.sink, Policy: pol, Private: []string{w.private}}
	if set != nil {
		set(w, &cfg)
	}
	w.box, err = Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.box.Close() })
	return w
}

var alice = Caller{Client: "alice-agent", User: "alice"}

// The decision table: where a path lands × what the operation needs ×
// who answers → what the agent gets and what the log says.
func TestDecisionTable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		path    func(w *world) string
		write   bool
		answer  policy.Decision // "" = nobody subscribed (strict)
		kind    errs.Kind       // "" = success
		by      audit.DecidedBy
		asked   bool
		outcome audit.Decision
	}{
		{name: "own folder", path: func(*world) string { return "notes/a.txt" }, write: true, by: audit.ByScope, outcome: audit.Allow},
		{name: "share", path: func(*world) string { return "SHARE/a.txt" }, write: true, by: audit.ByScope, outcome: audit.Allow},
		{name: "read-only root, read", path: func(w *world) string { return filepath.Join(w.roRoot, "f.txt") }, by: audit.ByRoot, outcome: audit.Allow},
		{name: "read-only root, write, nobody to ask", path: func(w *world) string { return filepath.Join(w.roRoot, "g.txt") }, write: true, kind: errs.Denied, by: audit.ByStrict, outcome: audit.Deny},
		{name: "read-only root, write, owner allows", path: func(w *world) string { return filepath.Join(w.roRoot, "g.txt") }, write: true, answer: policy.AllowOnce, by: audit.ByOwner, asked: true, outcome: audit.Allow},
		{name: "read-write root, write", path: func(w *world) string { return filepath.Join(w.rwRoot, "g.txt") }, write: true, by: audit.ByRoot, outcome: audit.Allow},
		{name: "outside, nobody to ask", path: func(w *world) string { return filepath.Join(w.outside, "f.txt") }, kind: errs.Denied, by: audit.ByStrict, outcome: audit.Deny},
		{name: "outside, owner allows", path: func(w *world) string { return filepath.Join(w.outside, "f.txt") }, answer: policy.AllowOnce, by: audit.ByOwner, asked: true, outcome: audit.Allow},
		{name: "outside, owner denies", path: func(w *world) string { return filepath.Join(w.outside, "f.txt") }, answer: policy.DenyOnce, kind: errs.Denied, by: audit.ByOwner, asked: true, outcome: audit.Deny},
		{name: "Corral's own folder is never asked", path: func(w *world) string { return filepath.Join(w.private, "f.txt") }, answer: policy.AllowOnce, kind: errs.Denied, by: audit.ByScope, outcome: audit.Deny},
		{name: "another scope by absolute path is never asked", path: func(w *world) string { return filepath.Join(w.dir, "base", "bob", "x") }, answer: policy.AllowOnce, kind: errs.Denied, by: audit.ByScope, outcome: audit.Deny},
		{name: "an ancestor of the base is never asked", path: func(w *world) string { return w.dir }, answer: policy.AllowOnce, kind: errs.Denied, by: audit.ByScope, outcome: audit.Deny},
		{name: "a symlink to Corral's folder is judged by where it leads", path: func(w *world) string {
			os.Symlink(filepath.Join(w.private, "f.txt"), filepath.Join(w.outside, "innocent.txt"))
			return filepath.Join(w.outside, "innocent.txt")
		}, answer: policy.AllowOnce, kind: errs.Denied, by: audit.ByScope, outcome: audit.Deny},
		{name: "/proc/self/root is judged by where it leads", path: func(w *world) string { return "/proc/self/root" + filepath.Join(w.private, "f.txt") }, answer: policy.AllowOnce, kind: errs.Denied, by: audit.ByScope, outcome: audit.Deny},
		{name: "/dev/fd is never asked", path: func(w *world) string { return "/dev/fd/3/f.txt" }, answer: policy.AllowOnce, kind: errs.Denied, by: audit.ByScope, outcome: audit.Deny},
		{name: "escape by ..", path: func(*world) string { return "../bob/x" }, kind: errs.Denied, by: audit.ByScope, outcome: audit.Deny},
		{name: "malformed path", path: func(*world) string { return "a\\b" }, kind: errs.InvalidPath, by: audit.ByScope, outcome: audit.Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			var ans *answerer
			if tc.answer != "" {
				ans = &answerer{p: w.pol, d: tc.answer}
				defer w.pol.Subscribe(ans)()
			}
			p := tc.path(w)
			var err error
			if tc.write {
				_, err = w.box.Write(context.Background(), alice, WriteArgs{Path: p, Content: "new"})
			} else {
				_, err = w.box.Read(context.Background(), alice, ReadArgs{Path: p})
			}
			if errs.KindOf(err) != tc.kind {
				t.Fatalf("error %v (kind %q), want kind %q", err, errs.KindOf(err), tc.kind)
			}
			if w.sink.Len() != 1 {
				t.Fatalf("%d events, want exactly 1: %+v", w.sink.Len(), w.sink.Events())
			}
			ev := w.sink.Last()
			if ev.DecidedBy != tc.by || ev.Decision != tc.outcome || ev.Client != "alice-agent" || ev.User != "alice" {
				t.Errorf("event %+v, want %s by %s", ev, tc.outcome, tc.by)
			}
			if asked := ans != nil && len(ans.asked) > 0; asked != tc.asked {
				t.Errorf("asked=%v, want %v", asked, tc.asked)
			}
		})
	}
}

func TestForbiddenScopeIsAudited(t *testing.T) {
	w := newWorld(t)
	_, err := w.box.Read(context.Background(), alice, ReadArgs{Path: "x", Context: &Context{UserID: "bob"}})
	if errs.KindOf(err) != errs.Forbidden {
		t.Fatalf("acting for bob: %v", err)
	}
	if ev := w.sink.Last(); ev.Decision != audit.Deny || ev.Op != "file.read" {
		t.Errorf("event: %+v", ev)
	}
}

// No answer goes out unaudited: when the log cannot be written, the
// result is withheld.
func TestAuditFailureWithholdsResult(t *testing.T) {
	w := newWorld(t)
	if _, err := w.box.Write(context.Background(), alice, WriteArgs{Path: "a.txt", Content: "secret"}); err != nil {
		t.Fatal(err)
	}
	w.sink.Fail(errors.New("disk full"))
	res, err := w.box.Read(context.Background(), alice, ReadArgs{Path: "a.txt"})
	if errs.KindOf(err) != errs.IO {
		t.Fatalf("read with a broken log: %v", err)
	}
	if res.Content != "" && err == nil {
		t.Error("content returned without an audit event")
	}
}

func TestScopeFor(t *testing.T) {
	w := newWorld(t)
	multi := Caller{Client: "m", User: "default", ActFor: []string{"alice", "companion"}}
	for _, tc := range []struct {
		c    Caller
		ctx  *Context
		want string // "" = forbidden
	}{
		{alice, nil, "alice"},
		{alice, &Context{}, "alice"},
		{alice, &Context{UserID: "alice"}, "alice"},
		{alice, &Context{UserID: "bob"}, ""},
		{alice, &Context{SessionID: "companion"}, ""},
		{multi, &Context{ConversationType: "COMPANION"}, "companion"},
		{multi, &Context{UserID: "alice", AppID: "companion"}, "alice"}, // a configured user wins
		{multi, &Context{UserID: "nobody"}, "default"},
		{multi, &Context{ChannelName: "ſompanion"}, "default"}, // no Unicode folding
		{Caller{Client: "owner", Owner: true}, nil, "default"},
		{Caller{Client: "owner", Owner: true}, &Context{UserID: "bob"}, "bob"},
	} {
		got, err := w.box.ScopeFor(tc.c, tc.ctx)
		if tc.want == "" {
			if errs.KindOf(err) != errs.Forbidden {
				t.Errorf("%s %+v: %q %v, want forbidden", tc.c.Client, tc.ctx, got, err)
			}
			continue
		}
		if got != tc.want || err != nil {
			t.Errorf("%s %+v: %q %v, want %q", tc.c.Client, tc.ctx, got, err, tc.want)
		}
	}
}
