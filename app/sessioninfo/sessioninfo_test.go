package sessioninfo

import (
	"encoding/json"
	"slices"
	"testing"

	"corral/app/sessioninfo/sessioninfotest"
	"corral/app/wire"
	"corral/core/sandbox"
)

// TestSessionTellsEachCallerItsOwn: an agent hears of its own scope and
// what its commands may do, never the owner's parts; the owner hears of
// every scope and the audit log's vocabulary.
func TestSessionTellsEachCallerItsOwn(t *testing.T) {
	x := Session{Box: sessioninfotest.Box{Full: true}, SharedDir: "/share", OutputDir: "out",
		Roots:   []Root{{Path: "/photos", Access: "read"}, {Path: "/work", Access: "readwrite"}},
		Running: "at most 2", People: func() []string { return []string{"ann"} }}
	agent, err := x.Info(t.Context(), sandbox.Caller{Client: "bot", User: "ann"}, wire.InfoArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if agent.Role != "client" || agent.Scope != "ann" || agent.Scopes != nil || agent.Housekeeping != nil || agent.Operations != nil || agent.Levels != nil || agent.AuditLog != nil {
		t.Errorf("an agent was told %+v", agent)
	}
	if agent.AuditProblem != "The disk is full." || agent.Exec.Running != "at most 2" || !slices.Equal(agent.Exec.Writable, []string{"$HOME (your folder)", "$HOME/playground", "/share", "/work"}) {
		t.Errorf("exec and audit: %+v, problem %q", agent.Exec, agent.AuditProblem)
	}
	if w, _ := json.Marshal(agent.Roots); string(w) != `[{"path":"/photos","access":"read"},{"path":"/work","access":"readwrite"}]` {
		t.Errorf("roots: %s", w)
	}
	owner, err := x.Info(t.Context(), sandbox.Caller{Client: "owner", Owner: true}, wire.InfoArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if owner.Role != "owner" || !slices.Equal(owner.Scopes, []string{"ann", sandbox.ScopeCompanion, sandbox.ScopeDefault}) || len(owner.Operations) == 0 || len(owner.Levels) == 0 {
		t.Errorf("the owner was told role %q, scopes %v, %d operations, %d levels", owner.Role, owner.Scopes, len(owner.Operations), len(owner.Levels))
	}
}
