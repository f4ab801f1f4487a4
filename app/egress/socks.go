package egress

import (
	"errors"
	"io"
	"net/netip"
	"syscall"

	"corral/core/errs"
)

// SOCKS5 (RFC 1928) constants used here.
const (
	socksVersion = 0x05

	socksNoAuth       = 0x00
	socksNoAcceptable = 0xFF

	socksCmdConnect = 0x01

	socksATYPIPv4   = 0x01
	socksATYPDomain = 0x03
	socksATYPIPv6   = 0x04

	socksSucceeded        = 0x00
	socksNotAllowed       = 0x02
	socksHostUnreachable  = 0x04
	socksConnRefused      = 0x05
	socksCmdNotSupported  = 0x07
	socksATYPNotSupported = 0x08
)

// serveSOCKS handles a connection that starts with the SOCKS5 version byte.
func (s *session) serveSOCKS() {
	var hdr [2]byte
	if _, err := io.ReadFull(s.br, hdr[:]); err != nil {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(s.br, methods); err != nil {
		return
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == socksNoAuth
	}
	if !noAuth {
		_, _ = s.client.Write([]byte{socksVersion, socksNoAcceptable})
		s.log.Debug("egress: socks client offers no usable method")
		return
	}
	if _, err := s.client.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return
	}

	var req [4]byte // VER CMD RSV ATYP
	if _, err := io.ReadFull(s.br, req[:]); err != nil || req[0] != socksVersion {
		return
	}
	var host string
	ok := true
	switch req[3] {
	case socksATYPIPv4:
		var a [4]byte
		if _, err := io.ReadFull(s.br, a[:]); err != nil {
			return
		}
		host, ok = cleanAddr(netip.AddrFrom4(a))
	case socksATYPIPv6:
		var a [16]byte
		if _, err := io.ReadFull(s.br, a[:]); err != nil {
			return
		}
		host, ok = cleanAddr(netip.AddrFrom16(a))
	case socksATYPDomain:
		var n [1]byte
		if _, err := io.ReadFull(s.br, n[:]); err != nil {
			return
		}
		name := make([]byte, n[0])
		if _, err := io.ReadFull(s.br, name); err != nil {
			return
		}
		host, ok = cleanHost(string(name))
	default:
		s.socksReply(socksATYPNotSupported)
		return
	}
	var p [2]byte
	if _, err := io.ReadFull(s.br, p[:]); err != nil {
		return
	}
	port := int(p[0])<<8 | int(p[1])
	if req[1] != socksCmdConnect {
		s.socksReply(socksCmdNotSupported)
		return
	}
	if !ok || port == 0 {
		s.log.Debug("egress: socks request for an invalid host or port")
		s.socksReply(socksHostUnreachable)
		return
	}
	s.endHead()

	up, err := s.dial(host, port)
	if err != nil {
		if s.ctx.Err() == nil {
			s.socksReply(socksCode(err))
			s.lingerClose()
		}
		return
	}
	if err := s.socksReply(socksSucceeded); err != nil {
		s.abort()
		up.Finish(0, 0)
		return
	}
	s.tunnel(up)
}

// socksReply writes a reply with the bound address 0.0.0.0:0.
func (s *session) socksReply(code byte) error {
	return s.writeClient([]byte{socksVersion, code, 0, socksATYPIPv4, 0, 0, 0, 0, 0, 0})
}

// socksCode is the reply code for a Dial failure.
func socksCode(err error) byte {
	switch errs.KindOf(err) {
	case errs.Denied, errs.Forbidden:
		return socksNotAllowed
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return socksConnRefused
	}
	return socksHostUnreachable
}
