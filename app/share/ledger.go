package share

import (
	"context"
	"strconv"
	"strings"
	"time"

	"corral/core/errs"
	"corral/core/links"
	"corral/core/sandbox"
)

// Row is one row of links.list (and link.revoke's answer): a link handed
// out, its state, and the link itself while it still opens.
type Row struct {
	ID        string `json:"id"`
	Scope     string `json:"scope"`
	Path      string `json:"path"`
	Folder    bool   `json:"folder"`
	MadeBy    string `json:"made_by"`
	CreatedAt string `json:"created_at"`
	ExpiresAt string `json:"expires_at"`
	State     string `json:"state"` // "active", "expired", "revoked" or "rotated"
	RevokedAt string `json:"revoked_at,omitempty"`
	RevokedBy string `json:"revoked_by,omitempty"`
	URL       string `json:"url,omitempty"`     // while active and signed under the current key
	LANURL    string `json:"lan_url,omitempty"` // the same on the LAN address, when it is on
}

// List is links.list's answer: newest first; next_cursor asks for the
// following page.
type List struct {
	Links      []Row  `json:"links"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// ListArgs are links.list's params.
type ListArgs struct {
	All    bool   `json:"all"`
	Cursor string `json:"cursor"`
	Limit  int    `json:"limit"`
}

// RevokeArgs are link.revoke's params.
type RevokeArgs struct {
	ID string `json:"id" rpc:"required"`
}

const maxLinksPage = 200

// List answers links.list {all?, cursor?, limit?}: the links handed out
// (recorded since the ledger exists), active ones only unless all.
func (x Links) List(ctx context.Context, _ sandbox.Caller, a ListArgs) (List, error) {
	if a.Limit == 0 {
		a.Limit = 100
	}
	if a.Limit < 1 || a.Limit > maxLinksPage {
		return List{}, errs.New(errs.InvalidParams, "", "limit must be between 1 and %d.", maxLinksPage)
	}
	f := links.LinkFilter{All: a.All, Limit: a.Limit + 1}
	if a.Cursor != "" {
		after, ok := parseLinkCursor(a.Cursor)
		if !ok {
			return List{}, errs.New(errs.InvalidParams, "", "That cursor is not one links.list gave out.")
		}
		f.After = &after
	}
	recs, err := x.Ledger.SharedLinks(ctx, f)
	if err != nil {
		return List{}, err
	}
	out := List{Links: []Row{}}
	if len(recs) > a.Limit {
		recs = recs[:a.Limit]
		out.NextCursor = linkCursor(recs[len(recs)-1].LinkRecord)
	}
	now := x.Now()
	for _, r := range recs {
		out.Links = append(out.Links, x.row(r, now))
	}
	return out, nil
}

func (x Links) row(r links.SharedLink, now time.Time) Row {
	row := Row{
		ID: r.ID, Scope: r.Scope, Path: r.Path, Folder: r.Folder, MadeBy: r.MadeBy,
		CreatedAt: r.Created.Format(time.RFC3339), ExpiresAt: r.Expires.Format(time.RFC3339), State: "active",
	}
	switch {
	case !r.Revoked.IsZero():
		row.State, row.RevokedAt, row.RevokedBy = "revoked", r.Revoked.Format(time.RFC3339), r.RevokedBy
	case !r.Expires.After(now):
		row.State = "expired"
	case r.Rotated:
		row.State = "rotated"
	case r.Link != nil:
		row.URL = x.URL(*r.Link)
		row.LANURL = x.reach(*r.Link).LanURL
	}
	return row
}

// Revoke answers link.revoke {id}: the link stops opening at once, and
// so do the entry links its folder page handed out.
func (x Links) Revoke(ctx context.Context, c sandbox.Caller, a RevokeArgs) (Row, error) {
	r, err := x.Ledger.RevokeLink(ctx, c, a.ID)
	if err != nil {
		return Row{}, err
	}
	return x.row(links.SharedLink{LinkRecord: r}, x.Now()), nil
}

// linkCursor is the keyset cursor after r: "<created ns>.<id>".
func linkCursor(r links.LinkRecord) string {
	return strconv.FormatInt(r.Created.UnixNano(), 10) + "." + r.ID
}

func parseLinkCursor(c string) (links.LinkRecord, bool) {
	ns, id, ok := strings.Cut(c, ".")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || n < 0 || len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return links.LinkRecord{}, false
	}
	return links.LinkRecord{Created: time.Unix(0, n).UTC(), ID: id}, true
}
