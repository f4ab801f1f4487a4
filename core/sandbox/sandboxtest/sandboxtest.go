// Package sandboxtest is test support for the packages built on the
// sandbox's operation skeleton (core/applypatch, core/documents): a
// sandbox over a temporary folder with a strict policy, and an approvals
// surface that answers every question the same way. It is imported by
// tests only.
package sandboxtest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"corral/core/paths"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/testkit/auditmem"
)

// World is a sandbox over a temporary folder: alice's and bob's scopes
// under Dir/base, a folder outside everything (Outside), a read-only and
// a readwrite root, and Corral's own data folder (Private), each holding
// f.txt ("content of " and the folder's name).
type World struct {
	Dir, Outside, RoRoot, RwRoot, Private string
	Box                                   *sandbox.Sandbox
	Sink                                  *auditmem.Log
	Pol                                   *policy.Policy // strict; nobody answers unless a test subscribes
}

// Alice is an agent acting for alice.
var Alice = sandbox.Caller{Client: "alice-agent", User: "alice"}

// New makes a World, the sandbox's Config changed by set first (nil:
// left alone).
func New(t testing.TB, set func(w *World, cfg *sandbox.Config)) *World {
	t.Helper()
	w := &World{Dir: t.TempDir(), Sink: &auditmem.Log{}}
	w.Outside = filepath.Join(w.Dir, "outside")
	w.RoRoot = filepath.Join(w.Dir, "ro")
	w.RwRoot = filepath.Join(w.Dir, "rw")
	w.Private = filepath.Join(w.Dir, "corral-data")
	for _, d := range []string{w.Outside, w.RoRoot, w.RwRoot, w.Private} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "f.txt"), []byte("content of "+filepath.Base(d)), 0o644)
	}
	pol, err := policy.New(context.Background(), policy.Config{Rules: &memRules{}, Audit: w.Sink, Timeout: time.Minute, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Pol = pol
	layout := paths.Layout{Base: filepath.Join(w.Dir, "base"), SharedDir: "share", OutputDir: "output", Home: w.Dir,
		Roots: []paths.Root{{Path: w.RoRoot, Access: paths.Read}, {Path: w.RwRoot, Access: paths.ReadWrite}}}
	cfg := sandbox.Config{Layout: layout, Users: []string{"alice", "bob"}, Audit: w.Sink, Policy: pol, Private: []string{w.Private}}
	if set != nil {
		set(w, &cfg)
	}
	w.Box, err = sandbox.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Box.Close() })
	return w
}

type memRules struct {
	mu    sync.Mutex
	rules []policy.Rule
}

func (m *memRules) SaveRule(_ context.Context, r policy.Rule) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules = append(m.rules, r)
	return nil
}
func (m *memRules) DeleteRule(context.Context, string) (bool, error) { return true, nil }
func (m *memRules) LoadRules(context.Context) ([]policy.Rule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]policy.Rule(nil), m.rules...), nil
}

// Answerer is an approvals surface that answers every question with D;
// subscribe it with P.Subscribe.
type Answerer struct {
	P     *policy.Policy
	D     policy.Decision
	mu    sync.Mutex
	asked []policy.Approval
}

// ApprovalRequested answers ap with D.
func (a *Answerer) ApprovalRequested(ap policy.Approval) {
	a.mu.Lock()
	a.asked = append(a.asked, ap)
	a.mu.Unlock()
	go a.P.Respond(context.Background(), policy.Answer{ID: ap.ID, Decision: a.D, By: "test"})
}

// ApprovalResolved does nothing.
func (a *Answerer) ApprovalResolved(string, policy.Decision, string) {}

// Asked is the questions answered so far.
func (a *Answerer) Asked() []policy.Approval {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]policy.Approval(nil), a.asked...)
}
