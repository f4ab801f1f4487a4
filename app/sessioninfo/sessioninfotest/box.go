// Package sessioninfotest is, for tests, a sessioninfo.Box that needs no
// sandbox: commands available under bubblewrap with 512 MiB, no
// approvals, no versions, and a disk that is full when asked.
package sessioninfotest

import (
	"context"

	"corral/core/errs"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/versions"
)

// Box is the stand-in; Full makes Writable refuse as a full disk does.
type Box struct{ Full bool }

// ScopeFor is the default scope for the owner and the caller's user else.
func (Box) ScopeFor(c sandbox.Caller, ctx *sandbox.Context) (string, error) {
	if c.Owner {
		return sandbox.ScopeDefault, nil
	}
	return c.User, nil
}

func (Box) Policy() *policy.Policy { return nil }

func (b Box) Writable() error {
	if b.Full {
		return errs.New(errs.Unavailable, "", "The disk is full.")
	}
	return nil
}

func (Box) ExecInfo() (bool, string, string)                   { return true, "bubblewrap", "" }
func (Box) NetworkInfo() (bool, string)                        { return true, "" }
func (Box) MemoryInfo() string                                 { return "512 MiB" }
func (Box) Versions() *versions.Store                          { return nil }
func (Box) CommandVersions(ctx context.Context) (bool, string) { return false, "" }
func (Box) Recovered() *sandbox.Recovery                       { return nil }
