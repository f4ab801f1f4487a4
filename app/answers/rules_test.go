package answers

import (
	"context"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/policy"
	"corral/core/testkit/errkind"
)

// fakeBook is a Book that keeps the drafts it is given and saves each
// as a rule.
type fakeBook struct {
	drafts []policy.Draft
	by     []string
}

func (b *fakeBook) Prepare(d policy.Draft) (policy.Rule, error) {
	return policy.Rule{ID: "new", Client: d.Client, User: d.User, Access: d.Access, Target: d.Target}, nil
}

func (b *fakeBook) AddRule(ctx context.Context, d policy.Draft, by string) (policy.Rule, error) {
	b.drafts, b.by = append(b.drafts, d), append(b.by, by)
	return b.Prepare(d)
}

func (b *fakeBook) UpdateRule(ctx context.Context, id string, d policy.Draft, by string) (policy.Rule, error) {
	b.drafts, b.by = append(b.drafts, d), append(b.by, by)
	r, err := b.Prepare(d)
	r.ID = id
	return r, err
}

func (b *fakeBook) ImportRules(ctx context.Context, entries []policy.ImportEntry, by string) (int, int, error) {
	return len(entries), 0, nil
}

func (b *fakeBook) ExportRules() []byte { return nil }

// fakeDir knows one agent, bot, working in ann's folder.
type fakeDir struct{}

func (fakeDir) UserOf(agent string) (string, bool) { return "ann", agent == "bot" }
func (fakeDir) HasPerson(id string) bool           { return id == "ann" }

// TestRulebookDraftsAgainstTheDirectory: a hand-written rule's folder
// defaults to the agent's own, an agent or folder that does not exist is
// refused before the policy sees it, expires_in counts from now, and
// rule.update needs the rule's id.
func TestRulebookDraftsAgainstTheDirectory(t *testing.T) {
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	b := &fakeBook{}
	x := Rulebook{Book: func() Book { return b }, Dir: fakeDir{}, Now: func() time.Time { return now }}
	ctx := t.Context()

	r, err := x.Add(ctx, "owner", RuleParams{Client: "bot", Access: "write", Target: "/home/ann/notes", Decision: "allow", ExpiresIn: []byte(`"1h"`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.drafts) != 1 || b.drafts[0].User != "ann" || b.drafts[0].Expires == nil || !b.drafts[0].Expires.Equal(now.Add(time.Hour)) || b.by[0] != "owner" || r.Rule.ID != "new" {
		t.Errorf("rule.add: %+v by %q, answered %+v", b.drafts, b.by, r)
	}
	if _, err := x.Preview(ctx, "owner", RuleParams{Client: "*", Access: "read", Target: "/x", Decision: "allow"}); err != nil {
		t.Errorf("every agent in every folder: %v", err)
	}
	for _, p := range []RuleParams{
		{Client: "nobody", Access: "read", Target: "/x", Decision: "allow"},
		{Client: "bot", User: "bob", Access: "read", Target: "/x", Decision: "allow"},
		{Client: "bot", Access: "read", Target: "/x", Decision: "allow", ExpiresIn: []byte(`"soon"`)},
	} {
		_, err := x.Add(ctx, "owner", p)
		errkind.Want(t, err, errs.InvalidParams)
	}
	_, err = x.Update(ctx, "owner", RuleParams{Client: "bot", Access: "read", Target: "/x", Decision: "allow"})
	errkind.Want(t, err, errs.InvalidParams)
	if len(b.drafts) != 1 {
		t.Errorf("refused rules reached the policy: %+v", b.drafts)
	}
	if r, err := x.Update(ctx, "owner", RuleParams{ID: "r7", Client: "bot", Access: "read", Target: "/x", Decision: "allow"}); err != nil || r.Rule.ID != "r7" {
		t.Errorf("rule.update: %+v, %v", r, err)
	}
}

func TestRulebookWithApprovalsOff(t *testing.T) {
	x := Rulebook{Book: func() Book { return nil }, Dir: fakeDir{}, Now: time.Now}
	ctx := t.Context()
	p := RuleParams{Client: "bot", Access: "read", Target: "/x", Decision: "allow"}
	for name, fn := range map[string]func() error{
		"rule.preview": func() error { _, err := x.Preview(ctx, "owner", p); return err },
		"rule.add":     func() error { _, err := x.Add(ctx, "owner", p); return err },
		"rule.update":  func() error { _, err := x.Update(ctx, "owner", p); return err },
		"rule.export":  func() error { _, err := x.Export(ctx, "owner", struct{}{}); return err },
		"rule.import":  func() error { _, err := x.Import(ctx, "owner", ImportParams{File: "{}"}); return err },
	} {
		if err := fn(); errs.KindOf(err) != errs.Unavailable {
			t.Errorf("%s: %v, want unavailable", name, err)
		}
	}
}
