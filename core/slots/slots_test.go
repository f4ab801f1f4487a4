package slots

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"corral/core/errs"
)

// words are the commands' sentences (core/commands).
var words = Words{
	Cancelled: "The command was cancelled while it waited for a free slot.",
	Mine:      "%s already runs %d commands at once, its limit; this one waited %s for one of them to finish and did not start. Try again when one has finished.",
	Full:      "Corral already runs %d commands at once, its limit for all agents together; this one waited %s and did not start. Try again shortly.",
}

func TestSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(2, 1, 30*time.Second, words)
		ctx := context.Background()
		relA, err := s.Acquire(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Acquire(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		// a's second command waits for a's first; c waits for anyone.
		got := make(chan error, 2)
		go func() { _, err := s.Acquire(ctx, "a"); got <- err }()
		go func() { _, err := s.Acquire(ctx, "c"); got <- err }()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("a command started past the limits: %v", err)
		default:
		}
		relA()
		relA() // releasing twice frees one slot only
		synctest.Wait()
		first := <-got
		if first != nil {
			t.Fatalf("a waiter did not get the freed slot: %v", first)
		}
		time.Sleep(31 * time.Second)
		err = <-got
		if errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "its limit for all agents together") {
			t.Errorf("the last waiter: %v", err)
		}
		cctx, cancel := context.WithCancel(ctx)
		go func() { time.Sleep(time.Second); cancel() }()
		if _, err := s.Acquire(cctx, "b"); errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "cancelled") {
			t.Errorf("cancelled waiter: %v", err)
		}
	})
}

func TestSlotsPerClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(0, 2, 5*time.Second, words)
		for range 2 {
			if _, err := s.Acquire(context.Background(), "a"); err != nil {
				t.Fatal(err)
			}
		}
		_, err := s.Acquire(context.Background(), "a")
		if errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "a already runs 2 commands at once") {
			t.Errorf("over the per-agent limit: %v", err)
		}
		if _, err := s.Acquire(context.Background(), "b"); err != nil {
			t.Errorf("another agent: %v", err)
		}
	})
}
