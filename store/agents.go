package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Agent is an agent the owner added at runtime (migration 005). Its key is
// kept only as KeySHA256.
type Agent struct {
	Name      string
	User      string
	ActFor    []string
	Ask       bool   // its commands need the owner's approval
	Network   string // "ask" or "off"
	Paused    bool
	Level     string // the trust level the owner chose (policy.Level); "" for none
	KeySHA256 [32]byte
	Created   time.Time
	LastUsed  time.Time // zero: never
}

// Person is a person the owner added at runtime.
type Person struct {
	ID      string
	Name    string
	Created time.Time
}

// AgentState is what the owner set at runtime for an agent written in
// config.toml.
type AgentState struct {
	Name     string
	Paused   bool
	Level    string // the trust level the owner chose; "" for none
	LastUsed time.Time
}

// ErrExists is returned when a name is already taken.
var ErrExists = errors.New("already exists")

const agentColumns = `name, user, act_for, ask, network, paused, key_sha256, created_ns, last_used_ns, level`

// AddAgent stores a new agent; a taken name or key is ErrExists.
func (s *Store) AddAgent(ctx context.Context, a Agent) error {
	if s.closed() {
		return ErrClosed
	}
	act, _ := json.Marshal(nonNil(a.ActFor))
	_, err := s.wdb.ExecContext(ctx, `INSERT INTO agents (`+agentColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.Name, a.User, string(act), a.Ask, a.Network, a.Paused, a.KeySHA256[:], a.Created.UnixNano(), unixOrZero(a.LastUsed), a.Level)
	if isConstraint(err) {
		return ErrExists
	}
	if err != nil {
		return fmt.Errorf("add agent: %w", err)
	}
	return nil
}

