package links

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/paths"
	"corral/core/sandbox"
)

// LinkRecord is one link handed out, as the owner's "Shared links" list
// shows it. It holds the link's signed fields, never its token: a copy of
// the ledger opens nothing without the signing key.
type LinkRecord struct {
	ID        string // LinkID of the signed fields
	KeyID     string // the signing key's id: a rotation withdraws every link made under the old one
	Scope     string
	Path      string // canonical agent-visible path
	Folder    bool
	MadeBy    string // the client that asked for it ("owner" for the owner)
	Created   time.Time
	Expires   time.Time
	Revoked   time.Time // zero: not revoked
	RevokedBy string
}

// LinkFilter selects records for the owner's list: newest first, at most
// Limit, and only those made before the (Created, ID) of After when After
// is set (the keyset cursor of the previous page).
type LinkFilter struct {
	All   bool   // also expired and revoked links, and those of earlier keys
	KeyID string // the current key: without All, only its links
	Now   time.Time
	After *LinkRecord
	Limit int
}

// LinkLedger keeps the links handed out, so that the owner can list them
// and withdraw one without rotating the key for all. A link is handed out
// only once it is recorded, and every open asks whether it, or a folder
// link it was listed from, has been revoked.
type LinkLedger interface {
	RecordLink(ctx context.Context, r LinkRecord) error
	// RevokedLinks returns the revoked records made under key kid for
	// scope with expiry exp: the only ones that can close a link with
	// those fields (few, so the check stays linear in the path's length).
	RevokedLinks(ctx context.Context, kid, scope string, exp time.Time) ([]LinkRecord, error)
	Links(ctx context.Context, f LinkFilter) ([]LinkRecord, error)
	// RevokeLink marks id revoked (keeping an earlier revocation) and
	// returns its record; ErrNoLink when the ledger does not hold id.
	RevokeLink(ctx context.Context, id, by string, at time.Time) (LinkRecord, error)
}

// ErrNoLink is RevokeLink's answer for an id the ledger does not hold.
var ErrNoLink = errors.New("sandbox: no such link")

// ErrRevokedLink is under OpenLink's answer (errors.Is) for a link the
// owner withdrew: the HTTP answer says so (410 Gone), since the token
// itself was genuine.
var ErrRevokedLink = errors.New("sandbox: link revoked")

// LinkID names the link signed for c under key kid: the hex SHA-256 of
// the key id and the signed fields, length-prefixed. Two links with the
// same fields under one key are the same token, so they share an id; the
// same fields under a new key are a new link.
func LinkID(kid string, c Claims) string {
	h := sha256.New()
	for _, f := range []string{kid, c.Scope, c.Path} {
		binary.Write(h, binary.BigEndian, uint32(len(f)))
		h.Write([]byte(f))
	}
	var kind byte = 'f'
	if c.Folder {
		kind = 'd'
	}
	h.Write([]byte{kind})
	binary.Write(h, binary.BigEndian, c.Expires.Unix())
	return hex.EncodeToString(h.Sum(nil))
}

// closes reports whether the revoked record r withdraws the link for c
// (same key, scope and expiry, as RevokedLinks selects): r is that link,
// or a folder link above it — a folder page hands out links to its
// entries that expire with it, so withdrawing the folder link withdraws
// them too.
func closes(r LinkRecord, c Claims) bool {
	switch {
	case r.Path == c.Path:
		return r.Folder == c.Folder || r.Folder
	case !r.Folder:
		return false
	case r.Path == ".":
		return true
	}
	return paths.Within(c.Path, r.Path)
}

// record notes a link in the ledger before it is handed out: a link the
// owner could not see or withdraw is not given at all.
func (s *Service) record(ctx context.Context, c sandbox.Caller, l Link) error {
	lg := s.ledger()
	if lg == nil {
		return nil
	}
	claims := Claims{Scope: l.Scope, Path: l.Path, Folder: l.Folder, Expires: l.Expires}
	// The same fields in the same second are the same token: one the
	// owner withdrew is not handed out again as if it worked.
	if err := s.revoked(ctx, l.KeyID, claims); err != nil {
		if errors.Is(err, ErrRevokedLink) {
			return errs.New(errs.Conflict, l.Path, "The owner withdrew a link to this a moment ago; ask again in a second for a new one.")
		}
		return err
	}
	r := LinkRecord{ID: LinkID(l.KeyID, claims), KeyID: l.KeyID, Scope: l.Scope, Path: l.Path, Folder: l.Folder, MadeBy: c.Client, Created: s.box.Now().UTC(), Expires: l.Expires}
	if err := lg.RecordLink(context.WithoutCancel(ctx), r); err != nil {
		return errs.Wrap(err, errs.IO, "", "Corral could not note the link in its list of shared links, so it did not make it. Please try again.")
	}
	return nil
}

