package sandbox

import (
	"slices"

	"corral/core/errs"
	"corral/core/paths"
	"corral/core/policy"
)

// Caller is who sends a request: a configured client or the owner.
type Caller struct {
	Client string   // client name; "owner" for the owner
	User   string   // the client's own scope: a user id, "companion" or "default"
	ActFor []string // other scopes the client may name in a context ("*": any)
	Owner  bool     // the owner may act for any scope
	// Set per agent by the owner (docs/owner.md "Agents and people"); the
	// transport fills them in from its live table on every call.
	Paused      bool // every operation is refused at once (decided_by paused)
	AskCommands bool // each command needs the owner's one-time approval, as [exec] ask does for all
	NoNetwork   bool // commands never get network
	// Level is the agent's trust level; policy decides what it refuses
	// (Level.Permits). Empty for the owner and for agents at no level.
	Level policy.Level
}

// Context is the optional request context of the seeds (docs/protocol.md
// section 4). Its fields only select a scope; they are never trusted as
// identity: the resulting scope must still be one the caller may act for.
type Context struct {
	SessionID        string
	UserID           string
	AppID            string
	ChannelName      string
	ConversationType string
}

// Scope names that are not user ids.
const (
	ScopeCompanion = "companion"
	ScopeDefault   = "default"
)

func (c *Context) empty() bool {
	return c == nil || (c.SessionID == "" && c.UserID == "" && c.AppID == "" && c.ChannelName == "" && c.ConversationType == "")
}

// ScopeFor selects the scope of a request (docs/protocol.md section 4) and
// checks that the caller may act in it.
func (s *Sandbox) ScopeFor(c Caller, ctx *Context) (string, error) {
	scope := c.User
	if c.Owner && scope == "" {
		scope = ScopeDefault
	}
	if !ctx.empty() {
		switch {
		case ctx.UserID != "" && s.HasUser(ctx.UserID):
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
	if scope == ScopeDefault && ctx != nil && ctx.UserID != "" && !s.HasUser(ctx.UserID) {
		return "", errs.New(errs.Forbidden, "", "There is no user %q in Corral's config, so this request falls to the %q folder, which this agent may not act in.", ctx.UserID, scope)
	}
	return "", errs.New(errs.Forbidden, "", "This client may not act for %q; ask the owner to add it to act_for in the config.", scope)
}

// HasUser reports whether id is a person Corral knows now.
func (s *Sandbox) HasUser(id string) bool {
	s.usersMu.RLock()
	defer s.usersMu.RUnlock()
	return s.users[id]
}

// AddUser makes id a person at once: a context naming it selects its
// folder, which is created (mode 0700, with its output folder) now. The
// id must be a safe segment other than the shared folder's name and the
// reserved scopes; the caller validates it.
func (s *Sandbox) AddUser(id string) (string, error) {
	if !paths.SafeSegment(id) || paths.ASCIIEqualFold(id, s.layout.SharedDir) || id == ScopeCompanion || id == ScopeDefault {
		return "", errs.New(errs.InvalidParams, "", "%q cannot be a person's id.", id)
	}
	dir, err := s.ScopeDir(id)
	if err != nil {
		return "", err
	}
	s.usersMu.Lock()
	s.users[id] = true
	s.usersMu.Unlock()
	return dir, nil
}

// RemoveUser forgets id as a person; the folder stays where it is (its
// host path is returned) and is never deleted.
func (s *Sandbox) RemoveUser(id string) string {
	s.usersMu.Lock()
	delete(s.users, id)
	s.usersMu.Unlock()
	if t, err := s.layout.Resolve(id, "."); err == nil {
		return t.Dir
	}
	return ""
}
