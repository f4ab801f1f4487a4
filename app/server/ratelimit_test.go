package server

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corral/app/client"
	"corral/core/audit"
)

// TestAgentCallRateBounded: one agent could grow the audit log as fast
// as it could call (20,000 calls, 12 MB and 35 MB of WAL in 9 s). Now
// its calls beyond its bucket are refused before they do anything, with
// a sentence, and counted in one summary event; another agent and the
// owner are not limited by it. session.info tells the owner the log's
// size.
func TestAgentCallRateBounded(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	const callBurst = 200 // the default audit.agent_call_burst
	var mu sync.Mutex
	frozen := time.Now()
	h.srv.calls.setClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return frozen })
	alice, bob, owner := h.dial(aliceKey), h.dial(bobKey), h.dial(ownerToken)
	rpcCall[map[string]any](t, alice, "file.write", m("path", "a.txt", "content", "hello"))

	const flood = callBurst + 60
	var ok, refused atomic.Int64
	var wrong atomic.Value
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < flood; i += 8 {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := alice.Call(ctx, "file.stat", m("path", "a.txt"))
				cancel()
				var ce *client.Error
				switch {
				case err == nil:
					ok.Add(1)
				case asClientError(err, &ce) && ce.Kind() == "unavailable" && strings.Contains(ce.Message, "is making calls faster than Corral records them") && strings.Contains(ce.Message, "Try again in a moment"):
					refused.Add(1)
				default:
					wrong.Store(err.Error())
				}
			}
		})
	}
	wg.Wait()
	if w := wrong.Load(); w != nil {
		t.Fatalf("a flooding call failed otherwise: %v", w)
	}
	// The bucket held callBurst; file.write took one.
	if ok.Load() != callBurst-1 || refused.Load() != flood-callBurst+1 {
		t.Errorf("flood of %d: %d taken, %d refused; want %d and %d", flood, ok.Load(), refused.Load(), callBurst-1, flood-callBurst+1)
	}
	// Others are not limited by alice's bucket.
	rpcCall[map[string]any](t, bob, "session.info", nil)
	info := rpcCall[sessionInfo](t, owner, "session.info", nil)
	if info.AuditLog == nil || info.AuditLog.DBBytes <= 0 || info.AuditLog.Bytes != info.AuditLog.DBBytes+info.AuditLog.WALBytes || info.AuditLog.EventsLastHour < callBurst {
		t.Errorf("session.info's audit_log: %+v", info.AuditLog)
	}
	// Refused calls are not recorded one by one …
	ctx := context.Background()
	page, err := h.store.Query(ctx, audit.Filter{Client: "alice-agent", Op: "file.stat", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != callBurst-1 {
		t.Errorf("alice's file.stat events: %d, want %d (the refused ones are summarised)", len(page.Events), callBurst-1)
	}
	// … but once alice may call again, in one summary event.
	mu.Lock()
	frozen = frozen.Add(time.Second)
	mu.Unlock()
	rpcCall[map[string]any](t, alice, "file.stat", m("path", "a.txt"))
	page, err = h.store.Query(ctx, audit.Filter{Op: "agent.throttled", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 {
		t.Fatalf("summary events: %d, want 1: %+v", len(page.Events), page.Events)
	}
	ev := page.Events[0]
	if ev.Client != "alice-agent" || ev.Decision != audit.Deny || !strings.Contains(ev.Detail, "refused 61 calls from alice-agent over the rate limit between ") {
		t.Errorf("summary event: %+v", ev)
	}
}

func asClientError(err error, ce **client.Error) bool {
	e, ok := err.(*client.Error)
	*ce = e
	return ok
}

// TestRefusalsSummarisedAtShutdown: refusals not yet summarised when
// Corral stops are written before the log closes.
func TestRefusalsSummarisedAtShutdown(t *testing.T) {
	t.Parallel()
	h := start(t, "[audit]\nagent_call_burst = 1\nagent_calls_per_second = 0.001\n")
	alice := h.dial(aliceKey)
	rpcCall[map[string]any](t, alice, "session.info", nil)
	if ce := callErr(t, alice, "session.info", nil); ce.Kind() != "unavailable" {
		t.Fatalf("second call: %v", ce)
	}
	h.cancel() // Serve returns: the server shuts down
	if err := <-h.done; err != nil {
		t.Fatal(err)
	}
	h.done <- nil // for h.stop
	page, err := h.store.Query(context.Background(), audit.Filter{Op: "agent.throttled", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 || !strings.Contains(page.Events[0].Detail, "refused 1 call from alice-agent") {
		t.Errorf("summary at shutdown: %+v", page.Events)
	}
}
