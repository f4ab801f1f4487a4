package server

import (
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
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC3339)
	for _, tc := range []struct {
		name  string
		typed any
		old   map[string]any
	}{
		{"approval.list empty", pendingResult{Pending: []policy.Approval{}}, map[string]any{"pending": []policy.Approval{}}},
		{"approval.list nil", pendingResult{}, map[string]any{"pending": []policy.Approval(nil)}},
		{"approval.respond", decidedResult{ID: "a1", Decision: "allow_once"}, map[string]any{"id": "a1", "decision": "allow_once"}},
		{"subscribe", subscribedResult{Subscribed: true}, map[string]any{"subscribed": true}},
		{"rule.list", rulesResult{Rules: []policy.Rule{}}, map[string]any{"rules": []policy.Rule{}}},
		{"rule.revoke", idResult{ID: "r1"}, map[string]any{"id": "r1"}},
		{"pause", pausedResult{Paused: false}, map[string]any{"paused": false}},
		{"command.cancel", cancelledResult{Cancelled: true}, map[string]any{"cancelled": true}},
		{"command.list", runningResult{Running: []sandbox.Running{}}, map[string]any{"running": []sandbox.Running{}}},
		{"link.create", linkResult{URL: "u", Path: "p", ExpiresAt: at}, map[string]any{"url": "u", "path": "p", "expiresAt": at}},
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
