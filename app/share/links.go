package share

import (
	"context"
	"encoding/json"
	"time"

	"corral/app/wire"
	"corral/core/errs"
	"corral/core/links"
	"corral/core/sandbox"
)

// Server is what the share room needs of the server it runs in: where a
// link can be opened. Its answers may change while Corral runs (the LAN
// listener opens and closes), so they are asked for each link.
type Server interface {
	// BaseURL is public_url when set, else the listening address.
	BaseURL() string
	// PublicURL is public_url as configured, "" when unset.
	PublicURL() string
	// LANURL is the LAN address while the LAN listener is open, else "".
	LANURL() string
}

// Maker is what the link methods use of the sandbox: signing links to
// files and saving reports behind them.
type Maker interface {
	CreateLink(ctx context.Context, c sandbox.Caller, a links.LinkArgs) (links.Link, error)
	SaveResult(ctx context.Context, c sandbox.Caller, a links.ResultArgs) (links.Result, error)
}

// Ledger is what the owner's list of links uses of the sandbox.
type Ledger interface {
	SharedLinks(ctx context.Context, f links.LinkFilter) ([]links.SharedLink, error)
	RevokeLink(ctx context.Context, c sandbox.Caller, id string) (links.LinkRecord, error)
}

// Links answers link.create, result.save, links.rotate, and the owner's
// links.list and link.revoke (ledger.go). Each method takes its params
// already decoded; whoever registers them decides who may call which
// (links.rotate, links.list and link.revoke are the owner's).
type Links struct {
	Box    Maker
	Ledger Ledger
	Server Server
	Now    func() time.Time
	// Lifetime reads link.create's expires_in as the server reads every
	// expires_in (a number of seconds or a duration string; absent: 0).
	Lifetime func(raw json.RawMessage) (time.Duration, error)
	// Rotate replaces the link-signing key; by names who asked, for the
	// audit log. nil: links cannot be rotated.
	Rotate func(ctx context.Context, by string) error
}

// URL returns the full URL of a link on this server.
func (x Links) URL(l links.Link) string {
	return x.LinkBase() + "/files/out?" + l.Query()
}

// LinkBase is where links point: public_url when set, else the LAN
// address while the LAN listener is open (a phone can open them), else
// the listening address.
func (x Links) LinkBase() string {
	if pub := x.Server.PublicURL(); pub != "" {
		return pub
	}
	if lan := x.Server.LANURL(); lan != "" {
		return lan
	}
	return x.Server.BaseURL()
}

// The results of link.create, result.save and links.rotate are
// declared once, in app/wire (MCP's output schemas and the CLI read them
// there); these are their names here.
type (
	LinkResult = wire.LinkResult
	Saved      = wire.Saved
	Rotated    = wire.Rotated
)

// RotateArgs are links.rotate's params: none.
type RotateArgs struct{}

// Create answers link.create for c.
func (x Links) Create(ctx context.Context, c sandbox.Caller, a wire.LinkArgs) (LinkResult, error) {
	life, err := x.Lifetime(a.ExpiresIn)
	if err != nil {
		return LinkResult{}, err
	}
	l, err := x.Box.CreateLink(ctx, c, links.LinkArgs{Context: wire.To[*sandbox.Context](a.Context), Path: a.Path, ExpiresIn: life})
	if err != nil {
		return LinkResult{}, err
	}
	out := LinkResult{URL: x.URL(l), Path: l.Path, ExpiresAt: l.Expires.Format(time.RFC3339)}
	if c.Owner {
		out.Reach = x.reach(l)
	}
	return out, nil
}

// Save answers result.save for c.
func (x Links) Save(ctx context.Context, c sandbox.Caller, a links.ResultArgs) (Saved, error) {
	res, err := x.Box.SaveResult(ctx, c, a)
	if err != nil {
		return Saved{}, err
	}
	url := x.URL(res.Link)
	out := Saved{Path: res.Link.Path, URL: url, ExpiresAt: res.Link.Expires.Format(time.RFC3339)}
	if a.Format == "markdown" || a.Format == "" {
		content := res.Content
		out.Content = &content
		// The same report rendered as a page, for a person to open.
		view := url + "&view=1"
		out.ViewURL = &view
	}
	return out, nil
}

// RotateAll answers links.rotate: every link handed out stops opening.
func (x Links) RotateAll(ctx context.Context, c sandbox.Caller, _ RotateArgs) (Rotated, error) {
	if x.Rotate == nil {
		return Rotated{}, errs.New(errs.Unavailable, "", "Links cannot be rotated in this Corral.")
	}
	if err := x.Rotate(ctx, c.Client); err != nil {
		return Rotated{}, err
	}
	return Rotated{Rotated: true}, nil
}
