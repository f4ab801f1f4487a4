package sessioninfo

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"corral/app/wire"
	"corral/core/errs"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/versions"
)

// fakeSessionBox is a Box with commands available, no approvals,
// no versions and a full disk.
type fakeSessionBox struct{ full bool }

func (fakeSessionBox) ScopeFor(c sandbox.Caller, ctx *sandbox.Context) (string, error) {
	if c.Owner {
		return sandbox.ScopeDefault, nil
	}
	return c.User, nil
}
func (fakeSessionBox) Policy() *policy.Policy { return nil }
func (b fakeSessionBox) Writable() error {
	if b.full {
		return errs.New(errs.Unavailable, "", "The disk is full.")
	}
	return nil
}
func (fakeSessionBox) ExecInfo() (bool, string, string)                   { return true, "bubblewrap", "" }
func (fakeSessionBox) NetworkInfo() (bool, string)                        { return true, "" }
func (fakeSessionBox) MemoryInfo() string                                 { return "512 MiB" }
func (fakeSessionBox) Versions() *versions.Store                          { return nil }
func (fakeSessionBox) CommandVersions(ctx context.Context) (bool, string) { return false, "" }
func (fakeSessionBox) Recovered() *sandbox.Recovery                       { return nil }

// TestSessionTellsEachCallerItsOwn: an agent hears of its own scope and
// what its commands may do, never the owner's parts; the owner hears of
// every scope and the audit log's vocabulary.
func TestSessionTellsEachCallerItsOwn(t *testing.T) {
	x := Session{Box: fakeSessionBox{full: true}, SharedDir: "/share", OutputDir: "out",
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
