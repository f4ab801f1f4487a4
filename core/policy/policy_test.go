package policy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/testkit/auditmem"
)

// memRules is a hand-written RuleStore; store/ tests the SQLite one.
type memRules struct {
	mu    sync.Mutex
	rules map[string]Rule
	fail  bool
}

func (m *memRules) SaveRule(_ context.Context, r Rule) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errors.New("disk full")
	}
	m.rules[r.ID] = r
	return nil
}

func (m *memRules) DeleteRule(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.rules[id]
	delete(m.rules, id)
	return ok, nil
}

func (m *memRules) LoadRules(context.Context) ([]Rule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Rule
	for _, r := range m.rules {
		out = append(out, r)
	}
	return out, nil
}

// surface records what it is told and answers nothing by itself.
type surface struct {
	mu        sync.Mutex
	requested []Approval
	resolved  []string
	asked     chan Approval
}

func newSurface() *surface { return &surface{asked: make(chan Approval, 16)} }

func (s *surface) ApprovalRequested(a Approval) {
	s.mu.Lock()
	s.requested = append(s.requested, a)
	s.mu.Unlock()
	s.asked <- a
}

func (s *surface) ApprovalResolved(id string, d Decision, by string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resolved = append(s.resolved, id+" "+string(d)+" "+by)
}

func newPolicy(t *testing.T, strict bool, rs *memRules) (*Policy, *auditmem.Log) {
	t.Helper()
	if rs == nil {
		rs = &memRules{rules: map[string]Rule{}}
	}
	au := &auditmem.Log{}
	p, err := New(context.Background(), Config{Rules: rs, Audit: au, Timeout: time.Minute, Strict: strict})
	if err != nil {
		t.Fatal(err)
	}
	return p, au
}

var readTax = Request{Client: "alice-agent", Scope: "alice", Access: Read, Target: "/home/me/Documents/tax.pdf", Reason: "summarise"}

// check runs p.Check in a goroutine and returns a channel with its result.
func check(p *Policy, ctx context.Context, r Request) chan Outcome {
	ch := make(chan Outcome, 1)
	go func() {
		out, err := p.Check(ctx, r)
		if err != nil {
			out = Outcome{By: "error"}
		}
		ch <- out
	}()
	return ch
}

func TestDecisionTable(t *testing.T) {
	type step struct {
		answer  Decision // "" = no answer (timeout)
		widen   string
		want    bool
		wantBy  audit.DecidedBy
		request *Request
	}
	other := readTax
	other.Target = "/home/me/Documents/other.pdf"
	otherClient := readTax
	otherClient.Client = "bob-agent"
	for _, tc := range []struct {
		name   string
		strict bool
		paused bool
		noSurf bool
		steps  []step
	}{
		{name: "allow once asks again", steps: []step{{answer: AllowOnce, want: true, wantBy: audit.ByOwner}, {answer: DenyOnce, want: false, wantBy: audit.ByOwner}}},
		{name: "allow session remembers", steps: []step{{answer: AllowSession, want: true, wantBy: audit.ByOwner}, {want: true, wantBy: audit.ByRule}}},
		{name: "allow always remembers", steps: []step{{answer: AllowAlways, want: true, wantBy: audit.ByOwner}, {want: true, wantBy: audit.ByRule}}},
		{name: "deny always remembers", steps: []step{{answer: DenyAlways, want: false, wantBy: audit.ByOwner}, {want: false, wantBy: audit.ByRule}}},
		{name: "exact rule does not cover a sibling", steps: []step{{answer: AllowAlways, want: true, wantBy: audit.ByOwner}, {request: &other, answer: DenyOnce, want: false, wantBy: audit.ByOwner}}},
		{name: "folder rule covers a sibling", steps: []step{{answer: AllowAlways, widen: "folder", want: true, wantBy: audit.ByOwner}, {request: &other, want: true, wantBy: audit.ByRule}}},
		{name: "rule binds the client", steps: []step{{answer: AllowAlways, want: true, wantBy: audit.ByOwner}, {request: &otherClient, answer: DenyOnce, want: false, wantBy: audit.ByOwner}}},
		{name: "timeout denies and remembers nothing", steps: []step{{want: false, wantBy: audit.ByTimeout}, {answer: AllowOnce, want: true, wantBy: audit.ByOwner}}},
		{name: "strict without surface", strict: true, noSurf: true, steps: []step{{want: false, wantBy: audit.ByStrict}}},
		{name: "lenient without surface waits", strict: false, noSurf: true, steps: []step{{want: false, wantBy: audit.ByTimeout}}},
		{name: "paused", paused: true, steps: []step{{want: false, wantBy: audit.ByPaused}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, _ := newPolicy(t, tc.strict, nil)
				s := newSurface()
				if !tc.noSurf {
					defer p.Subscribe(s)()
				}
				if tc.paused {
					p.SetPaused(context.Background(), true, "owner")
				}
				for i, st := range tc.steps {
					r := readTax
					if st.request != nil {
						r = *st.request
					}
					start := time.Now()
					ch := check(p, context.Background(), r)
					synctest.Wait()
					if st.answer != "" {
						a := <-s.asked
						if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: st.answer, Widen: st.widen, By: "owner"}); err != nil {
							t.Fatalf("step %d: respond: %v", i, err)
						}
					}
					out := <-ch
					if st.answer == "" && st.wantBy == audit.ByTimeout && !tc.noSurf {
						<-s.asked // asked, never answered
					}
					if out.Allowed != st.want || out.By != st.wantBy {
						t.Fatalf("step %d: got allowed=%v by=%s, want %v by %s", i, out.Allowed, out.By, st.want, st.wantBy)
					}
					if st.wantBy == audit.ByTimeout && time.Since(start) != time.Minute {
						t.Errorf("step %d: timed out after %v, want 1m", i, time.Since(start))
					}
				}
				if n := len(p.Pending()); n != 0 {
					t.Errorf("%d approvals left pending", n)
				}
			})
		})
	}
}

func TestSharedApprovalAndFirstAnswerWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newPolicy(t, true, nil)
		s := newSurface()
		defer p.Subscribe(s)()
		var chans []chan Outcome
		for range 5 {
			chans = append(chans, check(p, context.Background(), readTax))
		}
		synctest.Wait()
		if n := len(p.Pending()); n != 1 {
			t.Fatalf("%d pending approvals for identical requests, want 1", n)
		}
		a := <-s.asked
		var wg sync.WaitGroup
		results := make(chan error, 2)
		for _, d := range []Decision{AllowOnce, DenyOnce} {
			wg.Go(func() { results <- p.Respond(context.Background(), Answer{ID: a.ID, Decision: d, By: "owner"}) })
		}
		wg.Wait()
		close(results)
		var ok, failed int
		for err := range results {
			if err == nil {
				ok++
			} else {
				failed++
			}
		}
		if ok != 1 || failed != 1 {
			t.Fatalf("answers: %d succeeded, %d failed; want 1 and 1", ok, failed)
		}
		first := <-chans[0]
		for _, ch := range chans[1:] {
			if out := <-ch; out.Allowed != first.Allowed {
				t.Fatal("waiters of one approval got different answers")
			}
		}
		if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowOnce}); errs.KindOf(err) != errs.NotFound {
			t.Errorf("late answer: %v", err)
		}
		if len(p.Pending()) != 0 {
			t.Error("approval still pending")
		}
	})
}

func TestOneTimeOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newPolicy(t, true, nil)
		s := newSurface()
		defer p.Subscribe(s)()
		net := Request{Client: "alice-agent", Scope: "alice", Access: Network, Target: "curl https://example.com", OneTimeOnly: true}
		ch := check(p, context.Background(), net)
		a := <-s.asked
		if !a.OneTimeOnly || len(a.Decisions()) != 2 {
			t.Fatalf("approval: %+v", a)
		}
		for _, d := range []Decision{AllowAlways, AllowSession, DenyAlways} {
			if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: d}); errs.KindOf(err) != errs.InvalidParams {
				t.Errorf("%s on a one-time approval: %v", d, err)
			}
		}
		if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowOnce}); err != nil {
			t.Fatal(err)
		}
		if out := <-ch; !out.Allowed {
			t.Fatal("allow_once did not allow")
		}
		// Asked again next time: nothing is cached.
		ch = check(p, context.Background(), net)
		synctest.Wait()
		if len(p.Pending()) != 1 {
			t.Fatal("network request was not asked again")
		}
		a = <-s.asked
		p.Respond(context.Background(), Answer{ID: a.ID, Decision: DenyOnce})
		if out := <-ch; out.Allowed {
			t.Fatal("deny_once allowed")
		}
		if len(p.Rules()) != 0 {
			t.Errorf("rules created: %+v", p.Rules())
		}
	})
}

func TestWithdrawOnDisconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newPolicy(t, true, nil)
		s := newSurface()
		defer p.Subscribe(s)()
		ctx1, cancel1 := context.WithCancel(context.Background())
		ctx2, cancel2 := context.WithCancel(context.Background())
		ch1 := check(p, ctx1, readTax)
		ch2 := check(p, ctx2, readTax)
		synctest.Wait()
		cancel1()
		<-ch1
		synctest.Wait()
		if len(p.Pending()) != 1 {
			t.Fatal("approval withdrawn while another caller still waits")
		}
		cancel2()
		<-ch2
		synctest.Wait()
		if len(p.Pending()) != 0 {
			t.Fatal("approval still pending after every caller left")
		}
		// The withdrawn caller is refused, and the refusal is recorded as
		// nobody answering in time, not as strict mode.
		out, err := p.Check(ctx2, readTax)
		if errs.KindOf(err) != errs.Denied || out.By != audit.ByTimeout {
			t.Errorf("withdrawn check: %+v %v", out, err)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.resolved) != 1 {
			t.Errorf("surfaces told %v", s.resolved)
		}
	})
}

func TestPauseDeniesPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, au := newPolicy(t, true, nil)
		s := newSurface()
		defer p.Subscribe(s)()
		ch := check(p, context.Background(), readTax)
		synctest.Wait()
		p.SetPaused(context.Background(), true, "owner")
		if out := <-ch; out.Allowed || out.By != audit.ByPaused {
			t.Fatalf("pending request at pause: %+v", out)
		}
		p.SetPaused(context.Background(), false, "owner")
		if got := au.Ops(); len(got) != 2 || got[0] != "agents.pause" || got[1] != "agents.resume" {
			t.Errorf("audit: %v", got)
		}
	})
}

func TestRulesPersistRevokeAndExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rs := &memRules{rules: map[string]Rule{}}
		p, au := newPolicy(t, true, rs)
		s := newSurface()
		cancel := p.Subscribe(s)
		ch := check(p, context.Background(), readTax)
		a := <-s.asked
		if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowAlways, ExpiresIn: time.Hour, By: "browser"}); err != nil {
			t.Fatal(err)
		}
		<-ch
		ch = check(p, context.Background(), Request{Client: "alice-agent", Scope: "alice", Access: Write, Target: "/tmp/x"})
		a = <-s.asked
		p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowSession, By: "tray"})
		<-ch
		cancel()
		if len(rs.rules) != 1 {
			t.Fatalf("persisted rules: %d, want only the always one", len(rs.rules))
		}
		// A restart keeps the always rule, not the session one.
		p2, _ := newPolicy(t, true, rs)
		rules := p2.Rules()
		if len(rules) != 1 || rules[0].CreatedBy != "browser" || rules[0].Expires == nil || rules[0].Description == "" {
			t.Fatalf("after restart: %+v", rules)
		}
		if out, _ := p2.Check(context.Background(), readTax); !out.Allowed || out.By != audit.ByRule {
			t.Fatalf("rule after restart: %+v", out)
		}
		time.Sleep(time.Hour) // fake time: the rule expires
		if out, _ := p2.Check(context.Background(), readTax); out.By != audit.ByStrict {
			t.Fatalf("expired rule still applied: %+v", out)
		}
		if err := p.Revoke(context.Background(), rules[0].ID, "owner"); err != nil {
			t.Fatal(err)
		}
		if len(rs.rules) != 0 {
			t.Error("revoked rule still stored")
		}
		if err := p.Revoke(context.Background(), rules[0].ID, "owner"); errs.KindOf(err) != errs.NotFound {
			t.Errorf("second revoke: %v", err)
		}
		if got := au.Ops(); len(got) != 3 || got[2] != "rule.revoke" {
			t.Errorf("audit: %v", got)
		}
	})
}

