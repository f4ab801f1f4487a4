package server

import (
	"context"
	"time"

	"corral/app/ratelimit"
)

// Each agent's calls are taken at a bounded rate (app/ratelimit): config's
// audit.agent_call_burst at once, then audit.agent_calls_per_second;
// the refusals of one stretch are one agent.throttled event.

type refusals = ratelimit.Refusals

// callLimiter is the server's limiter (Server.calls): run takes each
// agent call from it, session.info describes it, Shutdown flushes it.
type callLimiter struct{ l *ratelimit.Limiter }

func newCallLimiter(now func() time.Time, rate float64, burst int, summarise func(context.Context, refusals)) *callLimiter {
	return &callLimiter{ratelimit.New(now, rate, burst, summarise)}
}

func (c *callLimiter) take(ctx context.Context, client string) error { return c.l.Take(ctx, client) }
func (c *callLimiter) describe() string                              { return c.l.Describe() }
func (c *callLimiter) flushAll(ctx context.Context)                  { c.l.FlushAll(ctx) }
func (c *callLimiter) setClock(now func() time.Time)                 { c.l.SetClock(now) }

// recordRefusals writes one stretch of refused calls as one audit event.
func (s *Server) recordRefusals(ctx context.Context, r refusals) {
	if _, err := s.audit.Record(ctx, ratelimit.Event(r, s.now())); err != nil {
		s.log.Error("audit record failed", "op", "agent.throttled", "client", r.Client, "err", err)
	}
}
