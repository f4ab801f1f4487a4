package server

import (
	"corral/app/wire"
	"corral/core/policy"
)

// Typed results of the approvals, commands and links methods: the wire
// format written once. Fields are declared in alphabetical order of their
// JSON names so the bytes are the same as the maps they replaced
// (encoding/json sorts map keys); results_test.go pins them.

// pendingResult answers approval.list.
type pendingResult struct {
	Pending []approvalOut `json:"pending"`
}

// decidedResult answers approval.respond.
type decidedResult struct {
	Decision string `json:"decision"`
	ID       string `json:"id"`
}

// subscribedResult answers the *.subscribe methods.
type subscribedResult struct {
	Subscribed bool `json:"subscribed"`
}

// rulesResult answers rule.list.
type rulesResult struct {
	Rules []policy.Rule `json:"rules"`
}

// idResult answers rule.revoke.
type idResult struct {
	ID string `json:"id"`
}

// pausedResult answers pause and resume.
type pausedResult struct {
	Paused bool `json:"paused"`
}

// cancelledResult answers command.cancel.
type cancelledResult struct {
	Cancelled bool `json:"cancelled"`
}

// runningResult answers command.list.
type runningResult struct {
	Running []wire.Running `json:"running"`
}

// linkResult answers link.create; the owner also learns the link's reach.
type linkResult struct {
	ExpiresAt string `json:"expiresAt"`
	*ownerReach
	Path string `json:"path"`
	URL  string `json:"url"`
}

// ownerReach is where the owner can open a new link (see linkReach):
// lan_url only while the LAN listener runs and no public_url is set.
type ownerReach struct {
	LanURL    string `json:"lan_url,omitempty"`
	LocalOnly bool   `json:"local_only"`
}

// savedResult answers result.save. Content and view_url are present
// (content even when empty) only for a markdown report.
type savedResult struct {
	Content   *string `json:"content,omitempty"`
	ExpiresAt string  `json:"expiresAt"`
	Path      string  `json:"path"`
	URL       string  `json:"url"`
	ViewURL   *string `json:"view_url,omitempty"`
}

// rotatedResult answers links.rotate.
type rotatedResult struct {
	Rotated bool `json:"rotated"`
}