func TestRuleMatching(t *testing.T) {
	now := time.Now()
	rules := []Rule{
		{ID: "1", Client: "a", User: "u", Access: Read, Target: "/a/b", Match: Prefix, Decision: EffectAllow},
		{ID: "2", Client: AnyClient, User: "u", Access: Read, Target: "/a/b/secret", Match: Prefix, Decision: EffectDeny},
		{ID: "3", Client: "a", User: "u", Access: Read, Target: "/", Match: Prefix, Decision: EffectAllow},
		{ID: "4", Client: "a", User: "u", Access: Write, Target: "/a/b/c.txt", Match: Exact, Decision: EffectAllow},
		{ID: "5", Client: "a", User: "u", Access: Write, Target: "/a/b", Match: Prefix, Decision: EffectAllow},
	}
	for _, tc := range []struct {
		client string
		a      Access
		target string
		id     string
	}{
		{"a", Read, "/a/b", "1"},
		{"a", Read, "/a/b/x", "1"},
		{"a", Read, "/a/bc", "3"},         // /a/b never matches /a/bc
		{"a", Read, "/a/b/secret/k", "2"}, // deny beats allow
		{"z", Read, "/a/b/secret", "2"},
		{"a", Read, "/etc", "3"},
		{"z", Read, "/a/b", ""},
		{"a", Write, "/a/b/c.txt", "4"}, // exact beats prefix
		{"a", Write, "/a/b/d.txt", "5"},
		{"a", Delete, "/a/b/c.txt", ""},
	} {
		r, ok := decide(rules, tc.client, "u", tc.a, tc.target, now)
		if got := map[bool]string{true: r.ID}[ok]; got != tc.id {
			t.Errorf("%s %s %s: rule %q, want %q", tc.client, tc.a, tc.target, got, tc.id)
		}
	}
	for _, bad := range []string{"", "relative", "/a/../b", "/a/b/", "/a//b", "/a/./b"} {
		if CheckTarget(Read, bad) == nil {
			t.Errorf("target %q accepted", bad)
		}
	}
	if CheckTarget(Read, "/") != nil || CheckTarget(Execute, "ls -la ..") != nil {
		t.Error("good targets refused")
	}
}

func TestRuleSaveFailureStillAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rs := &memRules{rules: map[string]Rule{}, fail: true}
		p, _ := newPolicy(t, true, rs)
		s := newSurface()
		defer p.Subscribe(s)()
		ch := check(p, context.Background(), readTax)
		a := <-s.asked
		if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowAlways}); errs.KindOf(err) != errs.IO {
			t.Errorf("respond with a failing store: %v", err)
		}
		if out := <-ch; !out.Allowed {
			t.Error("the answer did not hold for the request itself")
		}
	})
}

// One allow_once lets exactly one one-time request through: identical
// network requests are asked one by one.
func TestOneTimeRequestsAreNeverShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newPolicy(t, true, nil)
		s := newSurface()
		defer p.Subscribe(s)()
		net := Request{Client: "a", Scope: "a", Access: Network, Target: "curl x", OneTimeOnly: true}
		ch1, ch2 := check(p, context.Background(), net), check(p, context.Background(), net)
		synctest.Wait()
		if n := len(p.Pending()); n != 2 {
			t.Fatalf("%d pending for two one-time requests, want 2", n)
		}
		a := <-s.asked
		p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowOnce})
		b := <-s.asked
		p.Respond(context.Background(), Answer{ID: b.ID, Decision: DenyOnce})
		o1, o2 := <-ch1, <-ch2
		if o1.Allowed == o2.Allowed {
			t.Errorf("both requests got the same answer (%v): one allow_once let both through", o1.Allowed)
		}
	})
}

func TestPendingCapPerClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newPolicy(t, true, nil)
		s := &surface{asked: make(chan Approval, 100)}
		defer p.Subscribe(s)()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for i := range MaxPendingPerClient {
			check(p, ctx, Request{Client: "flood", Scope: "a", Access: Read, Target: "/f/" + string(rune('a'+i%26)) + string(rune('a'+i/26))})
		}
		synctest.Wait()
		if _, err := p.Check(ctx, Request{Client: "flood", Scope: "a", Access: Read, Target: "/one/more"}); errs.KindOf(err) != errs.Denied {
			t.Errorf("question past the cap: %v", err)
		}
		other := check(p, ctx, Request{Client: "calm", Scope: "b", Access: Read, Target: "/x"})
		synctest.Wait()
		if n := len(p.Pending()); n != MaxPendingPerClient+1 {
			t.Errorf("pending: %d; another client must still be able to ask", n)
		}
		cancel()
		<-other
	})
}

func TestReasonIsMadeVisible(t *testing.T) {
	if got := visibleReason("read it\u202e please\x1b[2J", 500); got != `read it\u202e please\x1b[2J` {
		t.Errorf("visible: %q", got)
	}
	if got := visibleReason(strings.Repeat("x", 600), 500); !strings.HasSuffix(got, "…(cut: 100 more bytes)") || !strings.HasPrefix(got, strings.Repeat("x", 500)+"…") {
		t.Errorf("not cut: %d runes", len([]rune(got)))
	}
}

// TestDomainQuestions: a command's question about one domain is shared by
// identical pending questions (two connections of one run; runs are
// asked apart, TestDomainAnswerCoversItsRun), offers every answer, and its "always" answer is a rule for
// the domain that later questions, a wildcard rule included, answer.
func TestDomainQuestions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newPolicy(t, true, nil)
		s := newSurface()
		defer p.Subscribe(s)()
		q := Request{Client: "alice-agent", Scope: "alice", Access: Network, Target: "pypi.org", Command: "pip install requests"}
		first, second := check(p, context.Background(), q), check(p, context.Background(), q)
		synctest.Wait()
		if n := len(p.Pending()); n != 1 {
			t.Fatalf("%d questions pending; identical domain questions share one", n)
		}
		a := <-s.asked
		if a.Domain != "pypi.org" || a.Command != "pip install requests" || a.OneTimeOnly || len(a.Decisions()) != 5 ||
			a.Description != "alice-agent wants to connect to pypi.org for: pip install requests" || a.Folder != "" {
			t.Fatalf("approval %+v", a)
		}
		if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowAlways, Widen: "folder"}); errs.KindOf(err) != errs.InvalidParams {
			t.Errorf("widened network answer: %v", err)
		}
		if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowAlways, ExpiresIn: time.Hour}); err != nil {
			t.Fatal(err)
		}
		if !(<-first).Allowed || !(<-second).Allowed {
			t.Fatal("allow_always did not allow both")
		}
		out, err := p.Check(context.Background(), q)
		if err != nil || !out.Allowed || out.By != audit.ByRule {
			t.Errorf("after allow_always: %+v %v", out, err)
		}
		if r, ok := p.RuleFor("alice-agent", "alice", Network, "pypi.org"); !ok || r.Expires == nil {
			t.Errorf("rule %+v %v", r, ok)
		}
		time.Sleep(2 * time.Hour) // synctest: the rule expires
		if _, ok := p.RuleFor("alice-agent", "alice", Network, "pypi.org"); ok {
			t.Error("an expired rule still answers")
		}
		// Rules for "*.example.com" answer names below it, not the domain.
		p.addRule(context.Background(), Rule{ID: "ru_w", Client: "alice-agent", User: "alice", Access: Network, Target: "*.example.com", Match: Exact, Decision: EffectDeny, Lifetime: Session})
		for host, want := range map[string]bool{"a.example.com": true, "a.b.example.com": true, "example.com": false, "badexample.com": false} {
			if _, ok := p.RuleFor("alice-agent", "alice", Network, host); ok != want {
				t.Errorf("wildcard rule on %s: %v", host, ok)
			}
		}
	})
}

