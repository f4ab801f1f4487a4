package server

import (
	"context"
	"time"

	"corral/app/rpc"
	"corral/app/wire"
	"corral/core/errs"
	"corral/core/links"
	"corral/core/sandbox"
)

// URL returns the full URL of a link on this server.
func (s *Server) URL(l links.Link) string {
	return s.LinkBase() + "/files/out?" + l.Query()
}

// LinkBase is where links point: public_url when set, else the LAN
// address while the LAN listener is open (a phone can open them), else
// the listening address.
func (s *Server) LinkBase() string {
	if s.cfg.Server.PublicURL != "" {
		return s.cfg.Server.PublicURL
	}
	s.mu.Lock()
	lan := s.lanURL
	s.mu.Unlock()
	if lan != "" {
		return lan
	}
	return s.BaseURL()
}

// LANURL is the LAN address while the LAN listener is open, else "".
func (s *Server) LANURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lanURL
}

// linkMaker is what the link methods use of the sandbox: signing links to
// files and saving reports behind them.
type linkMaker interface {
	CreateLink(ctx context.Context, c sandbox.Caller, a links.LinkArgs) (links.Link, error)
	SaveResult(ctx context.Context, c sandbox.Caller, a links.ResultArgs) (links.Result, error)
}

// linkLedger is what the owner's list of links uses of the sandbox.
type linkLedger interface {
	SharedLinks(ctx context.Context, f links.LinkFilter) ([]links.SharedLink, error)
	RevokeLink(ctx context.Context, c sandbox.Caller, id string) (links.LinkRecord, error)
}

// linkArea answers link.create, result.save, links.rotate, and the owner's
// links.list and link.revoke (linkledger.go).
type linkArea struct {
	box    linkMaker
	ledger linkLedger
	now    func() time.Time
	url    func(links.Link) string                    // the link on this server (Server.URL)
	reach  func(links.Link) *ownerReach               // where the owner can open it (Server.linkReach)
	rotate func(ctx context.Context, by string) error // nil when links cannot be rotated
}

func (x linkArea) methods(add func(name string, m method)) {
	add("link.create", method{fn: x.create})
	add("result.save", method{fn: x.save})
	add("links.rotate", method{owner: true, fn: x.rotateAll})
	add("links.list", method{owner: true, fn: x.list})
	add("link.revoke", method{owner: true, fn: x.revoke})
}

func (x linkArea) create(ctx context.Context, c *call) (any, error) {
	a, err := decode[wire.LinkArgs](c)
	if err != nil {
		return nil, err
	}
	life, err := parseExpiresIn(a.ExpiresIn)
	if err != nil {
		return nil, err
	}
	l, err := x.box.CreateLink(ctx, c.caller, links.LinkArgs{Context: wire.To[*sandbox.Context](a.Context), Path: a.Path, ExpiresIn: life})
	if err != nil {
		return nil, err
	}
	out := linkResult{URL: x.url(l), Path: l.Path, ExpiresAt: l.Expires.Format(time.RFC3339)}
	if c.caller.Owner {
		out.ownerReach = x.reach(l)
	}
	return out, nil
}

func (x linkArea) save(ctx context.Context, c *call) (any, error) {
	a, err := decode[links.ResultArgs](c)
	if err != nil {
		return nil, err
	}
	res, err := x.box.SaveResult(ctx, c.caller, a)
	if err != nil {
		return nil, err
	}
	url := x.url(res.Link)
	out := savedResult{Path: res.Link.Path, URL: url, ExpiresAt: res.Link.Expires.Format(time.RFC3339)}
	if a.Format == "markdown" || a.Format == "" {
		content := res.Content
		out.Content = &content
		// The same report rendered as a page, for a person to open.
		view := url + "&view=1"
		out.ViewURL = &view
	}
	return out, nil
}

func (x linkArea) rotateAll(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	if x.rotate == nil {
		return nil, errs.New(errs.Unavailable, "", "Links cannot be rotated in this Corral.")
	}
	if err := x.rotate(ctx, c.caller.Client); err != nil {
		return nil, err
	}
	return rotatedResult{Rotated: true}, nil
}
