package server

import (
	"encoding/json"

	"corral/app/wire"
	"corral/store"
)

// Typed results and notification params of the WebSocket methods: the wire
// format written once. Fields are declared in alphabetical order of their
// JSON names so the bytes are the same as the maps they replaced
// (encoding/json sorts map keys); results_test.go pins them.

// subscribedResult answers the *.subscribe methods.
type subscribedResult struct {
	Subscribed bool `json:"subscribed"`
}

// idResult answers device.revoke.
type idResult struct {
	ID string `json:"id"`
}

// cancelledResult answers command.cancel.
type cancelledResult struct {
	Cancelled bool `json:"cancelled"`
}

// runningResult answers command.list.
type runningResult struct {
	Running []wire.Running `json:"running"`
}

// agentsResult answers agent.list: the agents and whether the owner can
// add and remove them here (Corral has a database for them).
type agentsResult struct {
	Agents  []agentInfo `json:"agents"`
	Managed bool        `json:"managed"`
}

// agentResult answers agent.update, agent.pause and agent.resume.
type agentResult struct {
	Agent agentInfo `json:"agent"`
}

// agentRemovedResult answers agent.remove: its connections were closed.
type agentRemovedResult struct {
	ConnectionsClosed int    `json:"connections_closed"`
	Name              string `json:"name"`
	Removed           bool   `json:"removed"`
}

// peopleResult answers person.list, like agentsResult.
type peopleResult struct {
	Managed bool         `json:"managed"`
	People  []personInfo `json:"people"`
}

// personResult answers person.add and person.rename.
type personResult struct {
	Person personInfo `json:"person"`
}

// personRemovedResult answers person.remove: the folder is kept, and the
// message says so in the owner's words.
type personRemovedResult struct {
	Folder  string `json:"folder"`
	ID      string `json:"id"`
	Kept    bool   `json:"kept"`
	Message string `json:"message"`
}

// loginResult answers session.login (declared in app/wire, which the
// CLI reads).
type loginResult = wire.LoginResult

// bucketsResult answers audit.stats; never null.
type bucketsResult struct {
	Buckets []wire.Bucket `json:"buckets"`
}

// pairingResult answers pairing.start: what the owner shows the new
// device (qr: rows of '1' dark and '0' light).
type pairingResult struct {
	Code        string   `json:"code"`
	ExpiresAt   string   `json:"expiresAt"`
	Fingerprint string   `json:"fingerprint"`
	QR          []string `json:"qr"`
	URL         string   `json:"url"`
}

// devicesResult answers device.list; never null.
type devicesResult struct {
	Devices []store.Device `json:"devices"`
}

// clientsResult answers client.list.
type clientsResult struct {
	Clients []clientInfo `json:"clients"`
}

// Notifications' params, written once like the results.

// commandOutput is command.output's params: request_id is the id of the
// command.run call, as the client sent it.
type commandOutput struct {
	Data      string          `json:"data"`
	RequestID json.RawMessage `json:"request_id"`
	Stream    string          `json:"stream"`
}