// TestWideningIsLimited: "apply to this folder" is not offered, and is
// refused, where the folder would be "/", the owner's home or a folder
// holding Corral's own files; below the home it works as before.
func TestWideningIsLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rs := &memRules{rules: map[string]Rule{}}
		p, err := New(context.Background(), Config{Rules: rs, Audit: &auditmem.Log{}, Timeout: time.Minute, Strict: true,
			Guarded: []string{"/home/alice", "/home/alice/.local/share/corral"}})
		if err != nil {
			t.Fatal(err)
		}
		s := newSurface()
		defer p.Subscribe(s)()
		for target, folder := range map[string]string{
			"/etc/passwd":                  "/etc",
			"/x":                           "",
			"/home/alice/.bashrc":          "",
			"/home/alice/.local/share":     "",
			"/home/alice/Documents/a.txt":  "/home/alice/Documents",
			"/home/alice/.local/share/c/x": "/home/alice/.local/share/c",
		} {
			ch := check(p, context.Background(), Request{Client: "a", Scope: "alice", Access: Read, Target: target})
			a := <-s.asked
			if a.Folder != folder {
				t.Errorf("%s: folder offered %q, want %q", target, a.Folder, folder)
			}
			err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowAlways, Widen: "folder"})
			if (err == nil) != (folder != "") {
				t.Errorf("%s: widened answer: %v", target, err)
			}
			if err != nil {
				p.Respond(context.Background(), Answer{ID: a.ID, Decision: DenyOnce})
			}
			<-ch
		}
	})
}

// TestSensitiveQuestions: a question about secrets carries why, offers no
// folder-wide answer and refuses one; what the agent asked for and what a
// write does travel with the question, made safe to show.
func TestSensitiveQuestions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newPolicy(t, true, nil)
		s := newSurface()
		defer p.Subscribe(s)()
		ch := check(p, context.Background(), Request{Client: "a", Scope: "alice", Access: Read, Target: "/home/ann/.ssh/id_rsa",
			Sensitive: "SSH keys", Asked: "/home/ann/link\u202e", Preview: "Creates a file\x1b[2J"})
		a := <-s.asked
		if a.Sensitive != "SSH keys" || a.Folder != "" || a.Asked != `/home/ann/link\u202e` || a.Preview != `Creates a file\x1b[2J` {
			t.Errorf("approval %+v", a)
		}
		if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowAlways, Widen: "folder"}); errs.KindOf(err) != errs.InvalidParams {
			t.Errorf("a folder-wide answer for secrets: %v", err)
		}
		p.Respond(context.Background(), Answer{ID: a.ID, Decision: DenyOnce})
		<-ch
	})
}

func TestClientPauseDeniesOnlyItsPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, au := newPolicy(t, true, nil)
		s := newSurface()
		defer p.Subscribe(s)()
		bob := Request{Client: "bob-agent", Scope: "bob", Access: Read, Target: "/home/me/Documents/bob.txt"}
		chA := check(p, context.Background(), readTax)
		chB := check(p, context.Background(), bob)
		synctest.Wait()
		if n := p.SetClientPaused("alice-agent", true); n != 1 {
			t.Fatalf("withdrew %d questions, want 1", n)
		}
		if out := <-chA; out.Allowed || out.By != audit.ByPaused {
			t.Fatalf("alice's pending request at her pause: %+v", out)
		}
		if pend := p.Pending(); len(pend) != 1 || pend[0].Client != "bob-agent" {
			t.Fatalf("pending after alice's pause: %+v", pend)
		}
		// While held, a new question of hers is denied without asking.
		if out, err := p.Check(context.Background(), readTax); err != nil || out.Allowed || out.By != audit.ByPaused {
			t.Errorf("alice's check while paused: %+v %v", out, err)
		}
		if len(p.Pending()) != 1 {
			t.Error("a paused client's question was asked")
		}
		p.SetClientPaused("alice-agent", false)
		chA = check(p, context.Background(), readTax)
		synctest.Wait()
		if len(p.Pending()) != 2 {
			t.Errorf("after resume, pending: %+v", p.Pending())
		}
		p.SetPaused(context.Background(), true, "owner")
		<-chA
		<-chB
		s.mu.Lock()
		if len(s.resolved) != 3 || !strings.HasSuffix(s.resolved[0], " deny_once paused") {
			t.Errorf("surfaces told %v", s.resolved)
		}
		s.mu.Unlock()
		if got := au.Ops(); len(got) != 1 || got[0] != "agents.pause" {
			t.Errorf("audit: %v (a client's pause is audited by its caller)", got)
		}
	})
}

