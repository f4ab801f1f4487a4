package policy

import (
	"fmt"
	"strings"
	"time"

	"corral/core/errs"
	"corral/core/paths"
)

// Access is what a request wants to do with its target.
type Access string

const (
	Read    Access = "read"
	Write   Access = "write"
	Delete  Access = "delete"
	Execute Access = "execute"
	Network Access = "network"
)

func (a Access) valid() bool {
	switch a {
	case Read, Write, Delete, Execute, Network:
		return true
	}
	return false
}

// verb is the access in plain words.
func (a Access) verb() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case Delete:
		return "delete"
	case Execute:
		return "run"
	case Network:
		return "use the network for"
	}
	return string(a)
}

// Decision is the owner's answer to an approval.
type Decision string

const (
	AllowOnce    Decision = "allow_once"
	AllowSession Decision = "allow_session"
	AllowAlways  Decision = "allow_always"
	DenyOnce     Decision = "deny_once"
	DenyAlways   Decision = "deny_always"
)

// Allows reports whether the decision lets the request through.
func (d Decision) Allows() bool { return d == AllowOnce || d == AllowSession || d == AllowAlways }

func (d Decision) valid() bool {
	switch d {
	case AllowOnce, AllowSession, AllowAlways, DenyOnce, DenyAlways:
		return true
	}
	return false
}

// Effect is what a rule does.
type Effect string

const (
	EffectAllow Effect = "allow"
	EffectDeny  Effect = "deny"
)

// Match is how a rule's target is compared.
type Match string

const (
	Exact  Match = "exact"
	Prefix Match = "prefix" // the folder and everything below it, by component
)

// Lifetime is how long a rule lasts.
type Lifetime string

const (
	Session Lifetime = "session" // until the daemon stops
	Always  Lifetime = "always"  // persisted
)

// Rule is a remembered answer (docs/protocol.md section 6, rule.list).
type Rule struct {
	ID          string
	Client      string // "*" for any client
	User        string // the scope the rule applies in
	Access      Access
	Target      string
	Match       Match
	Decision    Effect
	Lifetime    Lifetime
	Created     time.Time
	CreatedBy   string
	Expires     *time.Time
	Description string
	// Note is the owner's own words on a rule written by hand (why it is
	// there); shown with it, never decides anything.
	Note string
}

// AnyClient in Rule.Client matches every client; in Rule.User (written
// by hand only) it matches every folder.
const AnyClient = "*"

// CheckTarget validates a rule or approval target: an absolute, clean
// host path for file accesses (no "..", no trailing slash but "/"), or a
// non-empty command line for execute and network.
func CheckTarget(a Access, target string) error {
	if target == "" || len(target) > 8192 || strings.ContainsRune(target, 0) {
		return errs.New(errs.InvalidParams, "", "A rule needs a target of 1 to 8192 bytes.")
	}
	if a == Execute || a == Network {
		return nil
	}
	if !paths.IsCleanAbs(target) {
		return errs.New(errs.InvalidParams, "", "A rule's target must be an absolute, clean path without \"..\": %q is not.", target)
	}
	return nil
}

// covers reports whether the rule applies to the request at now.
func (r *Rule) covers(client, scope string, a Access, target string, now time.Time) bool {
	if r.Expires != nil && !now.Before(*r.Expires) {
		return false
	}
	if (r.Client != AnyClient && r.Client != client) || (r.User != scope && r.User != AnyClient) || r.Access != a {
		return false
	}
	if a == Execute && r.Match == Prefix {
		return commandCovers(r.Target, target)
	}
	if r.Match == Exact {
		return r.Target == target || (a == Network && wildcardCovers(r.Target, target))
	}
	return paths.Within(target, r.Target)
}

// wildcardCovers reports whether a network rule target such as
// "*.example.com" covers domain: any name below example.com, not
// example.com itself.
func wildcardCovers(pattern, domain string) bool {
	suffix, ok := strings.CutPrefix(pattern, "*")
	return ok && strings.HasPrefix(suffix, ".") && len(domain) > len(suffix) && strings.HasSuffix(domain, suffix)
}

// specificity orders matching allow rules: exact beats prefix, a longer
// prefix beats a shorter one, a named client beats any client.
func (r *Rule) specificity() int {
	s := len(r.Target) * 4
	if r.Match == Exact {
		s += 1 << 20
	}
	if r.Client != AnyClient {
		s += 2
	}
	return s
}

// describe is the rule in plain words, shown as is by every surface.
func (r *Rule) describe() string {
	who := r.Client
	if who == AnyClient {
		who = "any agent"
	}
	what := r.Target
	if r.Match == Prefix {
		what = "anywhere in " + r.Target
	}
	if r.Access == Execute {
		what = "the command " + r.Target
		if r.Match == Prefix {
			what = "commands starting with the words " + r.Target
		}
	}
	verb := "Allow"
	if r.Decision == EffectDeny {
		verb = "Deny"
	}
	when := "always"
	if r.Lifetime == Session {
		when = "until Corral restarts"
	}
	if r.Expires != nil {
		when = "until " + r.Expires.Local().Format("2 Jan 2006 15:04")
	}
	folder := r.User
	if folder == AnyClient {
		folder = "any folder"
	}
	return fmt.Sprintf("%s %s to %s %s (for %s), %s", verb, who, r.Access.verb(), what, folder, when)
}

// decide returns the effect of the rules on a request: deny beats allow,
// and among allows the most specific wins. ok is false when no rule
// matches.
func decide(rules []Rule, client, scope string, a Access, target string, now time.Time) (Rule, bool) {
	var best Rule
	found := false
	for i := range rules {
		r := &rules[i]
		if !r.covers(client, scope, a, target, now) {
			continue
		}
		if r.Decision == EffectDeny {
			return *r, true
		}
		if !found || r.specificity() > best.specificity() {
			best, found = *r, true
		}
	}
	return best, found
}
