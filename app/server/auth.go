package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/pairing"
	"corral/core/sandbox"
	"corral/store"
)

// identity resolves bearer keys and session cookies to callers.
type identity struct {
	owner [32]byte // SHA-256 of the owner token
	// dir is the live agents (app/directory).
	dir interface {
		ByKey([32]byte) (sandbox.Caller, bool)
	}
}

// fromBearer returns the caller a bearer token names: the owner, or an
// agent of the live directory (app/directory). Every candidate is compared in
// constant time, so timing tells nothing about which was close.
func (id *identity) fromBearer(token string) (sandbox.Caller, bool) {
	h := sha256.Sum256([]byte(token))
	found, ok := id.dir.ByKey(h)
	if subtle.ConstantTimeCompare(h[:], id.owner[:]) == 1 {
		return ownerCaller, true
	}
	return found, ok
}

var (
	ownerCaller   = sandbox.Caller{Client: "owner", Owner: true}
	browserCaller = sandbox.Caller{Client: "browser", Owner: true} // the owner, signed in to the dashboard
)

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// hosts is the allowlist of Host header names the server answers to: it
// stops DNS-rebinding pages from talking to us under a foreign name. A
// hosts is never changed once made: with returns a new one, which the
// server publishes whole (Server.allowHost), so requests read it without
// a lock while a listener is being added.
type hosts struct {
	names map[string]bool
}

// with is h plus name.
func (h hosts) with(name string) hosts {
	n := make(map[string]bool, len(h.names)+1)
	for k := range h.names {
		n[k] = true
	}
	n[strings.ToLower(name)] = true
	return hosts{names: n}
}

func newHosts(listen, publicURL string) hosts {
	h := hosts{names: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}}
	if host, _, err := net.SplitHostPort(listen); err == nil && host != "" && host != "0.0.0.0" && host != "::" {
		h.names[strings.ToLower(host)] = true
	}
	if u, err := url.Parse(publicURL); err == nil && u.Hostname() != "" {
		h.names[strings.ToLower(u.Hostname())] = true
	}
	return h
}

