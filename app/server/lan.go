package server

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strings"

	"corral/app/pairing"
)

// ListenLAN opens a second listener on the LAN address with the same port
// as the loopback one ([server] lan = true). It serves HTTPS with the
// certificate app/pairing keeps; the loopback side stays plain HTTP.
func (s *Server) ListenLAN() (net.Listener, error) {
	ip, err := s.lanIP()
	if err != nil {
		return nil, err
	}
	cert, fp, err := pairing.LANCert(s.lanCertFile, ip, s.now())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	_, port, _ := net.SplitHostPort(s.addr)
	s.mu.Unlock()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), port))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.lanURL = "https://" + ln.Addr().String()
	s.lanFP = fp
	s.lanLn = ln
	s.allowHost(ip.String())
	s.mu.Unlock()
	s.lanOn.Store(true)
	return pairing.TLSListener(lanListener{ln}, cert), nil
}

// fromLAN reports whether a request came from another machine: through
// the LAN listener, or from an address that is not loopback.
func fromLAN(r *http.Request) bool {
	if lan, _ := r.Context().Value(lanConnKey{}).(bool); lan {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return true
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// lanListened reports whether a request came through the LAN listener.
func lanListened(r *http.Request) bool {
	lan, _ := r.Context().Value(lanConnKey{}).(bool)
	return lan
}

// markLAN is the http.Server's ConnContext: connections of the LAN
// listener carry lanConnKey.
func markLAN(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if _, ok := c.(lanConn); ok {
		return context.WithValue(ctx, lanConnKey{}, true)
	}
	return ctx
}

// lanAllowed are the routes a LAN request may reach; everything else on
// the LAN needs a paired device, and some routes stay loopback-only.
func lanRoute(r *http.Request) (open, deviceOnly bool) {
	p := r.URL.Path
	switch {
	case p == "/healthz", p == "/pair", p == "/pair.js", p == "/pair.css", p == "/files/out", isWebAppPath(p):
		return true, false
	case p == "/", p == "/ws", p == "/logout", strings.HasPrefix(p, "/ui/"):
		return false, true
	}
	return false, false // /login, /mcp, …: loopback only
}

// lanListener marks the connections it accepts as the LAN side's, so a
// request on them is judged as coming from the LAN whatever its address
// (fromLAN).
type lanListener struct{ net.Listener }

type lanConn struct{ net.Conn }

func (l lanListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return lanConn{c}, nil
}

type lanConnKey struct{}
