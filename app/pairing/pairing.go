// Package pairing makes the owner's phone on the LAN a paired device of
// Corral, meets paired devices again by their token, and keeps the LAN
// side's TLS certificate (lancert.go).
//
// The computer shows a one-time code (Service.Start: the LAN pairing
// page's link as a QR code, with the certificate's fingerprint); the
// phone opens the page (GET /pair), names itself and posts the code
// (POST /pair), which spends it and answers a device token once, also set
// as the HttpOnly cookie named Cookie. Requests then meet the device by
// that token (Service.ByToken); the owner lists and revokes devices
// (Service.List, Service.Revoke).
//
// Guarantees:
//   - a code pairs once, within five minutes of being made; a wrong, used
//     or expired code pairs nothing, and the page says so before the
//     owner types anything;
//   - POST /pair is limited to 5 tries a minute per remote address and 30
//     overall, whatever their codes; a try over the limit is not looked at,
//     so it spends no code;
//   - a cross-site POST /pair (Config.SameOrigin) is refused before it
//     counts as a try;
//   - every code shown, pairing and revocation is in the audit log
//     (Config.Record) before its answer, and a pairing that could not be
//     audited is undone;
//   - a device's second secret (Config.Secret) is answered once, in the
//     POST /pair body; the token is stored only through Config.Store;
//   - without a store (Config.Store nil) every code is refused, no token
//     names a device and the device list is empty.
//
// Not guaranteed: this package does not decide who may reach /pair or
// what a paired device may call: the server's LAN routing and its method
// table do. A token alone is a device here; the server also asks for its
// second secret where a request acts. A phone that clicks through the
// certificate warning without comparing the fingerprint is as exposed as
// a plain-HTTP one (lancert.go).
package pairing

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"corral/core/errs"
	"corral/core/sandbox"
	"corral/store"
)

// Store is what pairing needs of the store: the paired devices, by their
// token.
type Store interface {
	AddDevice(ctx context.Context, d store.Device, token string) error
	DeviceByToken(ctx context.Context, token string) (store.Device, bool, error)
	TouchDevice(ctx context.Context, id string, t time.Time) error
	Devices(ctx context.Context) ([]store.Device, error)
	RemoveDevice(ctx context.Context, id string) (bool, error)
}

// Cookie is the name of a paired device's cookie; its value is the
// device token.
const Cookie = "corral_device"

const (
	pairCodeTTL    = 5 * time.Minute
	deviceLifetime = 365 * 24 * time.Hour
	pairWindow     = time.Minute
	pairPerIP      = 5  // attempts per IP per window
	pairGlobal     = 30 // attempts overall per window
)

// Config is what a Service is made of. Every func is required unless its
// line says otherwise.
type Config struct {
	Store Store // nil: pairing unavailable, and no token names a device
	Now   func() time.Time
	Log   *slog.Logger
	// Record writes one line of the audit log; an error withholds the
	// answer (and undoes a pairing).
	Record func(ctx context.Context, who, op, target, detail string) error
	// Secret is a credential's second secret ("device", token): POST /pair
	// answers it once.
	Secret func(kind, credential string) string
	// SameOrigin reports whether a request's Origin, when present, is the
	// server's own: POST /pair refuses others.
	SameOrigin func(*http.Request) bool
	// LAN is the LAN side's base URL ("" while it is off) and its
	// certificate's fingerprint ("" before it was made).
	LAN func() (url, fingerprint string)
	// QR encodes a link as a QR code, one string of '1' (dark) and '0' a
	// row (Code.QR).
	QR func(text string) ([]string, error)
	// HangUp ends the open connections of a revoked device.
	HangUp func(deviceID string)
	// Stylesheet is the dashboard's stylesheet, which /pair.css serves
	// with a few rules of its own (asked for once).
	Stylesheet func() string
}

// Service is pairing over a Config. It is safe for concurrent use.
type Service struct {
	cfg     Config
	codes   *codes
	paired  *pairedDevices
	handler pairHandler
}

// New returns the pairing of c.
func New(c Config) *Service {
	s := &Service{cfg: c, codes: newCodes()}
	s.paired = &pairedDevices{Store: c.Store, now: c.Now, seen: map[string]time.Time{}}
	s.handler = pairHandler{
		codes: s.codes, secret: c.Secret, record: c.Record, sameOrigin: c.SameOrigin,
		fingerprint: func() string {
			_, fp := c.LAN()
			return fp
		},
		css: sync.OnceValue(func() string { return c.Stylesheet() + pairExtraCSS }),
		now: c.Now, log: c.Log,
	}
	if c.Store != nil {
		s.handler.devices = c.Store
	}
	return s
}

// codes holds one-time pairing codes and the attempt limits.
type codes struct {
	mu       sync.Mutex
	codes    map[string]time.Time   // one-time code → expiry
	attempts map[string][]time.Time // by remote IP
	all      []time.Time
}

func newCodes() *codes {
	return &codes{codes: map[string]time.Time{}, attempts: map[string][]time.Time{}}
}

// allow records an attempt from ip and reports whether it is within limits.
func (p *codes) allow(ip string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	recent := func(ts []time.Time) []time.Time {
		out := ts[:0]
		for _, t := range ts {
			if now.Sub(t) < pairWindow {
				out = append(out, t)
			}
		}
		return out
	}
	p.all = recent(p.all)
	mine := recent(p.attempts[ip])
	if len(mine) >= pairPerIP || len(p.all) >= pairGlobal {
		p.attempts[ip] = mine
		return false
	}
	p.attempts[ip] = append(mine, now)
	p.all = append(p.all, now)
	if len(p.attempts) > 10000 { // bound the table under a flood of addresses
		for k, v := range p.attempts {
			if len(recent(v)) == 0 {
				delete(p.attempts, k)
			}
		}
	}
	return true
}

