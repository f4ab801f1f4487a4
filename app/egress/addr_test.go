package egress

import (
	"strings"
	"testing"
)

func TestSplitHostPort(t *testing.T) {
	type tc struct {
		in       string
		defPort  int
		host     string // "" when refused
		port     int
		whyFails string
	}
	groups := map[string][]tc{
		"valid": {
			{in: "example.com:443", host: "example.com", port: 443},
			{in: "pypi.org", defPort: 80, host: "pypi.org", port: 80},
			{in: "files.pythonhosted.org:65535", host: "files.pythonhosted.org", port: 65535},
			{in: "1.2.3.4:1", host: "1.2.3.4", port: 1},
			{in: "[2001:db8::1]:443", host: "2001:db8::1", port: 443},
			{in: "xn--bcher-kva.example:80", host: "xn--bcher-kva.example", port: 80},
			{in: "_dmarc.example.com:25", host: "_dmarc.example.com", port: 25},
			{in: "localhost:8080", host: "localhost", port: 8080},
		},
		"odd but fine": {
			{in: "EXAMPLE.Com:443", host: "example.com", port: 443},
			{in: "example.com.:443", host: "example.com", port: 443},
			{in: "[2001:DB8:0:0::1]:443", host: "2001:db8::1", port: 443},
			{in: "[::ffff:127.0.0.1]:80", host: "127.0.0.1", port: 80},
			{in: "example.com:", defPort: 80, host: "example.com", port: 80},
			{in: "[::1]", defPort: 80, host: "::1", port: 80},
			{in: "example.com:00443", host: "example.com", port: 443},
			{in: "a-.b-c.d", defPort: 80, host: "a-.b-c.d", port: 80},
			{in: "1password.com:443", host: "1password.com", port: 443},
		},
		"probing": {
			{in: "", defPort: 80, whyFails: "empty"},
			{in: ":443", whyFails: "empty host"},
			{in: "example.com", whyFails: "CONNECT needs a port"},
			{in: "example.com:0", whyFails: "port 0"},
			{in: "example.com:65536", whyFails: "port too large"},
			{in: "example.com:+443", whyFails: "sign"},
			{in: "example.com:443 ", whyFails: "space"},
			{in: "example.com:0x1bb", whyFails: "hex port"},
			{in: "example.com:100000", whyFails: "six digits"},
			{in: "exa mple.com:443", whyFails: "space in host"},
			{in: "example.com\x00.evil:443", whyFails: "NUL"},
			{in: "example.com\r\n:443", whyFails: "CRLF"},
			{in: "*.example.com:443", whyFails: "wildcard"},
			{in: "a..b:443", whyFails: "empty label"},
			{in: ".example.com:443", whyFails: "leading dot"},
			{in: "example.com..:443", whyFails: "two trailing dots"},
			{in: "bücher.example:443", whyFails: "not punycode"},
			{in: "ex%61mple.com:443", whyFails: "percent"},
			{in: "user@example.com:443", whyFails: "userinfo"},
			{in: strings.Repeat("a", 64) + ".com:443", whyFails: "label over 63"},
			{in: strings.Repeat("abcdefg.", 32) + "com:443", whyFails: "name over 253"},
			{in: "[example.com]:443", whyFails: "brackets around a name"},
			{in: "[1.2.3.4]:443", whyFails: "brackets around IPv4"},
			{in: "[::1]443", whyFails: "no colon after bracket"},
			{in: "[::1:443", whyFails: "unclosed bracket"},
			{in: "::1:443", whyFails: "unbracketed IPv6 with port"},
			{in: "[fe80::1%eth0]:443", whyFails: "zone"},
		},
		"escapes to other addresses": {
			{in: "127.1:80", whyFails: "inet_aton short form"},
			{in: "0x7f.0.0.1:80", whyFails: "inet_aton hex"},
			{in: "0x7f000001:80", whyFails: "inet_aton single hex"},
			{in: "2130706433:80", whyFails: "inet_aton single decimal"},
			{in: "0177.0.0.1:80", whyFails: "inet_aton octal"},
			{in: "127.0.0.1.:80", whyFails: "IPv4 with a trailing dot"},
			{in: "1.2.3.4.5:80", whyFails: "five numbers"},
			{in: "evil.com.127.0.0.1:80", whyFails: "numeric last label"},
		},
	}
	for group, cases := range groups {
		for _, c := range cases {
			host, port, ok := splitHostPort(c.in, c.defPort)
			switch {
			case c.host == "" && ok:
				t.Errorf("%s: %q → %q %d; want refused (%s)", group, c.in, host, port, c.whyFails)
			case c.host != "" && (!ok || host != c.host || port != c.port):
				t.Errorf("%s: %q → %q %d %v; want %q %d", group, c.in, host, port, ok, c.host, c.port)
			}
			if ok {
				if again, ok2 := cleanHost(host); !ok2 || again != host {
					t.Errorf("%s: cleanHost(%q) = %q %v; want it unchanged", group, host, again, ok2)
				}
			}
		}
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"Corral refused x.":                 "Corral refused x.",
		"a\r\nSet-Cookie: b":                "a  Set-Cookie: b",
		"tab\there\x7f\u0085end\u2028.":     "tab here  end .",
		"bad \xff utf8":                     "bad \uFFFD utf8",
		"  \r\n ":                           "Corral's egress proxy refused this connection.",
		"Corral refused “quoted” — fine.\n": "Corral refused “quoted” — fine.",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q; want %q", in, got, want)
		}
	}
}