// TestClockDecidesExpiry: a rule expires by the Config.Clock the policy
// is given, the one clock the daemon hands every part, not by the
// machine's.
func TestClockDecidesExpiry(t *testing.T) {
	start := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	var now atomic.Int64
	now.Store(start.UnixNano())
	exp := start.Add(time.Hour)
	rs := &memRules{rules: map[string]Rule{"ru_1": {ID: "ru_1", Client: readTax.Client, User: readTax.Scope, Access: Read, Target: readTax.Target,
		Match: Exact, Decision: EffectAllow, Lifetime: Always, Created: start, Expires: &exp}}}
	p, err := New(context.Background(), Config{Rules: rs, Audit: &auditmem.Log{}, Strict: true, Clock: func() time.Time { return time.Unix(0, now.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := p.Check(context.Background(), readTax); !out.Allowed || out.By != audit.ByRule {
		t.Fatalf("within the hour: %+v", out)
	}
	now.Store(start.Add(2 * time.Hour).UnixNano())
	if out, _ := p.Check(context.Background(), readTax); out.By != audit.ByStrict {
		t.Fatalf("two hours later by the policy's clock: %+v, want the rule expired", out)
	}
	if len(p.Rules()) != 0 {
		t.Errorf("expired rule listed: %+v", p.Rules())
	}
}

// TestDomainAnswerCoversItsRun (issue 25): two commands of one client
// want the same domain. Each run is asked with its own command, an
// allow_once reaches only the run whose command the owner saw, and the
// other run still waits for its own answer; two connections of one run
// share a question. A rule made by answering one run answers the others.
func TestDomainAnswerCoversItsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newPolicy(t, true, nil)
		s := newSurface()
		defer p.Subscribe(s)()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel() // on failure, no check is left waiting
		q := Request{Client: "alice-agent", Scope: "alice", Access: Network, Target: "pypi.org"}
		q1, q2 := q, q
		q1.Command, q1.Run = "pip install requests", "run-1"
		q2.Command, q2.Run = "curl -d @secrets pypi.org", "run-2"
		first, again := check(p, ctx, q1), check(p, ctx, q1)
		synctest.Wait()
		second := check(p, ctx, q2)
		synctest.Wait()
		if n := len(p.Pending()); n != 2 {
			t.Fatalf("%d questions pending for two runs, want one each", n)
		}
		a1, a2 := <-s.asked, <-s.asked
		if a1.Command != q1.Command || a2.Command != q2.Command {
			t.Fatalf("questions show %q and %q", a1.Command, a2.Command)
		}
		if err := p.Respond(context.Background(), Answer{ID: a1.ID, Decision: AllowOnce}); err != nil {
			t.Fatal(err)
		}
		if o1, o2 := <-first, <-again; !o1.Allowed || !o2.Allowed {
			t.Errorf("allow_once did not reach both connections of its run: %+v %+v", o1, o2)
		}
		synctest.Wait()
		select {
		case o := <-second:
			t.Fatalf("the other run rode on the first run's allow_once: %+v", o)
		default:
		}
		if pd := p.Pending(); len(pd) != 1 || pd[0].ID != a2.ID {
			t.Fatalf("pending after the first answer: %+v", pd)
		}

		// A third run asks too; "always" on the second answers it by rule.
		q3 := q
		q3.Command, q3.Run = "pip download x", "run-3"
		third := check(p, ctx, q3)
		synctest.Wait()
		<-s.asked
		if err := p.Respond(context.Background(), Answer{ID: a2.ID, Decision: AllowAlways}); err != nil {
			t.Fatal(err)
		}
		if o := <-second; !o.Allowed || o.By != audit.ByOwner {
			t.Errorf("the answered run: %+v", o)
		}
		if o := <-third; !o.Allowed || o.By != audit.ByRule || o.Rule == nil {
			t.Errorf("a run pending when the rule was made: %+v", o)
		}
		if n := len(p.Pending()); n != 0 {
			t.Errorf("%d questions left pending", n)
		}
	})
}
