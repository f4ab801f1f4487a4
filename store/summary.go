package store

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"regexp"
	"slices"
	"time"

	"corral/core/audit"
)

var _ audit.Summarizer = (*Store)(nil)

// exitStatus finds a finished command's exit status in its detail.
var exitStatus = regexp.MustCompile(`(?:^|; )exit (\d+)(?:;|$)`)

// summaryQuery is Summary's one SELECT: the client's events in the range
// (through the (client, time_ns) index) that count in a summary.
func summaryQuery(client string, since, until time.Time) (string, []any) {
	var c conds
	c.add("client = ?", client)
	if !since.IsZero() {
		c.add("time_ns >= ?", clampNanos(since))
	}
	if !until.IsZero() {
		c.add("time_ns < ?", clampNanos(until))
	}
	c.add(`(changes <> '' OR op IN ('command.run', 'network.connect') OR answer <> '' OR decided_by = ?)`, string(audit.ByTimeout))
	return `SELECT op, user, target, decision, decided_by, detail, answer, changes FROM audit_events` + c.clause(), c.args
}

// Summary counts what client did in [since, until) (until zero: up to
// now) in one query over the (client, time) index, reading only the
// events that changed files, ran a command, used the network or asked
// the owner.
func (s *Store) Summary(ctx context.Context, client string, since, until time.Time) (audit.Summary, error) {
	sum := audit.Summary{Client: client, Since: since, Until: until}
	if s.closed() {
		return sum, ErrClosed
	}
	q, args := summaryQuery(client, since, until)
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return sum, fmt.Errorf("audit summary: %w", err)
	}
	defer rows.Close()
	files := map[string]bool{}
	domains := map[string]*audit.DomainCount{}
	answers := map[string]int{}
	for rows.Next() {
		var op, user, target, decision, by, detail, answer, changes string
		if err := rows.Scan(&op, &user, &target, &decision, &by, &detail, &answer, &changes); err != nil {
			return sum, fmt.Errorf("audit summary: %w", err)
		}
		if answer != "" || by == string(audit.ByTimeout) {
			sum.Questions++
			if answer == "" {
				answer = string(audit.ByTimeout)
			}
			answers[answer]++
		}
		switch op {
		case "command.run":
			sum.Commands++
			m := exitStatus.FindStringSubmatch(detail)
			if decision != string(audit.Allow) || (m != nil && m[1] != "0") {
				sum.CommandsFailed++
			}
		case "network.connect":
			host := target
			if h, _, err := net.SplitHostPort(target); err == nil {
				host = h
			}
			d := domains[host]
			if d == nil {
				d = &audit.DomainCount{Domain: host}
				domains[host] = d
			}
			if decision == string(audit.Allow) {
				d.Allowed++
			} else {
				d.Denied++
			}
		}
		if changes != "" && decision == string(audit.Allow) {
			cs, err := parseChanges(changes)
			if err != nil {
				return sum, fmt.Errorf("audit summary: %w", err)
			}
			sum.FileCalls++
			for _, ch := range cs {
				if !ch.Dir {
					files[user+"\x00"+ch.Path] = true
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return sum, fmt.Errorf("audit summary: %w", err)
	}
	sum.Files = len(files)
	for _, d := range domains {
		sum.Domains = append(sum.Domains, *d)
	}
	slices.SortFunc(sum.Domains, func(a, b audit.DomainCount) int {
		return cmp.Or(cmp.Compare(b.Allowed+b.Denied, a.Allowed+a.Denied), cmp.Compare(a.Domain, b.Domain))
	})
	for a, n := range answers {
		sum.Answers = append(sum.Answers, audit.AnswerCount{Answer: a, Count: n})
	}
	slices.SortFunc(sum.Answers, func(a, b audit.AnswerCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Answer, b.Answer))
	})
	return sum, nil
}
