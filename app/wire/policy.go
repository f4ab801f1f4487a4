package wire

import (
	"encoding/json"
	"time"

	"corral/core/policy"
)

// Approval is policy.Approval on the wire.
type Approval struct {
	ID          string        `json:"id"`
	Client      string        `json:"client"`
	User        string        `json:"user"`
	Access      policy.Access `json:"access"`
	Target      string        `json:"target"`
	Reason      string        `json:"reason"`
	OneTimeOnly bool          `json:"one_time_only"`
	RequestedAt time.Time     `json:"requested_at"`
	ExpiresAt   time.Time     `json:"expires_at"`
	Description string        `json:"description"`
	Folder      string        `json:"folder,omitempty"` // what an answer widened to "folder" covers; empty if it cannot be widened
	// Domain is set on a network question about one domain (Target is the
	// domain too): a command wants to connect there. Command is that
	// command, as the owner reads it.
	Domain  string `json:"domain,omitempty"`
	Command string `json:"command,omitempty"`
	// Domains, on a command's question asked before it starts, lists the
	// domains it declared that no rule covers (Target and Domain are them
	// joined by ", "): one answer decides them all; an answer that makes
	// rules makes one per domain.
	Domains []string `json:"domains,omitempty"`
	// Sensitive, when set, says why the target holds secrets (SSH keys, a
	// browser profile …): surfaces mark the question, make Deny the
	// default and offer no folder-wide answer.
	Sensitive string `json:"sensitive,omitempty"`
	// Asked is the path the agent named when it leads elsewhere (through
	// a symbolic link): "asked for Asked, which is Target".
	Asked string `json:"asked,omitempty"`
	// Preview shows what a write would do: its size, whether it replaces
	// a file, and its first lines.
	Preview string `json:"preview,omitempty"`
	// Level is the asking agent's trust level (policy.Levels) when it
	// asked; absent when unknown.
	Level policy.Level `json:"level,omitempty"`
}

// Choice is policy.Choice on the wire.
type Choice struct {
	Decision policy.Decision `json:"decision"`
	Label    string          `json:"label"`   // the button
	Explain  string          `json:"explain"` // one short sentence under or beside it
	Said     string          `json:"said"`    // "the agent was …" once answered
	Allows   bool            `json:"allows"`  // allow row (true) or deny row (false)
	// Remembers is set on the answers that make a rule; an approval that
	// can only be answered once does not offer them.
	Remembers bool `json:"remembers"`
}

// Rule is policy.Rule on the wire.
type Rule struct {
	ID          string          `json:"id"`
	Client      string          `json:"client"` // "*" for any client
	User        string          `json:"user"`   // the scope the rule applies in
	Access      policy.Access   `json:"access"`
	Target      string          `json:"target"`
	Match       policy.Match    `json:"match"`
	Decision    policy.Effect   `json:"decision"`
	Lifetime    policy.Lifetime `json:"lifetime"`
	Created     time.Time       `json:"created"`
	CreatedBy   string          `json:"created_by"`
	Expires     *time.Time      `json:"expires,omitempty"`
	Description string          `json:"description"`
	Note        string          `json:"note,omitempty"` // the owner's own words on a rule written by hand
}

// PendingApproval is an approval as the owner's surfaces receive it
// (approval.list, approval.requested): with the answers it accepts, in
// the words of policy's one table, and the one to put first (Deny for
// secrets), so no surface keeps its own copy.
type PendingApproval struct {
	Approval
	Choices         []Choice        `json:"choices"`
	DefaultDecision policy.Decision `json:"default_decision"`
	// LevelLabel names Level as the owner reads it ("Trusted in its
	// folder"): the phone, which cannot list agents, shows it as is.
	LevelLabel string `json:"level_label,omitempty"`
}

// Pending answers approval.list: the questions waiting, with their
// choices (app/answers builds it, the CLI reads it).
type Pending struct {
	Pending []PendingApproval `json:"pending"`
}

// RespondArgs are approval.respond's params.
type RespondArgs struct {
	ID        string          `json:"id" rpc:"required"`
	Decision  string          `json:"decision" rpc:"required"`
	Widen     string          `json:"widen,omitempty"`
	ExpiresIn json.RawMessage `json:"expires_in,omitempty"` // seconds or a duration string
	Reason    string          `json:"reason,omitempty"`     // the owner's sentence with a denial
}