func (h hosts) allowed(hostHeader string) bool {
	host := hostHeader
	if hh, _, err := net.SplitHostPort(hostHeader); err == nil {
		host = hh
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return host != "" && h.names[strings.ToLower(host)]
}

// sameOrigin reports whether a present Origin header is exactly the
// server's own origin as the request addressed it, or the public URL's.
func sameOrigin(r *http.Request, publicURL string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if origin == "http://"+r.Host || (r.TLS != nil && origin == "https://"+r.Host) {
		return true
	}
	if publicURL != "" {
		if u, err := url.Parse(publicURL); err == nil && origin == u.Scheme+"://"+u.Host {
			return true
		}
	}
	return false
}

// logins holds one-time login codes and the browser sessions they open.
type logins struct {
	mu       sync.Mutex
	now      func() time.Time
	codes    expiries     // one-time code → expiry
	sessions expiries     // SHA-256 of session id → expiry
	keep     SessionStore // nil: sessions live in memory only (sessions.go)
	log      *slog.Logger
}

const (
	loginCodeTTL = 2 * time.Minute
	sessionTTL   = 12 * time.Hour
	cookieName   = "corral_session"
)

func newLogins(now func() time.Time) *logins {
	return &logins{now: now, codes: expiries{}, sessions: expiries{}}
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// newCode returns a fresh one-time login code and its expiry.
func (l *logins) newCode() (string, time.Time) {
	code := randomString(24)
	exp := l.now().Add(loginCodeTTL)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gc()
	l.codes[code] = exp
	return code, exp
}

// redeem spends a code and returns a new session id.
func (l *logins) redeem(code string) (string, bool) {
	l.mu.Lock()
	if !l.codes.spend(code, l.now()) {
		l.mu.Unlock()
		return "", false
	}
	sid := randomString(32)
	h, exp := sessionHash(sid), l.now().Add(sessionTTL)
	l.sessions[string(h[:])] = exp
	keep, log := l.keep, l.log
	l.mu.Unlock()
	// Written through after the lock: every /ws check takes it.
	kept(keep, log, h, exp)
	return sid, true
}

func (l *logins) valid(sid string) bool {
	h := sessionHash(sid)
	l.mu.Lock()
	defer l.mu.Unlock()
	exp, ok := l.sessions[string(h[:])]
	return ok && l.now().Before(exp)
}

func (l *logins) end(sid string) {
	h := sessionHash(sid)
	l.mu.Lock()
	delete(l.sessions, string(h[:]))
	keep, log := l.keep, l.log
	l.mu.Unlock()
	forgotten(keep, log, h)
}

func (l *logins) gc() {
	now := l.now()
	l.codes.prune(now)
	l.sessions.prune(now)
}

// expiries maps one-time codes (or session hashes) to when they stop
// working. Whoever holds one guards it with its own lock.
type expiries map[string]time.Time

// prune forgets what has expired by now.
func (e expiries) prune(now time.Time) {
	for k, exp := range e {
		if !now.Before(exp) {
			delete(e, k)
		}
	}
}

// spend forgets key and reports whether it was there and still valid.
func (e expiries) spend(key string, now time.Time) bool {
	exp, ok := e[key]
	delete(e, key)
	return ok && now.Before(exp)
}

// The second secret. Browsers send a 127.0.0.1 cookie to every port of
// that host (and a LAN address's cookie to every port of that address),
// so any other web server the owner visits there receives corral_session
// or corral_device. The cookie alone therefore opens nothing that acts:
// /ws and POST /logout also need the credential's second secret, an
// HMAC of the cookie's value under a key derived from the owner token.
// It is handed out once, in a response body only the dashboard's own
// origin can read (the one-time /login page, the POST /pair answer), and
// the page keeps it in its own storage (sessionStorage for the owner's
// tab, localStorage for a paired device), which no other origin can read.
// The page sends it as a WebSocket subprotocol "corral.secret.<value>"
// beside "corral" (browsers cannot set other headers on a WebSocket),
// and on HTTP requests as X-Corral-Secret or a form field "secret".
const (
	secretProtocol = "corral.secret."
	secretHeader   = "X-Corral-Secret"
	wsProtocol     = "corral"
)

// secretKey derives each credential's second secret; it is derived from
// the owner token, which is not in the database.
type secretKey [32]byte

// secretSigner makes a credential's second secret (secretKey): login and
// pairing hand it to the page once, and every check compares with it.
type secretSigner interface {
	secretFor(kind, credential string) string
}

// secretFor is the second secret of a credential of the given kind
// ("session" or "device").
func (k secretKey) secretFor(kind, credential string) string {
	m := hmac.New(sha256.New, k[:])
	m.Write([]byte(kind + "\x00" + credential))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// presentedSecrets are the second secrets a request carries, wherever.
func presentedSecrets(r *http.Request) []string {
	var out []string
	for _, p := range websocket.Subprotocols(r) {
		if v, ok := strings.CutPrefix(p, secretProtocol); ok && v != "" {
			out = append(out, v)
		}
	}
	if v := r.Header.Get(secretHeader); v != "" {
		out = append(out, v)
	}
	if r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if v := r.PostFormValue("secret"); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// hasSecret reports whether r carries want among its second secrets,
// compared in constant time.
func hasSecret(r *http.Request, want string) bool {
	found := 0
	for _, v := range presentedSecrets(r) {
		found |= subtle.ConstantTimeCompare([]byte(v), []byte(want))
	}
	return found == 1
}

// cookieValues are the values of every cookie named name that r carries.
// A browser sends all of them whose path matches, the longest path
// first, and any other server on this host (another port) can set one
// with a longer path: the first is not necessarily ours, so every check
// looks at them all.
func cookieValues(r *http.Request, name string) []string {
	var out []string
	for _, c := range r.CookiesNamed(name) {
		if c.Value != "" {
			out = append(out, c.Value)
		}
	}
	return out
}

// sessionChecker is what a credential check needs of the owner's
// browser sessions (logins): whether a session id is one, still valid.
type sessionChecker interface {
	valid(sid string) bool
}

// deviceFinder is what a credential check needs of the paired devices
// (app/pairing): the one a device cookie's token names.
type deviceFinder interface {
	ByToken(ctx context.Context, token string) (store.Device, bool)
}

// credentials checks what a browser presents: the owner's session cookie
// or a paired device's, alone or with its second secret.
type credentials struct {
	sessions sessionChecker
	paired   deviceFinder
	secretSigner
}

// signedSession is the owner's session r carries with its second secret,
// or "".
func (c credentials) signedSession(r *http.Request) string {
	if fromLAN(r) {
		return ""
	}
	for _, v := range cookieValues(r, cookieName) {
		if c.sessions.valid(v) && hasSecret(r, c.secretFor("session", v)) {
			return v
		}
	}
	return ""
}

// signedDevice is the paired device r names with its second secret.
func (c credentials) signedDevice(r *http.Request) (store.Device, bool) {
	for _, v := range cookieValues(r, deviceCookie) {
		if d, ok := c.paired.ByToken(r.Context(), v); ok && hasSecret(r, c.secretFor("device", v)) {
			return d, true
		}
	}
	return store.Device{}, false
}

// device returns the paired device one of a request's device cookies
// names (cookieValues: a cookie set by another server on this host may
// come first).
func (c credentials) device(r *http.Request) (store.Device, bool) {
	for _, v := range cookieValues(r, deviceCookie) {
		if d, ok := c.paired.ByToken(r.Context(), v); ok {
			return d, true
		}
	}
	return store.Device{}, false
}

// signedBrowser is browser with the second secret required: the owner's
// session or a paired device, each only with its own secret.
func (s *Server) signedBrowser(r *http.Request) (caller sandbox.Caller, deviceID string, ok bool) {
	if s.signedSession(r) != "" {
		return browserCaller, "", true
	}
	if d, ok := s.signedDevice(r); ok {
		return pairing.Caller(d), d.ID, true
	}
	return sandbox.Caller{}, "", false
}
