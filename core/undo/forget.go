package undo

import (
	"context"
	"fmt"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/sandbox"
	"corral/core/versions"
)

// ForgetArgs are versions.forget's parameters.
type ForgetArgs struct {
	Client string    // the agent ("owner": the owner's own versions)
	Before time.Time // only versions stored before then; zero: all
}

// ForgetResult answers versions.forget.
type ForgetResult struct {
	Client   string
	Versions int   // versions let go
	Bytes    int64 // of the agent's share
}

// ForgetVersions answers versions.forget: the owner lets go of the
// versions kept for one agent's changes (those stored before Before, when
// given), so that its share has room again. The changes they would undo
// can no longer be undone; a version another agent also holds stays.
func (s *Service) ForgetVersions(ctx context.Context, c sandbox.Caller, a ForgetArgs) (ForgetResult, error) {
	if err := s.needOwner(c); err != nil {
		return ForgetResult{}, err
	}
	if a.Client == "" {
		return ForgetResult{}, errs.New(errs.InvalidParams, "", "Name the agent whose versions to forget (client).")
	}
	o := s.box.Started(ctx, audit.Event{Client: c.Client, Op: "versions.forget", Target: a.Client,
		Decision: audit.Allow, DecidedBy: audit.ByOwner}, "")
	who := a.Client
	if who == "owner" { // no agent has that name (app/config)
		who = versions.Owner
	}
	n, freed := s.versions.Forget(who, a.Before)
	o.Event().Detail = fmt.Sprintf("%d versions, %d bytes", n, freed)
	if !a.Before.IsZero() {
		o.Event().Detail += ", stored before " + a.Before.UTC().Format(time.RFC3339)
	}
	return ForgetResult{Client: a.Client, Versions: n, Bytes: freed}, o.End(nil)
}
