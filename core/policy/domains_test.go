package policy

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"corral/core/audit"
)

// TestOneQuestionForACommandsDomains (issue 27): a command's declared
// domains are asked in one question; no rule decides the list as a whole
// (a wildcard rule must not match the joined text), and an "always"
// answer makes one rule per domain, each one deciding its own domain.
func TestOneQuestionForACommandsDomains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, au := newPolicy(t, true, nil)
		s := newSurface()
		defer p.Subscribe(s)()
		// "*.org" would match "pypi.org, *.pythonhosted.org" as text.
		p.addRule(context.Background(), Rule{ID: "ru_org", Client: "alice-agent", User: "alice", Access: Network, Target: "*.org", Match: Exact, Decision: EffectAllow, Lifetime: Session})
		domains := []string{"*.pythonhosted.org", "pypi.org"}
		q := Request{Client: "alice-agent", Scope: "alice", Access: Network, Target: strings.Join(domains, ", "), Domains: domains, Command: "pip install requests", Run: "run-1"}
		got := check(p, context.Background(), q)
		synctest.Wait()
		a := <-s.asked
		if !slices.Equal(a.Domains, domains) || a.Domain != q.Target || a.OneTimeOnly ||
			a.Description != "alice-agent wants to connect to *.pythonhosted.org, pypi.org for: pip install requests" {
			t.Fatalf("approval %+v", a)
		}
		if err := p.Respond(context.Background(), Answer{ID: a.ID, Decision: AllowAlways, By: "owner"}); err != nil {
			t.Fatal(err)
		}
		out := <-got
		if !out.Allowed || out.By != audit.ByOwner || out.Rule == nil || out.Rule.Target != "*.pythonhosted.org" {
			t.Fatalf("outcome %+v", out)
		}
		var targets []string
		for _, r := range p.Rules() {
			if r.ID != "ru_org" {
				targets = append(targets, r.Target)
			}
		}
		if slices.Sort(targets); !slices.Equal(targets, domains) {
			t.Errorf("rules for %v; want one per domain", targets)
		}
		for host, want := range map[string]string{"files.pythonhosted.org": "*.pythonhosted.org", "pypi.org": "pypi.org"} {
			if r, ok := p.RuleFor("alice-agent", "alice", Network, host); !ok || r.Target != want || r.Decision != EffectAllow {
				t.Errorf("%s: rule %+v %v; want the answer's rule for %s", host, r, ok, want)
			}
		}
		if n := strings.Count(strings.Join(au.Ops(), " "), "rule.create"); n != 3 {
			t.Errorf("%d rule.create events; want the *.org one and one per domain", n)
		}
	})
}
