package server

import (
	"corral/app/connect"
	"corral/app/wire"
	"corral/core/audit"
	"corral/store"
	"encoding/json"
	"testing"
	"time"

	"corral/core/commands"
	"corral/core/policy"
)

// TestResultsKeepTheMapBytes pins each typed result to the bytes of the
// map it replaced, so a client sees the same answer, field for field.
func TestResultsKeepTheMapBytes(t *testing.T) {
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := when.Format(time.RFC3339)
	question := policy.Approval{ID: "a1", Client: "agent", Access: policy.Write, Target: "/home/u/f", RequestedAt: when, ExpiresAt: when}
	agent := agentInfo{Name: "bot", User: "ann", ActFor: []string{}, Network: "off", LastUsed: &when}
	person := personInfo{ID: "ann", Name: "Ann", Folder: "/home/ann", Agents: []string{"bot"}}
	apps := []connectApp{{App: connect.Apps()[0], Path: "/p", Exists: true, Snippet: "s"}}
	rules := []policy.Rule{{ID: "r1", Client: "bot", Target: "/home/ann"}}
	buckets := []audit.Bucket{{Start: when, Allow: 1}}
	event := audit.Event{ID: 3, Time: when, Op: "file.read"}
	running := []commands.Running{{RequestID: "r1", Client: "agent", Scope: "/home/u", Command: "ls", Started: when}}
	for _, tc := range []struct {
		name  string
		typed any
		old   map[string]any
	}{
		{"approval.list empty", pendingResult{Pending: []approvalOut{}}, map[string]any{"pending": []approvalOut{}}},
		{"approval.list one", pendingResult{Pending: []approvalOut{withChoices(question)}}, map[string]any{"pending": []approvalOut{withChoices(question)}}},
		{"approval.respond", decidedResult{ID: "a1", Decision: "allow_once"}, map[string]any{"id": "a1", "decision": "allow_once"}},
		{"subscribe", subscribedResult{Subscribed: true}, map[string]any{"subscribed": true}},
		{"rule.list", rulesResult{Rules: wire.To[[]wire.Rule]([]policy.Rule{})}, map[string]any{"rules": wire.Encode([]policy.Rule{})}},
		{"rule.list one", rulesResult{Rules: wire.To[[]wire.Rule](rules)}, map[string]any{"rules": wire.Encode(rules)}},
		{"rule.revoke", idResult{ID: "r1"}, map[string]any{"id": "r1"}},
		{"pause", pausedResult{Paused: false}, map[string]any{"paused": false}},
		{"command.cancel", cancelledResult{Cancelled: true}, map[string]any{"cancelled": true}},
		{"command.list", runningResult{Running: wire.To[[]wire.Running]([]commands.Running{})}, map[string]any{"running": wire.Encode([]commands.Running{})}},
		{"command.list nil", runningResult{Running: wire.To[[]wire.Running]([]commands.Running(nil))}, map[string]any{"running": wire.Encode([]commands.Running(nil))}},
		{"command.list one", runningResult{Running: wire.To[[]wire.Running](running)}, map[string]any{"running": wire.Encode(running)}},
		{"agent.list", agentsResult{Agents: []agentInfo{agent}, Managed: true}, map[string]any{"agents": []agentInfo{agent}, "managed": true}},
		{"agent.list none", agentsResult{Agents: []agentInfo{}}, map[string]any{"agents": []agentInfo{}, "managed": false}},
		{"agent.update", agentResult{Agent: agent}, map[string]any{"agent": agent}},
		{"agent.remove", agentRemovedResult{Name: "bot", Removed: true, ConnectionsClosed: 2}, map[string]any{"name": "bot", "removed": true, "connections_closed": 2}},
		{"person.list", peopleResult{People: []personInfo{person}, Managed: true}, map[string]any{"people": []personInfo{person}, "managed": true}},
		{"person.list none", peopleResult{People: []personInfo{}}, map[string]any{"people": []personInfo{}, "managed": false}},
		{"person.add", personResult{Person: person}, map[string]any{"person": person}},
		{"person.remove", personRemovedResult{ID: "ann", Folder: "/f", Kept: true, Message: "m <&>"}, map[string]any{"id": "ann", "folder": "/f", "kept": true, "message": "m <&>"}},
		{"agent.connect", connectResult{Apps: apps, URL: "u", Command: "c", HasKey: true}, map[string]any{"apps": apps, "url": "u", "command": "c", "has_key": true}},
		{"agent.connect no apps", connectResult{URL: "u"}, map[string]any{"apps": []connectApp(nil), "url": "u", "command": "", "has_key": false}},
		{"session.login", loginResult{URL: "u", ExpiresAt: at}, map[string]any{"url": "u", "expiresAt": at}},
		{"audit.stats", bucketsResult{Buckets: wire.To[[]wire.Bucket](buckets)}, map[string]any{"buckets": wire.Encode(buckets)}},
		{"audit.stats empty", bucketsResult{Buckets: wire.To[[]wire.Bucket]([]audit.Bucket{})}, map[string]any{"buckets": wire.Encode([]audit.Bucket{})}},
		{"pairing.start", pairingResult{URL: "u", Code: "123", ExpiresAt: at, QR: []string{"10"}, Fingerprint: "ab"},
			map[string]any{"url": "u", "code": "123", "expiresAt": at, "qr": []string{"10"}, "fingerprint": "ab"}},
		{"device.list", devicesResult{Devices: []store.Device{{ID: "d1", Name: "phone", Paired: when}}}, map[string]any{"devices": []store.Device{{ID: "d1", Name: "phone", Paired: when}}}},
		{"device.list empty", devicesResult{Devices: []store.Device{}}, map[string]any{"devices": []store.Device{}}},
		{"device.revoke", idResult{ID: "d1"}, map[string]any{"id": "d1"}},
		{"client.list", clientsResult{Clients: []clientInfo{{Name: "bot", User: "ann", ActFor: []string{}}}}, map[string]any{"clients": []clientInfo{{Name: "bot", User: "ann", ActFor: []string{}}}}},
		{"approval.requested", approvalRequested{Approval: withChoices(question)}, map[string]any{"approval": withChoices(question)}},
		{"approval.resolved", approvalResolved{ID: "a1", Decision: policy.AllowOnce, By: "cli"}, map[string]any{"id": "a1", "decision": policy.AllowOnce, "by": "cli"}},
		{"command.output", commandOutput{RequestID: json.RawMessage(`"r 1"`), Stream: "stdout", Data: "a\x00<b>"},
			map[string]any{"request_id": json.RawMessage(`"r 1"`), "stream": "stdout", "data": "a\x00<b>"}},
		{"command.output numeric id", commandOutput{RequestID: json.RawMessage(`7`), Stream: "stderr"},
			map[string]any{"request_id": json.RawMessage(`7`), "stream": "stderr", "data": ""}},
		{"audit.event", wire.AuditEvent{Event: wire.To[wire.Event](event)}, map[string]any{"event": wire.Encode(event)}},
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
