package server

import (
	"corral/app/wire"
	"encoding/json"
	"testing"
	"time"

	"corral/core/policy"
	"corral/core/sandbox"
)

// TestResultsKeepTheMapBytes pins each typed result to the bytes of the
// map it replaced, so a client sees the same answer, field for field.
func TestResultsKeepTheMapBytes(t *testing.T) {
	content, view, empty := "# Report", "https://x/l?s=1&view=1", ""
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := when.Format(time.RFC3339)
	question := policy.Approval{ID: "a1", Client: "agent", Access: policy.Write, Target: "/home/u/f", RequestedAt: when, ExpiresAt: when}
	running := []sandbox.Running{{RequestID: "r1", Client: "agent", Scope: "/home/u", Command: "ls", Started: when}}
	for _, tc := range []struct {
		name  string
		typed any
		old   map[string]any
	}{
		{"approval.list empty", pendingResult{Pending: []approvalOut{}}, map[string]any{"pending": []approvalOut{}}},
		{"approval.list one", pendingResult{Pending: []approvalOut{withChoices(question)}}, map[string]any{"pending": []approvalOut{withChoices(question)}}},
		{"approval.respond", decidedResult{ID: "a1", Decision: "allow_once"}, map[string]any{"id": "a1", "decision": "allow_once"}},
		{"subscribe", subscribedResult{Subscribed: true}, map[string]any{"subscribed": true}},
		{"rule.list", rulesResult{Rules: []policy.Rule{}}, map[string]any{"rules": []policy.Rule{}}},
		{"rule.revoke", idResult{ID: "r1"}, map[string]any{"id": "r1"}},
		{"pause", pausedResult{Paused: false}, map[string]any{"paused": false}},
		{"command.cancel", cancelledResult{Cancelled: true}, map[string]any{"cancelled": true}},
		{"command.list", runningResult{Running: wire.To[[]wire.Running]([]sandbox.Running{})}, map[string]any{"running": wire.Encode([]sandbox.Running{})}},
		{"command.list nil", runningResult{Running: wire.To[[]wire.Running]([]sandbox.Running(nil))}, map[string]any{"running": wire.Encode([]sandbox.Running(nil))}},
		{"command.list one", runningResult{Running: wire.To[[]wire.Running](running)}, map[string]any{"running": wire.Encode(running)}},
		{"link.create agent", linkResult{URL: "u", Path: "p", ExpiresAt: at}, map[string]any{"url": "u", "path": "p", "expiresAt": at}},
		{"link.create owner local", linkResult{URL: "u", Path: "p", ExpiresAt: at, ownerReach: &ownerReach{LocalOnly: true}},
			map[string]any{"url": "u", "path": "p", "expiresAt": at, "local_only": true}},
		{"link.create owner lan", linkResult{URL: "u", Path: "p", ExpiresAt: at, ownerReach: &ownerReach{LanURL: "https://l"}},
			map[string]any{"url": "u", "path": "p", "expiresAt": at, "lan_url": "https://l", "local_only": false}},
		{"result.save html", savedResult{URL: "u", Path: "p", ExpiresAt: at}, map[string]any{"path": "p", "url": "u", "expiresAt": at}},
		{"result.save markdown", savedResult{URL: "u", Path: "p", ExpiresAt: at, Content: &content, ViewURL: &view},
			map[string]any{"path": "p", "url": "u", "expiresAt": at, "content": content, "view_url": view}},
		{"result.save empty markdown", savedResult{URL: "u", Path: "p", ExpiresAt: at, Content: &empty, ViewURL: &view},
			map[string]any{"path": "p", "url": "u", "expiresAt": at, "content": "", "view_url": view}},
		{"links.rotate", rotatedResult{Rotated: true}, map[string]any{"rotated": true}},
	} {
		got, err := json.Marshal(tc.typed)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(tc.old)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got  %s\n want %s", tc.name, got, want)
		}
	}
}