// UpdateAgent replaces the settings of the named agent (not its key,
// creation or last use); it reports whether there was one.
func (s *Store) UpdateAgent(ctx context.Context, a Agent) (bool, error) {
	if s.closed() {
		return false, ErrClosed
	}
	act, _ := json.Marshal(nonNil(a.ActFor))
	res, err := s.wdb.ExecContext(ctx, `UPDATE agents SET user = ?, act_for = ?, ask = ?, network = ?, paused = ?, level = ? WHERE name = ?`,
		a.User, string(act), a.Ask, a.Network, a.Paused, a.Level, a.Name)
	if err != nil {
		return false, fmt.Errorf("update agent: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// SetAgentKey replaces an agent's key hash; a key another agent has is
// ErrExists.
func (s *Store) SetAgentKey(ctx context.Context, name string, hash [32]byte) (bool, error) {
	if s.closed() {
		return false, ErrClosed
	}
	res, err := s.wdb.ExecContext(ctx, `UPDATE agents SET key_sha256 = ? WHERE name = ?`, hash[:], name)
	if isConstraint(err) {
		return false, ErrExists
	}
	if err != nil {
		return false, fmt.Errorf("rotate agent key: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// RemoveAgent deletes an agent; it reports whether there was one.
func (s *Store) RemoveAgent(ctx context.Context, name string) (bool, error) {
	if s.closed() {
		return false, ErrClosed
	}
	return s.deleteByID(ctx, "remove agent", `DELETE FROM agents WHERE name = ?`, name)
}

// Agents lists the agents added at runtime, oldest first.
func (s *Store) Agents(ctx context.Context) ([]Agent, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+agentColumns+` FROM agents ORDER BY created_ns, name`)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	defer rows.Close()
	out := []Agent{}
	for rows.Next() {
		var a Agent
		var act string
		var key []byte
		var created, used int64
		if err := rows.Scan(&a.Name, &a.User, &act, &a.Ask, &a.Network, &a.Paused, &key, &created, &used, &a.Level); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(act), &a.ActFor); err != nil {
			return nil, fmt.Errorf("agent %q: act_for: %w", a.Name, err)
		}
		copy(a.KeySHA256[:], key)
		a.Created, a.LastUsed = time.Unix(0, created).UTC(), timeOrZero(used)
		out = append(out, a)
	}
	return out, rows.Err()
}

// TouchAgent records that an agent (added at runtime or from config.toml)
// was used at t.
func (s *Store) TouchAgent(ctx context.Context, name string, t time.Time) error {
	if s.closed() {
		return ErrClosed
	}
	res, err := s.wdb.ExecContext(ctx, `UPDATE agents SET last_used_ns = ? WHERE name = ?`, t.UnixNano(), name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	_, err = s.wdb.ExecContext(ctx, `INSERT INTO agent_state (name, last_used_ns) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET last_used_ns = excluded.last_used_ns`, name, t.UnixNano())
	return err
}

// SetConfigAgentPaused pauses or resumes an agent written in config.toml.
func (s *Store) SetConfigAgentPaused(ctx context.Context, name string, paused bool) error {
	if s.closed() {
		return ErrClosed
	}
	_, err := s.wdb.ExecContext(ctx, `INSERT INTO agent_state (name, paused) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET paused = excluded.paused`, name, paused)
	return err
}

// SetConfigAgentLevel keeps the trust level the owner chose for an agent
// written in config.toml.
func (s *Store) SetConfigAgentLevel(ctx context.Context, name, level string) error {
	if s.closed() {
		return ErrClosed
	}
	_, err := s.wdb.ExecContext(ctx, `INSERT INTO agent_state (name, level) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET level = excluded.level`, name, level)
	return err
}

// AgentStates lists the runtime state of agents from config.toml.
func (s *Store) AgentStates(ctx context.Context) ([]AgentState, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT name, paused, last_used_ns, level FROM agent_state ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list agent state: %w", err)
	}
	defer rows.Close()
	out := []AgentState{}
	for rows.Next() {
		var a AgentState
		var used int64
		if err := rows.Scan(&a.Name, &a.Paused, &used, &a.Level); err != nil {
			return nil, err
		}
		a.LastUsed = timeOrZero(used)
		out = append(out, a)
	}
	return out, rows.Err()
}

// AddPerson stores a new person; a taken id is ErrExists.
func (s *Store) AddPerson(ctx context.Context, p Person) error {
	if s.closed() {
		return ErrClosed
	}
	_, err := s.wdb.ExecContext(ctx, `INSERT INTO people (id, name, created_ns) VALUES (?, ?, ?)`, p.ID, p.Name, p.Created.UnixNano())
	if isConstraint(err) {
		return ErrExists
	}
	if err != nil {
		return fmt.Errorf("add person: %w", err)
	}
	return nil
}

// RenamePerson changes a person's name; it reports whether there was one.
func (s *Store) RenamePerson(ctx context.Context, id, name string) (bool, error) {
	if s.closed() {
		return false, ErrClosed
	}
	res, err := s.wdb.ExecContext(ctx, `UPDATE people SET name = ? WHERE id = ?`, name, id)
	if err != nil {
		return false, fmt.Errorf("rename person: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// RemovePerson forgets a person (their folder is not touched); it reports
// whether there was one.
func (s *Store) RemovePerson(ctx context.Context, id string) (bool, error) {
	if s.closed() {
		return false, ErrClosed
	}
	return s.deleteByID(ctx, "remove person", `DELETE FROM people WHERE id = ?`, id)
}

// People lists the people added at runtime, oldest first.
func (s *Store) People(ctx context.Context) ([]Person, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, name, created_ns FROM people ORDER BY created_ns, id`)
	if err != nil {
		return nil, fmt.Errorf("list people: %w", err)
	}
	defer rows.Close()
	out := []Person{}
	for rows.Next() {
		var p Person
		var created int64
		if err := rows.Scan(&p.ID, &p.Name, &created); err != nil {
			return nil, err
		}
		p.Created = time.Unix(0, created).UTC()
		out = append(out, p)
	}
	return out, rows.Err()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func timeOrZero(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
