package sandbox

import (
	"context"
	"runtime"
	"sync"
	"time"

	"corral/core/errs"
)

// slots bounds how many commands (or document readers) run at once, for
// all agents together and for each agent alone. A call that finds no free
// slot waits for one, in no particular order, up to wait or the end of its
// context; then it is refused with a sentence.
type slots struct {
	total, perClient int
	wait             time.Duration
	words            slotWords

	mu      sync.Mutex
	running int
	per     map[string]int
	freed   chan struct{} // closed (and replaced) whenever a slot is freed
}

// slotWords are the sentences of a refusal: cancelled as it is; mine
// with the client, the per-client limit and the wait; full with the
// total limit and the wait.
type slotWords struct{ cancelled, mine, full string }

var commandWords = slotWords{
	cancelled: "The command was cancelled while it waited for a free slot.",
	mine:      "%s already runs %d commands at once, its limit; this one waited %s for one of them to finish and did not start. Try again when one has finished.",
	full:      "Corral already runs %d commands at once, its limit for all agents together; this one waited %s and did not start. Try again shortly.",
}

// newSlots bounds commands as ec says.
func newSlots(ec ExecConfig) *slots {
	return makeSlots(ec.MaxRunning, ec.MaxPerClient, ec.QueueWait, commandWords)
}

// makeSlots bounds calls to total at once (0: no bound) and perClient per
// client (0: no bound); a call waits up to wait (0: 30 s) for a slot.
func makeSlots(total, perClient int, wait time.Duration, words slotWords) *slots {
	if wait <= 0 {
		wait = 30 * time.Second
	}
	return &slots{total: total, perClient: perClient, wait: wait, words: words, per: map[string]int{}, freed: make(chan struct{})}
}

// acquire takes a slot for client, waiting as long as s.wait allows; the
// returned release gives it back.
func (s *slots) acquire(ctx context.Context, client string) (release func(), err error) {
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
			return nil, errs.New(errs.Unavailable, "", "%s", s.words.cancelled)
		case <-timer.C:
			if mine {
				return nil, errs.New(errs.Unavailable, "", s.words.mine, client, s.perClient, s.wait)
			}
			return nil, errs.New(errs.Unavailable, "", s.words.full, s.total, s.wait)
		}
	}
}

func (s *slots) release(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if s.per[client]--; s.per[client] <= 0 {
		delete(s.per, client)
	}
	close(s.freed)
	s.freed = make(chan struct{})
}

// Hunk searches (file.apply_patch), greps (file.grep) and finds
// (file.find) run in Corral's own process: a costly one takes a core
// until it ends (a grep reads its whole tree, a find walks it). One agent
// runs one such search at a time (its others wait, cancellable), so one
// agent's searches never take more than a core from the others and the
// owner; all agents together run at most two per core (at least four),
// so two agents holding theirs still leave room for the others'.
const (
	searchPerClient = 1
	searchQueueWait = 2 * time.Minute
)

var searchWords = slotWords{
	cancelled: "The call was cancelled while it waited for its turn to search; nothing was changed.",
	mine:      "%s already runs %d search (a patch being placed, a grep or a find) at once, its limit; this one waited %s for it to finish and did not run. Nothing was changed; try again when it has finished.",
	full:      "Corral already runs %d searches (patches being placed, greps, finds) at once, its limit for all agents together; this one waited %s and did not run. Nothing was changed; try again shortly.",
}

func newSearchSlots() *slots {
	return makeSlots(max(4, 2*runtime.NumCPU()), searchPerClient, searchQueueWait, searchWords)
}
