// Package slots bounds how many calls of one kind run at once, for all
// clients together and for each client alone: commands (core/commands),
// document helpers (core/documents) and in-process searches
// (core/sandbox).
//
// A call that finds no free slot waits for one, in no particular order,
// up to the wait its Slots was made with or the end of its context; then
// it is refused with an unavailable error and one of the sentences the
// Slots was given. Not guaranteed: fairness between waiters.
package slots

import (
	"context"
	"sync"
	"time"

	"corral/core/errs"
)

// Slots bounds how many calls run at once. It is safe for concurrent
// use.
type Slots struct {
	total, perClient int
	wait             time.Duration
	words            Words

	mu      sync.Mutex
	running int
	per     map[string]int
	freed   chan struct{} // closed (and replaced) whenever a slot is freed
}

// Words are the sentences of a refusal: Cancelled as it is; Mine with
// the client, the per-client limit and the wait; Full with the total
// limit and the wait.
type Words struct{ Cancelled, Mine, Full string }

// New bounds calls to total at once (0: no bound) and perClient per
// client (0: no bound); a call waits up to wait (0: 30 s) for a slot.
func New(total, perClient int, wait time.Duration, words Words) *Slots {
	if wait <= 0 {
		wait = 30 * time.Second
	}
	return &Slots{total: total, perClient: perClient, wait: wait, words: words, per: map[string]int{}, freed: make(chan struct{})}
}

// Bounds are the limits s was made with: in all, and per client.
func (s *Slots) Bounds() (total, perClient int) { return s.total, s.perClient }

// Acquire takes a slot for client, waiting as long as s allows; the
// returned release gives it back (a second call does nothing).
func (s *Slots) Acquire(ctx context.Context, client string) (release func(), err error) {
	timer := time.NewTimer(s.wait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		full := s.total > 0 && s.running >= s.total
		mine := s.perClient > 0 && s.per[client] >= s.perClient
		if !full && !mine {
			s.running++
			s.per[client]++
			s.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { s.release(client) }) }, nil
		}
		freed := s.freed
		s.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, errs.New(errs.Unavailable, "", "%s", s.words.Cancelled)
		case <-timer.C:
			if mine {
				return nil, errs.New(errs.Unavailable, "", s.words.Mine, client, s.perClient, s.wait)
			}
			return nil, errs.New(errs.Unavailable, "", s.words.Full, s.total, s.wait)
		}
	}
}

func (s *Slots) release(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if s.per[client]--; s.per[client] <= 0 {
		delete(s.per, client)
	}
	close(s.freed)
	s.freed = make(chan struct{})
}
