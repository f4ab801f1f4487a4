package ui

import (
	"testing"
	"time"

	"corral/core/testkit/poll"
)

// TestIdlerParksUntilPosted plays Fyne's loop: a goroutine running the
// posted functions in order. A park with nothing waiting blocks the loop;
// the next post wakes it; a park queued behind a post does not block; stop
// wakes it for good.
func TestIdlerParksUntilPosted(t *testing.T) {
	p := &idler{}
	queue := make(chan func(), 8)
	ran := make(chan string, 8)
	go func() {
		for f := range queue {
			f()
		}
	}()
	post := func(name string) {
		p.posting()
		queue <- func() { p.ran(); ran <- name }
	}
	parked := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.wake != nil
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		poll.Eventually(t, 5*time.Second, cond, "%s", what)
	}

	if !p.schedule() || p.schedule() {
		t.Fatal("schedule should say yes once until the park runs")
	}
	queue <- p.park
	waitFor("the loop to park", parked)
	post("a")
	if got := <-ran; got != "a" {
		t.Fatalf("ran %q", got)
	}
	if parked() {
		t.Fatal("still parked after a post")
	}

	// A park queued behind a posted function returns at once.
	block := make(chan struct{})
	p.posting()
	queue <- func() { <-block; p.ran() }
	p.schedule()
	queue <- p.park
	post("b")
	close(block)
	if got := <-ran; got != "b" {
		t.Fatalf("ran %q", got)
	}

	p.stop()
	if p.schedule() {
		t.Fatal("schedule after stop")
	}
	queue <- p.park
	post("c")
	if got := <-ran; got != "c" {
		t.Fatalf("ran %q after stop", got)
	}
	close(queue)
}
