// Package links signs and verifies the capability tokens of /files/out
// links (docs/protocol.md section 8), and makes, serves, lists and withdraws
// those links as operations of core/sandbox (Service, share.go and
// ledger.go): the sandbox resolves, decides and audits each through its
// operation skeleton (sandbox.Op); this package signs, records the links
// handed out (LinkLedger) and opens what a link names.
//
// A token is "v1.<kid>.<scope>.<kind>.<exp>.<mac>": kid names the signing
// key (the first 8 hex digits of its SHA-256), kind is "f" for one file or
// "d" for a folder and everything below it, exp is the expiry in Unix
// seconds, and mac is HMAC-SHA256 under the key over a length-prefixed
// encoding of the version, scope, canonical path, kind and expiry.
//
// Guarantees: a token verifies only for the exact canonical path it was
// signed for, or — for a folder token — for that folder and paths below it
// component by component ("output" covers "output/a", never "outputs");
// only before its expiry, and only when that expiry is no further away
// than the maximum lifetime; only under the current key, compared in
// constant time. Parsing is strict: any deviation from the canonical form
// fails.
//
// Not guaranteed: the signer (Signer) does not check that the path exists
// or lies in the scope's folders; Service resolves the path through the
// sandbox (core/paths) and opens it through an os.Root.
package links

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"corral/core/paths"
)

const version = "v1"

// ErrInvalid is the one error verification returns, whatever went wrong:
// the HTTP answer must not help an attacker tell the cases apart.
var ErrInvalid = errors.New("links: invalid token")

// Signer signs and verifies tokens under one key.
type Signer struct {
	key []byte
	kid string
}

// NewSigner returns a signer for a 32-byte secret.
func NewSigner(secret []byte) (*Signer, error) {
	if len(secret) != 32 {
		return nil, errors.New("links: the secret must be 32 bytes")
	}
	sum := sha256.Sum256(secret)
	return &Signer{key: append([]byte(nil), secret...), kid: hex.EncodeToString(sum[:4])}, nil
}

// KeyID names the signer's key.
func (s *Signer) KeyID() string { return s.kid }

// Claims are what a token grants.
type Claims struct {
	Scope   string    // scope folder the path resolves in
	Path    string    // canonical agent-visible path
	Folder  bool      // covers the folder and everything below it
	Expires time.Time // whole seconds
}

func kind(folder bool) string {
	if folder {
		return "d"
	}
	return "f"
}

// mac computes the HMAC over the unambiguous encoding of the claims.
func (s *Signer) mac(scope, path, kind string, exp int64) []byte {
	m := hmac.New(sha256.New, s.key)
	var n [8]byte
	for _, field := range []string{version, scope, path, kind} {
		binary.BigEndian.PutUint64(n[:], uint64(len(field)))
		m.Write(n[:])
		m.Write([]byte(field))
	}
	binary.BigEndian.PutUint64(n[:], uint64(exp))
	m.Write(n[:])
	return m.Sum(nil)
}

// Sign returns the token for c. Scope must be a safe segment (no dots).
func (s *Signer) Sign(c Claims) string {
	exp := c.Expires.Unix()
	k := kind(c.Folder)
	return version + "." + s.kid + "." + c.Scope + "." + k + "." + strconv.FormatInt(exp, 10) + "." +
		base64.RawURLEncoding.EncodeToString(s.mac(c.Scope, c.Path, k, exp))
}

// parsed is a token split into its fields, before its MAC is checked.
type parsed struct {
	scope  string
	folder bool
	exp    int64
	mac    []byte
}

func (s *Signer) parse(token string) (parsed, error) {
	var p parsed
	if len(token) > 256 {
		return p, ErrInvalid
	}
	f := strings.Split(token, ".")
	if len(f) != 6 || f[0] != version || subtle.ConstantTimeCompare([]byte(f[1]), []byte(s.kid)) != 1 {
		return p, ErrInvalid
	}
	if !safeSegment(f[2]) || (f[3] != "f" && f[3] != "d") {
		return p, ErrInvalid
	}
	exp := f[4]
	if exp == "" || len(exp) > 12 || (exp[0] == '0') {
		return p, ErrInvalid // canonical decimal, far below overflow
	}
	for _, r := range exp {
		if r < '0' || r > '9' {
			return p, ErrInvalid
		}
	}
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return p, ErrInvalid
	}
	// The decoder skips newlines even in strict mode: check the alphabet
	// first, so that one token has one spelling.
	if len(f[5]) != base64.RawURLEncoding.EncodedLen(sha256.Size) || strings.IndexFunc(f[5], notBase64URL) >= 0 {
		return p, ErrInvalid
	}
	mac, err := base64.RawURLEncoding.Strict().DecodeString(f[5])
	if err != nil || len(mac) != sha256.Size {
		return p, ErrInvalid
	}
	return parsed{scope: f[2], folder: f[3] == "d", exp: n, mac: mac}, nil
}

func notBase64URL(r rune) bool {
	return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
}

// Verify checks token for a request of path at now and returns its claims.
// maxLife bounds how far in the future the expiry may lie.
func (s *Signer) Verify(token, path string, now time.Time, maxLife time.Duration) (Claims, error) {
	// No longer a path than Corral accepts anywhere: that bounds the work
	// a forged folder token costs, one MAC per ancestor, at most 256.
	if len(path) > paths.MaxPathBytes {
		return Claims{}, ErrInvalid
	}
	p, err := s.parse(token)
	if err != nil {
		return Claims{}, err
	}
	t := now.Unix()
	if t >= p.exp || p.exp > now.Add(maxLife).Unix() {
		return Claims{}, ErrInvalid
	}
	// The MAC is recomputed over exactly the path requested, or for a
	// folder token over the requested path and each of its ancestors.
	candidates := []string{path}
	if p.folder {
		candidates = ancestors(path)
	}
	for _, c := range candidates {
		if hmac.Equal(s.mac(p.scope, c, kind(p.folder), p.exp), p.mac) {
			return Claims{Scope: p.scope, Path: c, Folder: p.folder, Expires: time.Unix(p.exp, 0).UTC()}, nil
		}
	}
	return Claims{}, ErrInvalid
}

// ancestors returns path and each folder above it, component-wise:
// "a/b/c" → "a/b/c", "a/b", "a", "." (the scope root). At most 257.
func ancestors(path string) []string {
	out := []string{path}
	for i := len(path) - 1; i > 0 && len(out) < 256; i-- {
		if path[i] == '/' {
			out = append(out, path[:i])
		}
	}
	switch {
	case path == "/" || path == "." || len(out) >= 256:
	case strings.HasPrefix(path, "/"):
		out = append(out, "/")
	default:
		out = append(out, ".") // a scope's own root
	}
	return out
}

func safeSegment(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
