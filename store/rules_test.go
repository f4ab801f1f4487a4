package store

import (
	"context"
	"testing"
	"time"

	"corral/core/policy"
)

func TestRulesRoundTripAcrossReopen(t *testing.T) {
	t.Parallel()
	s, path := openTest(t, Options{})
	ctx := context.Background()
	created := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	past, future := time.Now().Add(-time.Hour).UTC(), time.Now().Add(time.Hour).UTC()
	rules := []policy.Rule{
		{ID: "ru_1", Client: "alice-agent", User: "alice", Access: policy.Read, Target: "/home/me/Documents", Match: policy.Prefix, Decision: policy.EffectAllow, Created: created, CreatedBy: "browser", Note: "my documents"},
		{ID: "ru_2", Client: "*", User: "bob", Access: policy.Write, Target: "/etc/hosts", Match: policy.Exact, Decision: policy.EffectDeny, Created: created.Add(time.Second), CreatedBy: "tray", Expires: &future},
		{ID: "ru_3", Client: "x", User: "bob", Access: policy.Read, Target: "/tmp", Match: policy.Exact, Decision: policy.EffectAllow, Created: created.Add(2 * time.Second), CreatedBy: "owner", Expires: &past},
	}
	for _, r := range rules {
		if err := s.SaveRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveRule(ctx, rules[0]); err == nil {
		t.Error("duplicate rule id accepted")
	}
	if ok, err := s.DeleteRule(ctx, "nope"); ok || err != nil {
		t.Errorf("delete unknown: %v %v", ok, err)
	}

	s = reopen(t, s, path)
	got, err := s.LoadRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("rules after reopen: %+v (the expired one should be gone)", got)
	}
	a, b := got[0], got[1]
	if a.ID != "ru_1" || a.Match != policy.Prefix || a.Decision != policy.EffectAllow || !a.Created.Equal(created) || a.Expires != nil || a.Lifetime != policy.Always || a.CreatedBy != "browser" || a.Note != "my documents" {
		t.Errorf("rule 1: %+v", a)
	}
	if b.ID != "ru_2" || b.Client != "*" || b.Expires == nil || !b.Expires.Equal(future) {
		t.Errorf("rule 2: %+v", b)
	}
	if ok, err := s.DeleteRule(ctx, "ru_1"); !ok || err != nil {
		t.Errorf("delete: %v %v", ok, err)
	}
	if got, _ := s.LoadRules(ctx); len(got) != 1 {
		t.Errorf("after delete: %+v", got)
	}
}

// SaveRules saves all its rules or none: a duplicate id among them
// leaves none saved.
func TestSaveRulesAllOrNone(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	ctx := context.Background()
	created := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	rule := func(id, target string) policy.Rule {
		return policy.Rule{ID: id, Client: "*", User: "alice", Access: policy.Network, Target: target, Match: policy.Exact, Decision: policy.EffectAllow, Created: created, CreatedBy: "owner"}
	}
	if err := s.SaveRules(ctx, []policy.Rule{rule("ru_a", "a.example.com"), rule("ru_b", "b.example.com"), rule("ru_a", "c.example.com")}); err == nil {
		t.Fatal("rules with a duplicate id saved")
	}
	if got, err := s.LoadRules(ctx); err != nil || len(got) != 0 {
		t.Fatalf("after a refused SaveRules: %+v %v", got, err)
	}
	if err := s.SaveRules(ctx, []policy.Rule{rule("ru_a", "a.example.com"), rule("ru_b", "b.example.com")}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadRules(ctx); err != nil || len(got) != 2 {
		t.Fatalf("after SaveRules: %+v %v", got, err)
	}
}
