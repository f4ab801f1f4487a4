package egress

import (
	"net/netip"
	"strconv"
	"strings"
)

// maxHostBytes is the longest host name handed to the Dialer (the DNS
// limit for a name in text form without its trailing dot).
const maxHostBytes = 253

// cleanHost returns the spelling of h that is handed to the Dialer, or
// false when h is no host Corral dials.
//
// IP literals come back in netip's canonical text (IPv6 unbracketed,
// IPv4-mapped IPv6 as plain IPv4, no zone). Domain names come back in
// lowercase ASCII without a trailing dot, made of labels of 1–63 letters,
// digits, '-' and '_'. A name whose last label is a number ("127.1",
// "0x7f.1", "1.2.3.4.5") is refused: resolvers that accept inet_aton's
// old forms would read it as an IP address the gate never saw.
func cleanHost(h string) (string, bool) {
	if strings.HasPrefix(h, "[") {
		if len(h) < 2 || !strings.HasSuffix(h, "]") {
			return "", false
		}
		a, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !a.Is6() {
			return "", false
		}
		return cleanAddr(a)
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return cleanAddr(a)
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > maxHostBytes {
		return "", false
	}
	b := []byte(h)
	label := 0
	for i, c := range b {
		switch {
		case 'A' <= c && c <= 'Z':
			b[i] = c + ('a' - 'A')
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		case c == '.':
			if label == 0 {
				return "", false
			}
			label = 0
			continue
		default:
			return "", false
		}
		label++
		if label > 63 {
			return "", false
		}
	}
	if label == 0 {
		return "", false
	}
	h = string(b)
	if numeric(h[strings.LastIndexByte(h, '.')+1:]) {
		return "", false
	}
	return h, true
}

// cleanAddr spells an IP address for the Dialer.
func cleanAddr(a netip.Addr) (string, bool) {
	if a.Zone() != "" {
		return "", false
	}
	return a.Unmap().String(), true
}

// numeric reports whether a label reads as a number to inet_aton: all
// decimal digits, or 0x followed by hex digits.
func numeric(label string) bool {
	if len(label) >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X') {
		label = label[2:]
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(label); i++ {
		if label[i] < '0' || label[i] > '9' {
			return false
		}
	}
	return true
}

// parsePort reads a port of 1 to 5 ASCII digits, 1–65535.
func parsePort(s string) (int, bool) {
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	if n < 1 || n > 65535 {
		return 0, false
	}
	return n, true
}

// splitHostPort splits an authority ("host:port", "[v6]:port", or "host"
// when defPort is not 0) and cleans both halves. An IPv6 literal must be
// bracketed when a port follows. Userinfo ("user@host") is not accepted.
func splitHostPort(hp string, defPort int) (string, int, bool) {
	var host, port string
	hasPort := false
	if strings.HasPrefix(hp, "[") {
		end := strings.IndexByte(hp, ']')
		if end < 0 {
			return "", 0, false
		}
		host, port = hp[:end+1], hp[end+1:]
		if port != "" {
			if port[0] != ':' {
				return "", 0, false
			}
			port, hasPort = port[1:], true
		}
	} else {
		switch strings.Count(hp, ":") {
		case 0:
			host = hp
		case 1:
			i := strings.IndexByte(hp, ':')
			host, port, hasPort = hp[:i], hp[i+1:], true
		default:
			return "", 0, false
		}
	}
	h, ok := cleanHost(host)
	if !ok {
		return "", 0, false
	}
	if !hasPort || port == "" {
		if defPort == 0 {
			return "", 0, false
		}
		return h, defPort, true
	}
	p, ok := parsePort(port)
	if !ok {
		return "", 0, false
	}
	return h, p, true
}

// hostPort joins a cleaned host and a port for a Host header.
func hostPort(host string, port, defPort int) string {
	if strings.IndexByte(host, ':') >= 0 {
		host = "[" + host + "]"
	}
	if port == defPort {
		return host
	}
	return host + ":" + strconv.Itoa(port)
}
