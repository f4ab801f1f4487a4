package share

import (
	"net"
	"net/url"
	"strings"

	"corral/app/wire"
	"corral/core/links"
)

// Reach is where the owner can open a new link (see Links.reach),
// declared in app/wire with link.create's result.
type Reach = wire.Reach

// reach tells the owner where a new link can be opened: local_only when
// it names this computer (no public_url, no LAN), and lan_url, the same
// link on the LAN address (HTTPS with the LAN certificate), when the LAN
// listener runs. Agents are not told: they get the link as before.
func (x Links) reach(l links.Link) *Reach {
	lan := x.Server.LANURL()
	out := &Reach{LocalOnly: lan == "" && loopbackURL(x.Server.BaseURL())}
	if lan != "" && x.Server.PublicURL() == "" {
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