// revoked reports whether the link for c has been withdrawn. A ledger
// that cannot answer keeps the link closed.
func (s *Service) revoked(ctx context.Context, kid string, c Claims) error {
	lg := s.ledger()
	if lg == nil {
		return nil
	}
	revoked, err := lg.RevokedLinks(ctx, kid, c.Scope, c.Expires)
	if err != nil {
		return errs.Wrap(err, errs.Unavailable, "", "Corral could not check this link just now. Please try again in a moment.")
	}
	for _, r := range revoked {
		if closes(r, c) {
			return errs.Wrap(ErrRevokedLink, errs.Denied, c.Path, "The owner has withdrawn this link.")
		}
	}
	return nil
}

func (s *Service) ledger() LinkLedger {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.linkCfg.Ledger
}

// SharedLink is a record in the owner's list, with the link itself while
// it still opens.
type SharedLink struct {
	LinkRecord
	Rotated bool  // made under an earlier key: withdrawn with every other by a rotation
	Link    *Link // while it still opens; nil once expired, revoked or rotated
}

// SharedLinks lists the links handed out, newest first, for the owner.
func (s *Service) SharedLinks(ctx context.Context, f LinkFilter) ([]SharedLink, error) {
	lg := s.ledger()
	if lg == nil {
		return nil, errs.New(errs.Unavailable, "", "This Corral keeps no list of shared links.")
	}
	signer, _, _ := s.signer()
	f.Now = s.box.Now()
	if signer != nil {
		f.KeyID = signer.KeyID()
	}
	recs, err := lg.Links(ctx, f)
	if err != nil {
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not read its list of shared links.")
	}
	out := make([]SharedLink, len(recs))
	for i, r := range recs {
		out[i].LinkRecord = r
		out[i].Rotated = r.KeyID != f.KeyID
		if out[i].Rotated || !r.Revoked.IsZero() || !r.Expires.After(f.Now) {
			continue
		}
		// Signing the same fields under the same key gives the same token.
		l := signed(signer, Claims{Scope: r.Scope, Path: r.Path, Folder: r.Folder, Expires: r.Expires})
		out[i].Link = &l
	}
	return out, nil
}

// RevokeLink withdraws one link (and the entry links its folder page hands
// out), recorded in the audit log as "link.revoke" before the answer.
// Revoking twice keeps the first revocation.
func (s *Service) RevokeLink(ctx context.Context, c sandbox.Caller, id string) (LinkRecord, error) {
	if !c.Owner {
		return LinkRecord{}, errs.New(errs.Forbidden, "", "Only the owner may withdraw a link.")
	}
	lg := s.ledger()
	if lg == nil {
		return LinkRecord{}, errs.New(errs.Unavailable, "", "This Corral keeps no list of shared links.")
	}
	o, err := s.box.Begin(ctx, c, nil, "link.revoke")
	if err != nil {
		return LinkRecord{}, err
	}
	o.Event().Decision, o.Event().DecidedBy = audit.Allow, audit.ByOwner
	r, err := lg.RevokeLink(context.WithoutCancel(ctx), id, c.Client, s.box.Now().UTC())
	switch {
	case errors.Is(err, ErrNoLink):
		err = errs.New(errs.NotFound, "", "There is no shared link with that id; it may have been made before Corral kept a list.")
	case err != nil:
		err = errs.Wrap(err, errs.IO, "", "Corral could not withdraw the link. It still works; please try again.")
	default:
		o.Event().User, o.Event().Target = r.Scope, r.Path
		o.Event().Detail = "made by " + r.MadeBy + "; was to expire " + r.Expires.UTC().Format(time.RFC3339)
	}
	return r, o.End(err)
}