func (p *codes) newCode(now time.Time) (string, time.Time) {
	code := randomString(12)
	exp := now.Add(pairCodeTTL)
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, e := range p.codes { // forget what has expired
		if !now.Before(e) {
			delete(p.codes, k)
		}
	}
	p.codes[code] = exp
	return code, exp
}

// usable reports, without spending it, whether a code would pair now:
// the pairing page says up front when it would not. Codes are 96 random
// bits, so this answers no guess that POST /pair's limits would not.
func (p *codes) usable(code string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	exp, ok := p.codes[code]
	return ok && now.Before(exp)
}

// spend uses a code once: it is forgotten, and reported whether it was
// there and still valid.
func (p *codes) spend(code string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	exp, ok := p.codes[code]
	delete(p.codes, code)
	return ok && now.Before(exp)
}

// NewCode makes a one-time code as Start does, without the audit event
// and without the LAN: for tests that pair through the loopback side.
func (s *Service) NewCode(now time.Time) (string, time.Time) {
	return s.codes.newCode(now)
}

// ServeHTTP serves the routes the server registers for pairing: GET and
// POST /pair, GET /pair.js and /pair.css (page.go).
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// pairedDevices are the store's paired devices as requests meet them:
// by the token of a device cookie. Each one seen is noted in the store
// at most once a minute.
type pairedDevices struct {
	Store // nil: pairing unavailable, and no token names a device
	now   func() time.Time

	mu   sync.Mutex
	seen map[string]time.Time // device id → last TouchDevice written
}

// ByToken returns the paired device a device token names, and notes (at
// most once a minute) that it was seen.
func (s *Service) ByToken(ctx context.Context, token string) (store.Device, bool) {
	return s.paired.byToken(ctx, token)
}

func (p *pairedDevices) byToken(ctx context.Context, token string) (store.Device, bool) {
	if p.Store == nil || token == "" || len(token) > 128 {
		return store.Device{}, false
	}
	d, ok, err := p.DeviceByToken(ctx, token)
	if err != nil || !ok {
		return store.Device{}, false
	}
	now := p.now()
	p.mu.Lock()
	stale := now.Sub(p.seen[d.ID]) > time.Minute
	if stale {
		p.seen[d.ID] = now
	}
	p.mu.Unlock()
	if stale {
		p.TouchDevice(context.WithoutCancel(ctx), d.ID, now)
	}
	return d, true
}

// Caller is who a paired device is to the sandbox and the audit log:
// "device:<name>", acting as the owner.
func Caller(d store.Device) sandbox.Caller {
	return sandbox.Caller{Client: "device:" + d.Name, Owner: true}
}

// List is the paired devices (device.list); empty without a store.
func (s *Service) List(ctx context.Context) ([]store.Device, error) {
	if s.cfg.Store == nil {
		return []store.Device{}, nil
	}
	return s.cfg.Store.Devices(ctx)
}

// Revoke forgets the device id (device.revoke by the owner by): its token
// names nothing from now on, its connections end (Config.HangUp), and the
// revocation is audited. An unknown id is an *errs.Error of kind
// not_found.
func (s *Service) Revoke(ctx context.Context, by, id string) error {
	if s.cfg.Store == nil {
		return errs.New(errs.NotFound, "", "There is no device %q.", id)
	}
	ok, err := s.cfg.Store.RemoveDevice(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return errs.New(errs.NotFound, "", "There is no device %q.", id)
	}
	s.cfg.HangUp(id) // a revoked device's connections end
	return s.cfg.Record(ctx, by, "device.revoke", id, "")
}

// SignOut answers POST /logout from the paired device d, which the
// server found by its cookie with its second secret: the device is
// revoked (as Devices → Revoke on the computer would; an audit failure is
// logged, the phone is signed out all the same), its connections end,
// its cookie is cleared, and the phone is sent to the pairing page.
func (s *Service) SignOut(w http.ResponseWriter, r *http.Request, d store.Device) {
	if s.cfg.Store == nil { // no device without a store: nothing to forget
		http.Error(w, "Corral could not sign this phone out; try again.", http.StatusInternalServerError)
		return
	}
	if _, err := s.cfg.Store.RemoveDevice(r.Context(), d.ID); err != nil {
		s.cfg.Log.Error("device sign out", "err", err)
		http.Error(w, "Corral could not sign this phone out; try again.", http.StatusInternalServerError)
		return
	}
	s.cfg.HangUp(d.ID)
	if err := s.cfg.Record(r.Context(), Caller(d).Client, "device.revoke", d.ID, "signed out on the device"); err != nil {
		s.cfg.Log.Error("device sign out: audit", "err", err)
	}
	http.SetCookie(w, &http.Cookie{Name: Cookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: -1})
	http.Redirect(w, r, "/pair", http.StatusSeeOther)
}

// LANAddress is the first non-loopback IPv4 address of this machine.
//
// $CORRAL_LAN_ADDRESS, when set, names it instead (an IPv4 or IPv6
// address of this machine): for a computer with several networks, and for
// tests, which give a loopback one such as 127.0.0.2 so that no traffic
// leaves the machine.
func LANAddress() (net.IP, error) {
	if v := os.Getenv("CORRAL_LAN_ADDRESS"); v != "" {
		ip := net.ParseIP(v)
		if ip == nil {
			return nil, fmt.Errorf("CORRAL_LAN_ADDRESS %q is not an IP address", v)
		}
		return ip, nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil && !ipn.IP.IsLinkLocalUnicast() {
			return ipn.IP, nil
		}
	}
	return nil, errors.New("no LAN address: this computer has no non-loopback IPv4 address")
}

// randomString is n random bytes, base64url without padding.
func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}
