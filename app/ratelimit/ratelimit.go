// Package ratelimit bounds the rate of each agent's calls: a token
// bucket per agent (Limiter), and the one audit event that counts a
// stretch of calls refused over it (Event). app/server takes one call
// from an agent's bucket before anything of the call is done or
// recorded, whatever the transport.
//
// It guarantees: one agent's bucket never touches another's; a call is
// refused only when its agent's bucket is empty, with a sentence saying
// so; a clock set back does not stop the bucket refilling; every refusal
// is counted in exactly one summary (when the stretch ends with a call
// taken, a minute after it began, or at FlushAll), written outside the
// limiter's lock.
//
// It does not know who the owner is (the server never asks it about the
// owner's calls), keep buckets for agents removed since (a bucket is a
// few words), or write the audit log itself: the summarise function
// given to New does.
package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"corral/core/audit"
	"corral/core/errs"
)

// Each agent's calls are taken at a bounded rate: a token bucket holding
// config's audit.agent_call_burst calls (200), refilled
// audit.agent_calls_per_second (50). Every call an agent makes (over
// /ws, MCP over HTTP or `corral mcp`) takes one; a call that finds the
// bucket empty is refused before it does anything, and is not audited on
// its own: the refusals of one stretch are counted in one summary event
// (op agent.throttled). 50 calls a second is far above what an agent app
// needs (an LLM turn makes a few) and keeps one agent's share of the
// audit log near 50 events a second, where a flood wrote 2,000.
//
// refusedSummaryEvery is the longest stretch one summary counts: a flood
// that goes on is summarised once a minute, and a stretch that ends is
// summarised by the agent's next call taken, or a minute after it began.
const refusedSummaryEvery = time.Minute

// Limiter holds each agent's bucket. The owner is never limited, and
// one agent's bucket never touches another's.
type Limiter struct {
	mu      sync.Mutex
	now     func() time.Time
	burst   float64
	rate    float64 // calls a second
	buckets map[string]*callBucket
	// summarise writes the summary of a stretch of refusals.
	summarise func(ctx context.Context, r Refusals)
}

type callBucket struct {
	tokens float64
	last   time.Time // when tokens was last brought up to date
	// The stretch of refusals not yet summarised (count 0: none) and the
	// timer that summarises it if nothing else does first.
	refused Refusals
	timer   *time.Timer
}

// Refusals is one stretch of an agent's calls refused over the limit.
type Refusals struct {
	Client      string
	Count       int
	First, Last time.Time
}

// New is a limiter of rate calls a second after burst at once, on the
// clock now; summarise writes each stretch of refusals.
func New(now func() time.Time, rate float64, burst int, summarise func(context.Context, Refusals)) *Limiter {
	return &Limiter{now: now, burst: float64(burst), rate: rate, buckets: map[string]*callBucket{}, summarise: summarise}
}

// Describe says the limit in words (session.info).
func (l *Limiter) Describe() string {
	return fmt.Sprintf("each agent's calls are taken up to %d at once, then %g a second; calls beyond are refused and counted in one event (agent.throttled)", int(l.burst), l.rate)
}

// Take takes one call of client from its bucket. It returns an error
// with a sentence when the bucket is empty. When a stretch of refusals
// ends with this call, its summary is written before Take returns.
func (l *Limiter) Take(ctx context.Context, client string) error {
	l.mu.Lock()
	now := l.now()
	b := l.buckets[client]
	if b == nil {
		b = &callBucket{tokens: l.burst, last: now}
		l.buckets[client] = b
	}
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(l.burst, b.tokens+d.Seconds()*l.rate)
		b.last = now
	} else if d < 0 {
		b.last = now // the clock went back: refill from now, not from then
	}
	if b.tokens >= 1 {
		b.tokens--
		done := b.endStretch()
		l.mu.Unlock()
		if done.Count > 0 {
			l.summarise(context.WithoutCancel(ctx), done)
		}
		return nil
	}
	if b.refused.Count == 0 {
		b.refused = Refusals{Client: client, First: now}
		bg := context.WithoutCancel(ctx)
		b.timer = time.AfterFunc(refusedSummaryEvery, func() { l.flush(bg, client) })
	}
	b.refused.Count++
	b.refused.Last = now
	l.mu.Unlock()
	return errs.New(errs.Unavailable, "", "%s is making calls faster than Corral records them (more than %d at once, then %g a second); this call was not made. Try again in a moment.", client, int(l.burst), l.rate)
}

// endStretch takes the stretch of refusals in progress, if any. l.mu is
// held.
func (b *callBucket) endStretch() Refusals {
	r := b.refused
	b.refused = Refusals{}
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	return r
}

// flush summarises client's stretch of refusals now, if there is one.
func (l *Limiter) flush(ctx context.Context, client string) {
	l.mu.Lock()
	var done Refusals
	if b := l.buckets[client]; b != nil {
		done = b.endStretch()
	}
	l.mu.Unlock()
	if done.Count > 0 {
		l.summarise(ctx, done)
	}
}

// FlushAll summarises every agent's stretch of refusals now (shutdown).
func (l *Limiter) FlushAll(ctx context.Context) {
	l.mu.Lock()
	clients := make([]string, 0, len(l.buckets))
	for c := range l.buckets {
		clients = append(clients, c)
	}
	l.mu.Unlock()
	for _, c := range clients {
		l.flush(ctx, c)
	}
}

// SetClock replaces the limiter's clock (tests).
func (l *Limiter) SetClock(now func() time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now = now
}

// Event is the audit event of one stretch of refused calls (op
// agent.throttled), recorded at now.
func Event(r Refusals, now time.Time) audit.Event {
	calls := "calls"
	if r.Count == 1 {
		calls = "call"
	}
	return audit.Event{
		Time: now.UTC(), Client: r.Client, Op: "agent.throttled", Target: r.Client,
		Decision: audit.Deny,
		Detail: fmt.Sprintf("refused %s %s from %s over the rate limit between %s and %s", thousands(r.Count), calls, r.Client,
			r.First.UTC().Format(time.RFC3339), r.Last.UTC().Format(time.RFC3339)),
	}
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
