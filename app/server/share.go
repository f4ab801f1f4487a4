package server

import "corral/app/share"

// linkArea registers the share room's methods (app/share answers them).
type linkArea struct{ share.Links }

func (s *Server) linkArea() linkArea {
	return linkArea{share.Links{Box: s.links, Ledger: s.links, Server: s, Now: s.now, Lifetime: parseExpiresIn, Rotate: s.rotate}}
}

func (x linkArea) methods(add func(name string, m method)) {
	add("link.create", method{fn: handle(x.Create)})
	add("result.save", method{fn: handle(x.Save)})
	add("links.rotate", method{owner: true, fn: handle(x.RotateAll)})
	add("links.list", method{owner: true, fn: handle(x.List)})
	add("link.revoke", method{owner: true, fn: handle(x.Revoke)})
}

// PublicURL is public_url as configured, "" when unset (share.Server).
func (s *Server) PublicURL() string { return s.cfg.Server.PublicURL }

// LANURL is the LAN address while the LAN listener is open, else "".
func (s *Server) LANURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lanURL
}
