package answers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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

// Book is what the rule methods use of the policy (*policy.Policy).
type Book interface {
	Prepare(d policy.Draft) (policy.Rule, error)
	AddRule(ctx context.Context, d policy.Draft, by string) (policy.Rule, error)
	UpdateRule(ctx context.Context, id string, d policy.Draft, by string) (policy.Rule, error)
	ImportRules(ctx context.Context, entries []policy.ImportEntry, by string) (added, skipped int, err error)
	ExportRules() []byte
}

// Directory is who the agents are and the folders they work in.
type Directory interface {
	UserOf(agent string) (string, bool)
	HasPerson(id string) bool
}

// Rulebook answers the hand-written rule methods.
type Rulebook struct {
	Book func() Book // nil result: approvals are off
	// Record writes one line of the audit log; the answer is withheld
	// when it fails.
	Record func(ctx context.Context, who, op, target, detail string) error
	Now    func() time.Time
	Dir    Directory
}

func (x Rulebook) policy() (Book, error) {
	if b := x.Book(); b != nil {
		return b, nil
	}
	return nil, errs.New(errs.Unavailable, "", "Approvals are not enabled in this Corral, so there are no rules to write.")
}

// RuleParams are a hand-written rule as the dashboard sends it.
type RuleParams struct {
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

// RuleAnswer answers rule.preview, rule.add and rule.update.
type RuleAnswer struct {
	Rule   wire.Rule `json:"rule"`
	Covers string    `json:"covers"` // what the rule covers, in a plain sentence
}

// draft checks who and where p names against the live directory and
// makes the policy's draft of it.
func (x Rulebook) draft(p RuleParams) (policy.Draft, error) {
	d := policy.Draft{Client: p.Client, User: p.User, Access: policy.Access(p.Access), Target: p.Target, Folder: p.WholeFolder,
		Decision: policy.Effect(p.Decision), Expires: p.Expires, Note: p.Note}
	if d.Expires == nil {
		in, err := ParseExpiresIn(p.ExpiresIn)
		if err != nil {
			return d, err
		}
		if in > 0 {
			t := x.Now().Add(in)
			d.Expires = &t
		}
	}
	if d.Client != policy.AnyClient {
		user, ok := x.Dir.UserOf(d.Client)
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
	if !x.Dir.HasPerson(d.User) && d.User != policy.AnyClient && d.User != sandbox.ScopeCompanion && d.User != sandbox.ScopeDefault {
		return d, errs.New(errs.InvalidParams, "", "There is no folder %q: name a person, \"companion\", \"default\", or \"*\" for every folder.", d.User)
	}
	return d, nil
}

// prepare is the policy and the draft p makes.
func (x Rulebook) prepare(p RuleParams) (Book, policy.Draft, error) {
	b, err := x.policy()
	if err != nil {
		return nil, policy.Draft{}, err
	}
	d, err := x.draft(p)
	return b, d, err
}

// Preview is rule.preview: the rule p would save, and what it covers;
// nothing is saved.
func (x Rulebook) Preview(ctx context.Context, by string, p RuleParams) (RuleAnswer, error) {
	b, d, err := x.prepare(p)
	if err != nil {
		return RuleAnswer{}, err
	}
	r, err := b.Prepare(d)
	if err != nil {
		return RuleAnswer{}, err
	}
	return RuleAnswer{Rule: wire.To[wire.Rule](r), Covers: r.Covers()}, nil
}

// Add is rule.add: the rule p, saved by by.
func (x Rulebook) Add(ctx context.Context, by string, p RuleParams) (RuleAnswer, error) {
	b, d, err := x.prepare(p)
	if err != nil {
		return RuleAnswer{}, err
	}
	r, err := b.AddRule(ctx, d, by)
	if err != nil {
		return RuleAnswer{}, err
	}
	return RuleAnswer{Rule: wire.To[wire.Rule](r), Covers: r.Covers()}, nil
}

// Update is rule.update: the rule p.ID changed to p by by.
func (x Rulebook) Update(ctx context.Context, by string, p RuleParams) (RuleAnswer, error) {
	b, d, err := x.prepare(p)
	if err != nil {
		return RuleAnswer{}, err
	}
	if p.ID == "" {
		return RuleAnswer{}, errs.New(errs.InvalidParams, "", "Missing parameter \"id\": the rule to change.")
	}
	r, err := b.UpdateRule(ctx, p.ID, d, by)
	if err != nil {
		return RuleAnswer{}, err
	}
	return RuleAnswer{Rule: wire.To[wire.Rule](r), Covers: r.Covers()}, nil
}

// Exported answers rule.export: the rules file, and a name to save
// it under.
type Exported struct {
	File  string `json:"file"`
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// Export is rule.export: the rules file, recorded before its answer.
func (x Rulebook) Export(ctx context.Context, by string, _ struct{}) (Exported, error) {
	b, err := x.policy()
	if err != nil {
		return Exported{}, err
	}
	data := b.ExportRules()
	entries, err := policy.ParseRulesFile(data)
	if err != nil {
		return Exported{}, err
	}
	if err := x.Record(ctx, by, "rule.export", "", fmt.Sprintf("%d rules", len(entries))); err != nil {
		return Exported{}, err
	}
	return Exported{File: string(data), Name: "corral-rules-" + x.Now().Format("2006-01-02") + ".json", Count: len(entries)}, nil
}

// Imported answers rule.import.
type Imported struct {
	Added   int `json:"added"`
	Skipped int `json:"skipped"` // already in force
}

// ImportParams are rule.import's: a rules file as rule.export writes it.
type ImportParams struct {
	File string `json:"file" rpc:"required"`
}

// Import is rule.import: every rule of the file checked as rule.add
// checks it (one refused: none imported), then saved by the policy
// (ImportRules); recorded before its answer.
func (x Rulebook) Import(ctx context.Context, by string, p ImportParams) (Imported, error) {
	b, err := x.policy()
	if err != nil {
		return Imported{}, err
	}
	entries, err := policy.ParseRulesFile([]byte(p.File))
	if err != nil {
		return Imported{}, err
	}
	for i := range entries {
		rp := RuleParams{Client: entries[i].Client, User: entries[i].User, Access: string(entries[i].Access), Target: entries[i].Target,
			WholeFolder: entries[i].Folder, Decision: string(entries[i].Decision), Expires: entries[i].Expires, Note: entries[i].Note}
		d, err := x.draft(rp)
		if err != nil {
			return Imported{}, errs.New(errs.InvalidParams, "", "Entry %d (line %d) was refused, so nothing was imported: %s", entries[i].Entry, entries[i].Line, errs.As(err).Msg)
		}
		entries[i].Draft = d
	}
	added, skipped, err := b.ImportRules(ctx, entries, by)
	if err != nil {
		return Imported{}, err
	}
	if err := x.Record(ctx, by, "rule.import", "", fmt.Sprintf("%d rules added, %d already in force", added, skipped)); err != nil {
		return Imported{}, err
	}
	return Imported{Added: added, Skipped: skipped}, nil
}
