package server

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"corral/app/rpc"
	"corral/app/wire"
	"corral/core/errs"
	"corral/core/policy"
	"corral/core/sandbox"
)

// Rules the owner writes by hand: rule.preview, rule.add, rule.update,
// rule.export and rule.import (docs/protocol.md "Rules written by
// hand"). Every rule goes through policy.Prepare, the checks an answer
// widened to its folder meets; the sentence a preview shows is
// policy.Rule.Covers of the rule that would be saved.

// ruleBook is what the rule methods use of the policy (*policy.Policy).
type ruleBook interface {
	Prepare(d policy.Draft) (policy.Rule, error)
	AddRule(ctx context.Context, d policy.Draft, by string) (policy.Rule, error)
	UpdateRule(ctx context.Context, id string, d policy.Draft, by string) (policy.Rule, error)
	ImportRules(ctx context.Context, entries []policy.ImportEntry, by string) (added, skipped int, err error)
	ExportRules() []byte
}

// ruleArea answers the hand-written rule methods.
type ruleArea struct {
	book   func() ruleBook // nil result: approvals are off
	record recordFunc
	now    func() time.Time
	// dir is who the agents are and the folders they work in.
	dir interface {
		UserOf(agent string) (string, bool)
		HasPerson(id string) bool
	}
}

func (s *Server) ruleArea() ruleArea {
	return ruleArea{dir: s.dir, record: s.record, now: s.now, book: func() ruleBook {
		if p := s.box.Policy(); p != nil {
			return p
		}
		return nil
	}}
}

func (x ruleArea) methods(add func(name string, m method)) {
	add("rule.preview", method{owner: true, fn: x.preview})
	add("rule.add", method{owner: true, fn: x.add})
	add("rule.update", method{owner: true, fn: x.update})
	add("rule.export", method{owner: true, fn: x.export})
	add("rule.import", method{owner: true, fn: x.importFile})
}

func (x ruleArea) policy() (ruleBook, error) {
	if b := x.book(); b != nil {
		return b, nil
	}
	return nil, errs.New(errs.Unavailable, "", "Approvals are not enabled in this Corral, so there are no rules to write.")
}

// ruleParams are a hand-written rule as the dashboard sends it.
type ruleParams struct {
	ID          string          `json:"id"` // rule.update only
	Client      string          `json:"client" rpc:"required"`
	User        string          `json:"user"` // default: the agent's own folder, or "*" with client "*"
	Access      string          `json:"access" rpc:"required"`
	Target      string          `json:"target" rpc:"required"`
	WholeFolder bool            `json:"whole_folder"`
	Decision    string          `json:"decision" rpc:"required"`
	Expires     *time.Time      `json:"expires"`
	ExpiresIn   json.RawMessage `json:"expires_in"`
	Note        string          `json:"note"`
}

// ruleResult answers rule.preview, rule.add and rule.update.
type ruleResult struct {
	Rule   wire.Rule `json:"rule"`
	Covers string    `json:"covers"` // what the rule covers, in a plain sentence
}

// draft checks who and where p names against the live directory and
// makes the policy's draft of it.
func (x ruleArea) draft(p ruleParams) (policy.Draft, error) {
	d := policy.Draft{Client: p.Client, User: p.User, Access: policy.Access(p.Access), Target: p.Target, Folder: p.WholeFolder,
		Decision: policy.Effect(p.Decision), Expires: p.Expires, Note: p.Note}
	if d.Expires == nil {
		in, err := parseExpiresIn(p.ExpiresIn)
		if err != nil {
			return d, err
		}
		if in > 0 {
			t := x.now().Add(in)
			d.Expires = &t
		}
	}
	if d.Client != policy.AnyClient {
		user, ok := x.dir.UserOf(d.Client)
		if !ok {
			return d, errs.New(errs.InvalidParams, "", "There is no agent called %q; choose one from the Agents page, or \"*\" for every agent.", d.Client)
		}
		if d.User == "" {
			d.User = user
		}
	}
	if d.User == "" {
		d.User = policy.AnyClient
	}
	if !x.dir.HasPerson(d.User) && d.User != policy.AnyClient && d.User != sandbox.ScopeCompanion && d.User != sandbox.ScopeDefault {
		return d, errs.New(errs.InvalidParams, "", "There is no folder %q: name a person, \"companion\", \"default\", or \"*\" for every folder.", d.User)
	}
	return d, nil
}

