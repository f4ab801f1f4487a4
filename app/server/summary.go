package server

import (
	"context"
	"time"

	"corral/app/rpc"
	"corral/core/audit"
	"corral/core/errs"
)

// summaryArea answers audit.summary: what one agent did in a range
// (today, the last hour), counted by the store in one query
// (audit.Summarizer) — the Agents page's "today" line.
type summaryArea struct {
	log auditFeed
}

func (x summaryArea) methods(add func(name string, m method)) {
	add("audit.summary", method{owner: true, fn: x.summary})
}

type summaryParams struct {
	Client string `json:"client" rpc:"required"`
	Since  string `json:"since" rpc:"required"`
	Until  string `json:"until"`
}

type summaryResult struct {
	Client         string        `json:"client"`
	Since          time.Time     `json:"since"`
	Until          time.Time     `json:"until,omitzero"`
	Files          int           `json:"files"`
	FileCalls      int           `json:"file_calls"`
	Commands       int           `json:"commands"`
	CommandsFailed int           `json:"commands_failed"`
	Domains        []domainCount `json:"domains"`
	Questions      int           `json:"questions"`
	Answers        []answerCount `json:"answers"`
}

type domainCount struct {
	Domain  string `json:"domain"`
	Allowed int    `json:"allowed"`
	Denied  int    `json:"denied"`
}

type answerCount struct {
	Answer string `json:"answer"`
	Count  int    `json:"count"`
}

func (x summaryArea) summary(ctx context.Context, c *call) (any, error) {
	var p summaryParams
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	since, err := time.Parse(time.RFC3339, p.Since)
	if err != nil {
		return nil, errs.New(errs.InvalidParams, "", "since must be an RFC 3339 time such as 2026-01-02T15:04:05Z.")
	}
	var until time.Time
	if p.Until != "" {
		if until, err = time.Parse(time.RFC3339, p.Until); err != nil {
			return nil, errs.New(errs.InvalidParams, "", "until must be an RFC 3339 time such as 2026-01-02T15:04:05Z.")
		}
	}
	s, ok := x.log.(audit.Summarizer)
	if !ok {
		return nil, errs.New(errs.Unavailable, "", "This audit log cannot sum up an agent's day.")
	}
	sum, err := s.Summary(ctx, p.Client, since, until)
	if err != nil {
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not read its audit log.")
	}
	out := summaryResult{Client: sum.Client, Since: sum.Since.UTC(), Until: sum.Until, Files: sum.Files, FileCalls: sum.FileCalls,
		Commands: sum.Commands, CommandsFailed: sum.CommandsFailed, Questions: sum.Questions,
		Domains: []domainCount{}, Answers: []answerCount{}}
	for _, d := range sum.Domains {
		out.Domains = append(out.Domains, domainCount(d))
	}
	for _, a := range sum.Answers {
		out.Answers = append(out.Answers, answerCount(a))
	}
	return out, nil
}
