package netgate

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"corral/core/errs"
	"corral/core/visible"
)

// bundles are the package_managers a command may name. Registries move
// between names under their organisation's domain, so most entries are
// "*." patterns: they cover the registry and its download hosts, and
// nothing outside that organisation.
var bundles = map[string][]string{
	"pip":       {"pypi.org", "*.pypi.org", "files.pythonhosted.org", "*.pythonhosted.org"},
	"npm":       {"*.npmjs.org", "*.npmjs.com", "*.yarnpkg.com"},
	"go":        {"*.golang.org", "go.dev", "*.go.dev"},
	"cargo":     {"crates.io", "*.crates.io", "*.rust-lang.org"},
	"apt":       {"*.debian.org", "*.ubuntu.com"},
	"git-hosts": {"github.com", "*.github.com", "*.githubusercontent.com", "gitlab.com", "*.gitlab.com", "bitbucket.org", "*.bitbucket.org", "codeberg.org", "*.codeberg.org"},
}

// Bundles returns the package_managers bundles and their domains, sorted
// by name.
func Bundles() []Bundle {
	out := make([]Bundle, 0, len(bundles))
	for _, name := range slices.Sorted(maps.Keys(bundles)) {
		out = append(out, Bundle{Name: name, Domains: slices.Clone(bundles[name])})
	}
	return out
}

// Bundle is a named list of domains.
type Bundle struct {
	Name    string
	Domains []string
}

// CheckDomains validates a command's allowed_domains and package_managers
// and returns the patterns they allow: lowercase names ("example.com"),
// "*.example.com" for any name below example.com, or IP literals.
func CheckDomains(domains, managers []string) ([]string, error) {
	var out []string
	for _, m := range managers {
		ds, ok := bundles[strings.ToLower(m)]
		if !ok {
			names := slices.Sorted(maps.Keys(bundles))
			return nil, errs.New(errs.InvalidParams, "", "package_managers: %q is not a bundle Corral knows; use %s.", visible.Line(m), strings.Join(names, ", "))
		}
		out = append(out, ds...)
	}
	for _, d := range domains {
		p, err := normalPattern(d)
		if err != nil {
			return nil, errs.New(errs.InvalidParams, "", "allowed_domains: %q is not a domain: %s", visible.Line(d), err)
		}
		out = append(out, p)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxDomains {
		return nil, errs.New(errs.InvalidParams, "", "allowed_domains and package_managers name %d domains; at most %d are allowed.", len(out), MaxDomains)
	}
	return out, nil
}

func normalPattern(d string) (string, error) {
	if rest, ok := strings.CutPrefix(d, "*."); ok {
		h, err := normalHost(rest)
		if err != nil {
			return "", err
		}
		if _, ipErr := netip.ParseAddr(h); ipErr == nil || !strings.Contains(h, ".") {
			return "", fmt.Errorf("a wildcard needs a domain with a dot after \"*.\", such as *.example.com")
		}
		return "*." + h, nil
	}
	return normalHost(d)
}

// normalHost lowercases a host name and drops a final dot; it accepts
// ASCII domain names (international ones in their xn-- form) and IP
// literals (IPv6 with or without brackets, no zone).
func normalHost(h string) (string, error) {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("an address with a zone is not allowed")
		}
		return a.Unmap().String(), nil
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", fmt.Errorf("a name has 1 to 253 characters")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("each part between dots has 1 to 63 characters")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("use letters, digits and hyphens (international names in their xn-- form)")
			}
		}
	}
	return h, nil
}

// MatchAny reports whether host matches one of the patterns.
func MatchAny(patterns []string, host string) bool {
	for _, p := range patterns {
		if suffix, ok := strings.CutPrefix(p, "*"); ok {
			if len(host) > len(suffix) && strings.HasSuffix(host, suffix) {
				return true
			}
		} else if p == host {
			return true
		}
	}
	return false
}

// nonPublic are the ranges a command may never reach without the owner's
// exact allowance, besides what netip's predicates cover.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT, also Tailscale
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	compat    = netip.MustParsePrefix("::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Public reports whether a command may reach a by default: a global
// unicast address outside every private, local and reserved range.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	// NAT64 (64:ff9b::/96) and IPv4-compatible (::/96, deprecated, routed
	// by a sit tunnel where one is up) addresses carry an IPv4 address in
	// their last 32 bits, 6to4 (2002::/16) in bits 16–48: judge that one.
	b := a.As16()
	if nat64.Contains(a) || compat.Contains(a) {
		return Public(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	if sixToFour.Contains(a) {
		return Public(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	return true
}
