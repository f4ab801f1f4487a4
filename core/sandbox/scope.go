package sandbox

import (
	"slices"

	"corral/core/errs"
	"corral/core/paths"
)

// Caller is who sends a request: a configured client or the owner.
type Caller struct {
	Client string   // client name; "owner" for the owner
	User   string   // the client's own scope: a user id, "companion" or "default"
	ActFor []string // other scopes the client may name in a context ("*": any)
	Owner  bool     // the owner may act for any scope
}

// Context is the optional request context of the seeds (PROTOCOL.md
// section 4). Its fields only select a scope; they are never trusted as
// identity: the resulting scope must still be one the caller may act for.
type Context struct {
	SessionID        string `json:"session_id,omitempty"`
	UserID           string `json:"user_id,omitempty"`
	AppID            string `json:"app_id,omitempty"`
	ChannelName      string `json:"channel_name,omitempty"`
	ConversationType string `json:"conversation_type,omitempty"`
}

// Scope names that are not user ids.
const (
	ScopeCompanion = "companion"
	ScopeDefault   = "default"
)

func (c *Context) empty() bool {
	return c == nil || (c.SessionID == "" && c.UserID == "" && c.AppID == "" && c.ChannelName == "" && c.ConversationType == "")
}

// ScopeFor selects the scope of a request (PROTOCOL.md section 4) and
// checks that the caller may act in it.
func (s *Sandbox) ScopeFor(c Caller, ctx *Context) (string, error) {
	scope := c.User
	if c.Owner && scope == "" {
		scope = ScopeDefault
	}
	if !ctx.empty() {
		switch {
		case ctx.UserID != "" && s.users[ctx.UserID]:
			scope = ctx.UserID
		case slices.ContainsFunc([]string{ctx.SessionID, ctx.UserID, ctx.AppID, ctx.ChannelName, ctx.ConversationType},
			func(v string) bool { return paths.ASCIIEqualFold(v, ScopeCompanion) }):
			scope = ScopeCompanion
		default:
			scope = ScopeDefault
		}
	}
	if c.Owner || scope == c.User || slices.Contains(c.ActFor, "*") || slices.Contains(c.ActFor, scope) {
		return scope, nil
	}
	if scope == ScopeDefault && ctx != nil && ctx.UserID != "" && !s.users[ctx.UserID] {
		return "", errs.New(errs.Forbidden, "", "There is no user %q in Corral's config, so this request falls to the %q scope, which this client may not act for.", ctx.UserID, scope)
	}
	return "", errs.New(errs.Forbidden, "", "This client may not act for %q; ask the owner to add it to act_for in the config.", scope)
}
