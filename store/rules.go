package store

import (
	"context"
	"fmt"
	"time"

	"corral/core/killpoint"
	"corral/core/policy"
)

var _ policy.RuleStore = (*Store)(nil)

// SaveRule stores an "always" rule.
func (s *Store) SaveRule(ctx context.Context, r policy.Rule) error {
	if s.closed() {
		return ErrClosed
	}
	if _, err := s.wdb.ExecContext(ctx, insertRule, ruleArgs(r)...); err != nil {
		return fmt.Errorf("save rule: %w", err)
	}
	killpoint.Here("rule.saved")
	return nil
}

// SaveRules stores rules in one transaction: all of them, or none (a
// crash half-way leaves none).
func (s *Store) SaveRules(ctx context.Context, rules []policy.Rule) (err error) {
	if s.closed() {
		return ErrClosed
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save rules: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	for _, r := range rules {
		if _, err := tx.ExecContext(ctx, insertRule, ruleArgs(r)...); err != nil {
			return fmt.Errorf("save rules: %w", err)
		}
		killpoint.Here("rule.saved")
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save rules: %w", err)
	}
	return nil
}

const insertRule = `INSERT INTO rules (id, client, user, access, target, match, decision, created_ns, created_by, expires_ns, note)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// ruleArgs are insertRule's arguments for r.
func ruleArgs(r policy.Rule) []any {
	var exp any
	if r.Expires != nil {
		exp = r.Expires.UnixNano()
	}
	return []any{r.ID, r.Client, r.User, string(r.Access), r.Target, string(r.Match), string(r.Decision),
		r.Created.UnixNano(), r.CreatedBy, exp, r.Note}
}

// DeleteRule removes a rule; it reports whether there was one.
func (s *Store) DeleteRule(ctx context.Context, id string) (bool, error) {
	if s.closed() {
		return false, ErrClosed
	}
	return s.deleteByID(ctx, "delete rule", `DELETE FROM rules WHERE id = ?`, id)
}

// deleteByID runs query, a DELETE of the row with id, and reports whether
// there was one; op names the operation in an error.
func (s *Store) deleteByID(ctx context.Context, op, query, id string) (bool, error) {
	res, err := s.wdb.ExecContext(ctx, query, id)
	if err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// LoadRules returns every stored rule, oldest first; expired ones are
// deleted on the way.
func (s *Store) LoadRules(ctx context.Context) ([]policy.Rule, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	if _, err := s.wdb.ExecContext(ctx, `DELETE FROM rules WHERE expires_ns IS NOT NULL AND expires_ns <= ?`, s.opts.Clock().UnixNano()); err != nil {
		return nil, fmt.Errorf("load rules: %w", err)
	}
	rows, err := s.rdb.QueryContext(ctx,
		`SELECT id, client, user, access, target, match, decision, created_ns, created_by, expires_ns, note
		 FROM rules ORDER BY created_ns, id`)
	if err != nil {
		return nil, fmt.Errorf("load rules: %w", err)
	}
	defer rows.Close()
	var out []policy.Rule
	for rows.Next() {
		var r policy.Rule
		var access, match, decision string
		var created int64
		var exp *int64
		if err := rows.Scan(&r.ID, &r.Client, &r.User, &access, &r.Target, &match, &decision, &created, &r.CreatedBy, &exp, &r.Note); err != nil {
			return nil, fmt.Errorf("load rules: %w", err)
		}
		r.Access, r.Match, r.Decision, r.Lifetime = policy.Access(access), policy.Match(match), policy.Effect(decision), policy.Always
		r.Created = time.Unix(0, created).UTC()
		if exp != nil {
			t := time.Unix(0, *exp).UTC()
			r.Expires = &t
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
