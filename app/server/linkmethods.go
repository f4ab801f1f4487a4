package server

import (
	"context"
	"maps"
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
	out := map[string]any{"url": s.URL(l), "path": l.Path, "expiresAt": l.Expires.Format(time.RFC3339)}
	if c.caller.Owner {
		maps.Copy(out, s.linkReach(l))
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
	out := map[string]any{"path": res.Link.Path, "url": url, "expiresAt": res.Link.Expires.Format(time.RFC3339)}
	if a.Format == "markdown" || a.Format == "" {
		out["content"] = res.Content
		// The same report rendered as a page, for a person to open.
		out["view_url"] = url + "&view=1"
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
	return map[string]any{"rotated": true}, nil
}