func (x ruleArea) decode(c *call) (ruleBook, policy.Draft, ruleParams, error) {
	var p ruleParams
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, policy.Draft{}, p, err
	}
	b, err := x.policy()
	if err != nil {
		return nil, policy.Draft{}, p, err
	}
	d, err := x.draft(p)
	return b, d, p, err
}

func (x ruleArea) preview(ctx context.Context, c *call) (any, error) {
	b, d, _, err := x.decode(c)
	if err != nil {
		return nil, err
	}
	r, err := b.Prepare(d)
	if err != nil {
		return nil, err
	}
	return ruleResult{Rule: wire.To[wire.Rule](r), Covers: r.Covers()}, nil
}

func (x ruleArea) add(ctx context.Context, c *call) (any, error) {
	b, d, _, err := x.decode(c)
	if err != nil {
		return nil, err
	}
	r, err := b.AddRule(ctx, d, c.caller.Client)
	if err != nil {
		return nil, err
	}
	return ruleResult{Rule: wire.To[wire.Rule](r), Covers: r.Covers()}, nil
}

func (x ruleArea) update(ctx context.Context, c *call) (any, error) {
	b, d, p, err := x.decode(c)
	if err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, errs.New(errs.InvalidParams, "", "Missing parameter \"id\": the rule to change.")
	}
	r, err := b.UpdateRule(ctx, p.ID, d, c.caller.Client)
	if err != nil {
		return nil, err
	}
	return ruleResult{Rule: wire.To[wire.Rule](r), Covers: r.Covers()}, nil
}

// exportResult answers rule.export: the rules file, and a name to save
// it under.
type exportResult struct {
	File  string `json:"file"`
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func (x ruleArea) export(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	b, err := x.policy()
	if err != nil {
		return nil, err
	}
	data := b.ExportRules()
	entries, err := policy.ParseRulesFile(data)
	if err != nil {
		return nil, err
	}
	if err := x.record(ctx, c.caller.Client, "rule.export", "", fmt.Sprintf("%d rules", len(entries))); err != nil {
		return nil, err
	}
	return exportResult{File: string(data), Name: "corral-rules-" + x.now().Format("2006-01-02") + ".json", Count: len(entries)}, nil
}

// importResult answers rule.import.
type importResult struct {
	Added   int `json:"added"`
	Skipped int `json:"skipped"` // already in force
}

func (x ruleArea) importFile(ctx context.Context, c *call) (any, error) {
	var p struct {
		File string `json:"file" rpc:"required"`
	}
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	b, err := x.policy()
	if err != nil {
		return nil, err
	}
	entries, err := policy.ParseRulesFile([]byte(p.File))
	if err != nil {
		return nil, err
	}
	for i := range entries {
		rp := ruleParams{Client: entries[i].Client, User: entries[i].User, Access: string(entries[i].Access), Target: entries[i].Target,
			WholeFolder: entries[i].Folder, Decision: string(entries[i].Decision), Expires: entries[i].Expires, Note: entries[i].Note}
		d, err := x.draft(rp)
		if err != nil {
			return nil, errs.New(errs.InvalidParams, "", "Entry %d (line %d) was refused, so nothing was imported: %s", entries[i].Entry, entries[i].Line, errs.As(err).Msg)
		}
		entries[i].Draft = d
	}
	added, skipped, err := b.ImportRules(ctx, entries, c.caller.Client)
	if err != nil {
		return nil, err
	}
	if err := x.record(ctx, c.caller.Client, "rule.import", "", fmt.Sprintf("%d rules added, %d already in force", added, skipped)); err != nil {
		return nil, err
	}
	return importResult{Added: added, Skipped: skipped}, nil
}
