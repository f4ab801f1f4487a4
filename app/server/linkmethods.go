package server

import (
	"context"
	"time"

	"corral/app/rpc"
	"corral/app/wire"
	"corral/core/errs"
	"corral/core/sandbox"
)

// URL returns the full URL of a link on this server.
func (s *Server) URL(l sandbox.Link) string {
	return s.BaseURL() + "/files/out?" + l.Query()
}

func (s *Server) linkCreate(ctx context.Context, c *call) (any, error) {
	a, err := wire.Decode[wire.LinkArgs](c.params)
	if err != nil {
		return nil, err
	}
	life, err := parseExpiresIn(a.ExpiresIn)
	if err != nil {
		return nil, err
	}
	l, err := s.box.CreateLink(ctx, c.caller, sandbox.LinkArgs{Context: wire.To[*sandbox.Context](a.Context), Path: a.Path, ExpiresIn: life})
	if err != nil {
		return nil, err
	}
	out := linkResult{URL: s.URL(l), Path: l.Path, ExpiresAt: l.Expires.Format(time.RFC3339)}
	if c.caller.Owner {
		out.ownerReach = s.linkReach(l)
	}
	return out, nil
}

func (s *Server) resultSave(ctx context.Context, c *call) (any, error) {
	a, err := wire.Decode[sandbox.ResultArgs](c.params)
	if err != nil {
		return nil, err
	}
	res, err := s.box.SaveResult(ctx, c.caller, a)
	if err != nil {
		return nil, err
	}
	url := s.URL(res.Link)
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

func (s *Server) linksRotate(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	if s.rotate == nil {
		return nil, errs.New(errs.Unavailable, "", "Links cannot be rotated in this Corral.")
	}
	if err := s.rotate(ctx, c.caller.Client); err != nil {
		return nil, err
	}
	return rotatedResult{Rotated: true}, nil
}
