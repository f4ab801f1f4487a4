package server

import (
	"net"
	"net/url"
	"strings"

	"corral/core/links"
)

// linkReach tells the owner where a new link can be opened: local_only
// when it names this computer (no public_url, no LAN), and lan_url, the
// same link on the LAN address (HTTPS with the LAN certificate), when the
// LAN listener runs. Agents are not told: they get the link as before.
func (s *Server) linkReach(l links.Link) *ownerReach {
	s.mu.Lock()
	lan := s.lanURL
	s.mu.Unlock()
	out := &ownerReach{LocalOnly: lan == "" && loopbackURL(s.BaseURL())}
	if lan != "" && s.cfg.Server.PublicURL == "" {
		out.LanURL = lan + "/files/out?" + l.Query()
	}
	return out
}

// loopbackURL reports whether u names this computer only.
func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	host := p.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}
