//go:build unix

package store

import (
	"strings"
	"testing"
	"time"

	"corral/core/audit"
)

// Summary counts one client's range: a file changed by two events once, a
// folder not at all, refused changes not; a failed command; hosts with
// their allowed and refused connections; questions by answer, a timeout
// included. Other clients and events outside the range do not count.
func TestSummary(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	evs := []audit.Event{
		{Time: at(1), Client: "claude", User: "alice", Op: "file.write", Decision: audit.Allow, Changes: []audit.Change{{Path: "a.txt", Kind: audit.Created}}},
		{Time: at(2), Client: "claude", User: "alice", Op: "file.edit", Decision: audit.Allow, Changes: []audit.Change{{Path: "a.txt", Kind: audit.Modified}}},
		{Time: at(3), Client: "claude", User: "alice", Op: "command.run", Decision: audit.Allow, Detail: "exit 0",
			Changes: []audit.Change{{Path: "b.txt", Kind: audit.Created}, {Path: "d", Kind: audit.Created, Dir: true}}},
		{Time: at(4), Client: "claude", User: "bob", Op: "file.write", Decision: audit.Allow, Changes: []audit.Change{{Path: "a.txt", Kind: audit.Created}}},
		{Time: at(5), Client: "claude", User: "alice", Op: "command.run", Decision: audit.Allow, Detail: "exit 2"},
		{Time: at(6), Client: "claude", User: "alice", Op: "command.run", Decision: audit.Deny, DecidedBy: audit.ByOwner, Answer: "deny_once"},
		{Time: at(7), Client: "claude", User: "alice", Op: "network.connect", Target: "pypi.example:443", Decision: audit.Allow, Answer: "allow_once"},
		{Time: at(8), Client: "claude", User: "alice", Op: "network.connect", Target: "pypi.example:443", Decision: audit.Deny, DecidedBy: audit.ByRule},
		{Time: at(9), Client: "claude", User: "alice", Op: "network.connect", Target: "[::1]:80", Decision: audit.Allow},
		{Time: at(10), Client: "claude", User: "alice", Op: "file.read", Decision: audit.Deny, DecidedBy: audit.ByTimeout},
		{Time: at(11), Client: "claude", User: "alice", Op: "file.write", Decision: audit.Deny, Changes: []audit.Change{{Path: "c.txt", Kind: audit.Created}}},
		{Time: at(12), Client: "claude", User: "alice", Op: "file.read", Decision: audit.Allow},
		{Time: at(13), Client: "codex", User: "alice", Op: "command.run", Decision: audit.Allow, Changes: []audit.Change{{Path: "x", Kind: audit.Created}}},
		{Time: at(99), Client: "claude", User: "alice", Op: "command.run", Decision: audit.Allow},
	}
	for _, e := range evs {
		if _, err := s.Record(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Summary(t.Context(), "claude", at(0), at(60))
	if err != nil {
		t.Fatal(err)
	}
	if got.Files != 3 || got.FileCalls != 4 || got.Commands != 3 || got.CommandsFailed != 2 || got.Questions != 3 {
		t.Errorf("summary: %+v", got)
	}
	wantDomains := []audit.DomainCount{{Domain: "pypi.example", Allowed: 1, Denied: 1}, {Domain: "::1", Allowed: 1}}
	if len(got.Domains) != 2 || got.Domains[0] != wantDomains[0] || got.Domains[1] != wantDomains[1] {
		t.Errorf("domains: %+v", got.Domains)
	}
	if len(got.Answers) != 3 || got.Answers[0] != (audit.AnswerCount{Answer: "allow_once", Count: 1}) || got.Answers[2] != (audit.AnswerCount{Answer: "timeout", Count: 1}) {
		t.Errorf("answers: %+v", got.Answers)
	}
	if n, _ := s.Summary(t.Context(), "nobody", at(0), at(60)); n.Files != 0 || n.Commands != 0 || n.Domains != nil {
		t.Errorf("nobody's summary: %+v", n)
	}
}

// The summary's one query walks the (client, time_ns) index over the range.
func TestSummaryPlan(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	q, args := summaryQuery("c", t0, t0.Add(time.Hour))
	rows, err := s.rdb.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if p := strings.Join(plan, "; "); !strings.Contains(p, "INDEX audit_events_client (client=? AND time_ns>? AND time_ns<?)") {
		t.Errorf("plan: %s", p)
	}
}

// BenchmarkSummary1M sums up one busy client's day and one quiet
// client's hour in the million-event log.
func BenchmarkSummary1M(b *testing.B) {
	s := bench1M(b)
	for _, tc := range []struct {
		name, client string
		span         time.Duration
	}{{"busy-day", "claude", 24 * time.Hour}, {"quiet-hour", "zed", time.Hour}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Summary(b.Context(), tc.client, benchEnd.Add(-tc.span), benchEnd); err != nil {
					b.Fatal(err)
				}
			}
			reportMs(b)
		})
	}
}
