package server

import (
	"context"
	"encoding/json"
	"testing"
)

// $/cancelRequest withdraws the question a call waits on: a read waiting
// for the owner's answer is withdrawn (the owner sees it resolved) and the
// connection goes on answering. The transport's side of it is
// app/wsrpc's TestCancelReachesACallInFlight.
func TestCancelWithdrawsTheQuestion(t *testing.T) {
	t.Parallel()
	h, outside := startWithOutsideFile(t)
	alice := h.dial(aliceKey)
	own := h.owner(t)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := alice.Call(ctx, "file.read", m("path", outside))
		done <- err
	}()
	a := own.requested()
	cancel() // the client sends $/cancelRequest for the call's id
	var res struct{ ID, Decision string }
	json.Unmarshal(own.next("approval.resolved"), &res)
	if res.ID != a.ID || res.Decision == "" {
		t.Fatalf("approval.resolved after the cancel: %+v, want %s withdrawn", res, a.ID)
	}
	<-done
	if _, err := alice.Call(context.Background(), "file.write", m("path", "after.txt", "content", "x")); err != nil {
		t.Fatalf("a call after the cancel: %v", err)
	}
}
