package documents

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/sandbox"
	"corral/core/testkit/poll"
)

// countSleeps counts the processes on the host running "sleep arg".
func countSleeps(arg string) int {
	want := []byte("sleep\x00" + arg + "\x00")
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.HasSuffix(b, want) && (len(b) == len(want) || bytes.HasSuffix(b[:len(b)-len(want)], []byte("/"))) {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Eventually(t, 60*time.Second, cond, "%s", what)
}

// TestDocumentReadFairShares: one agent's many concurrent document reads
// never run more than its share of helpers at once, the rest wait; another
// agent's read still gets a helper; and cancelled calls (the client gone)
// end at once, their helpers killed.
func TestDocumentReadFairShares(t *testing.T) {
	// Each helper sleeps; the file's extension tells whose it is.
	tag := fmt.Sprintf("%d", 900000+os.Getpid()%100000)
	aliceSleep, bobSleep := tag+".1", tag+".2"
	script := fmt.Sprintf("case $1 in doc.aaa) exec sleep %s;; *) exec sleep %s;; esac", aliceSleep, bobSleep)
	w := docWorld(t, Config{Binary: "/bin/sh", Args: []string{"-c", script, "sh"}, Timeout: 5 * time.Minute,
		MaxHelpers: 4, MaxPerClient: 2, QueueWait: 5 * time.Minute})
	bob := sandbox.Caller{Client: "bob-agent", User: "bob"}
	w.put(t, "a.aaa", []byte("%PDF-1.4"))
	if _, err := w.Box.Write(context.Background(), bob, sandbox.WriteArgs{Path: "b.bbb", Content: "%PDF-1.4"}); err != nil {
		t.Fatal(err)
	}

	// Watch the helpers for the whole test.
	var maxAlice atomic.Int64
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if n := int64(countSleeps(aliceSleep)); n > maxAlice.Load() {
				maxAlice.Store(n)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	defer func() { close(stop); watch.Wait() }()

	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	const reads = 6
	doneA := make(chan error, reads)
	for range reads {
		go func() {
			_, err := w.svc.DocumentRead(ctxA, alice, DocumentReadArgs{Path: "a.aaa"})
			doneA <- err
		}()
	}
	waitFor(t, "alice's first two helpers", func() bool { return countSleeps(aliceSleep) >= 2 })

	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	doneB := make(chan error, 1)
	go func() {
		_, err := w.svc.DocumentRead(ctxB, bob, DocumentReadArgs{Path: "b.bbb"})
		doneB <- err
	}()
	waitFor(t, "bob's helper, beside alice's", func() bool { return countSleeps(bobSleep) == 1 })
	if n := maxAlice.Load(); n > 2 {
		t.Errorf("alice ran %d document helpers at once; her limit is 2", n)
	}

	// The client goes away: every call ends, every helper dies, promptly.
	cancelA()
	for range reads {
		select {
		case err := <-doneA:
			if err == nil || errs.KindOf(err) == errs.Timeout {
				t.Errorf("a cancelled read: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("a cancelled document read did not end")
		}
	}
	waitFor(t, "alice's helpers to be killed", func() bool { return countSleeps(aliceSleep) == 0 })
	if n := maxAlice.Load(); n > 2 {
		t.Errorf("alice ran %d document helpers at once; her limit is 2", n)
	}
	if countSleeps(bobSleep) != 1 {
		t.Error("bob's read ended with alice's")
	}
	cancelB()
	if err := <-doneB; err == nil {
		t.Error("bob's cancelled read succeeded")
	}
	waitFor(t, "bob's helper to be killed", func() bool { return countSleeps(bobSleep) == 0 })
}

// A read that waits past QueueWait is refused with a sentence naming the
// agent's limit.
func TestDocumentReadQueueWait(t *testing.T) {
	s := newDocSlots(Config{MaxPerClient: 1, QueueWait: time.Millisecond})
	release, err := s.Acquire(context.Background(), "alice-agent")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = s.Acquire(context.Background(), "alice-agent")
	if errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "alice-agent already reads 1 documents at once") {
		t.Errorf("over the limit: %v", err)
	}
	if total, per := newDocSlots(Config{}).Bounds(); total < 4 || total > 8 || per != 2 {
		t.Errorf("defaults: %d helpers, %d per agent", total, per)
	}
}
