package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/boombuler/barcode/qr"

	"corral/app/rpc"
	"corral/core/errs"
	"corral/core/sandbox"
	"corral/store"
)

// Devices is what pairing needs of the store.
type Devices interface {
	AddDevice(ctx context.Context, d store.Device, token string) error
	DeviceByToken(ctx context.Context, token string) (store.Device, bool, error)
	TouchDevice(ctx context.Context, id string, t time.Time) error
	Devices(ctx context.Context) ([]store.Device, error)
	RemoveDevice(ctx context.Context, id string) (bool, error)
}

const (
	pairCodeTTL    = 5 * time.Minute
	deviceCookie   = "corral_device"
	deviceLifetime = 365 * 24 * time.Hour
	pairWindow     = time.Minute
	pairPerIP      = 5  // attempts per IP per window
	pairGlobal     = 30 // attempts overall per window
)

// deviceMethods are what a paired device may call: the owner's approval
// and file-browsing abilities, and reading the log — nothing more.
var deviceMethods = map[string]bool{
	"session.info": true, "approval.list": true, "approval.respond": true, "approval.subscribe": true,
	"folder.list": true, "file.stat": true, "link.create": true, "agents.pause": true, "agents.resume": true,
	"audit.query": true, "audit.stats": true, "audit.subscribe": true, "rule.list": true, "client.list": true,
	// Withdrawing a link only narrows what is shared, like a pause.
	"links.list": true, "link.revoke": true,
	// The phone may see the owner's settings, not change them.
	"settings.get": true,
}

// pairing holds one-time pairing codes and the attempt limits.
type pairing struct {
	mu       sync.Mutex
	codes    expiries
	attempts map[string][]time.Time // by remote IP
	all      []time.Time
}

func newPairing() *pairing {
	return &pairing{codes: expiries{}, attempts: map[string][]time.Time{}}
}

// allow records an attempt from ip and reports whether it is within limits.
func (p *pairing) allow(ip string, now time.Time) bool {
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

func (p *pairing) newCode(now time.Time) (string, time.Time) {
	code := randomString(12)
	exp := now.Add(pairCodeTTL)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.codes.prune(now)
	p.codes[code] = exp
	return code, exp
}

// usable reports, without spending it, whether a code would pair now:
// the pairing page says up front when it would not. Codes are 96 random
// bits, so this answers no guess that POST /pair's limits would not.
func (p *pairing) usable(code string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	exp, ok := p.codes[code]
	return ok && now.Before(exp)
}

// spend uses a code once.
func (p *pairing) spend(code string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.codes.spend(code, now)
}

// lanAddr is the first non-loopback IPv4 address of this machine.
//
// $CORRAL_LAN_ADDRESS, when set, names it instead (an IPv4 or IPv6
// address of this machine): for a computer with several networks, and for
// tests, which give a loopback one such as 127.0.0.2 so that no traffic
// leaves the machine.
func lanAddr() (net.IP, error) {
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

// ListenLAN opens a second listener on the LAN address with the same port
// as the loopback one ([server] lan = true). It serves HTTPS with the
// certificate of lancert.go; the loopback side stays plain HTTP.
func (s *Server) ListenLAN() (net.Listener, error) {
	ip, err := s.lanIP()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	cert, err := lanCert(s.lanCertFile, []net.IP{ip}, host, s.now())
	if err != nil {
		return nil, fmt.Errorf("the LAN certificate: %w", err)
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
	s.lanFP = fingerprint(cert)
	s.lanLn = ln
	s.allowHost(ip.String())
	s.mu.Unlock()
	s.lanOn.Store(true)
	return tls.NewListener(lanListener{ln}, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), nil
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

// pairedDevices are the store's paired devices as requests meet them:
// by the token of a device cookie. Each one seen is noted in the store
// at most once a minute.
type pairedDevices struct {
	Devices // nil: pairing unavailable, and no token names a device
	now     func() time.Time

	mu   sync.Mutex
	seen map[string]time.Time // device id → last TouchDevice written
}

// byToken returns the paired device a device token names, and notes (at
// most once a minute) that it was seen.
func (p *pairedDevices) byToken(ctx context.Context, token string) (store.Device, bool) {
	if p.Devices == nil || token == "" || len(token) > 128 {
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

func deviceCaller(d store.Device) sandbox.Caller {
	return sandbox.Caller{Client: "device:" + d.Name, Owner: true}
}

// qrRows encodes text as a QR code, one string of '1' (dark) and '0' per
// row, so any surface can draw it.
func qrRows(text string) ([]string, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return nil, err
	}
	b := code.Bounds()
	rows := make([]string, 0, b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		var sb strings.Builder
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, _, _, _ := code.At(x, y).RGBA(); r == 0 {
				sb.WriteByte('1')
			} else {
				sb.WriteByte('0')
			}
		}
		rows = append(rows, sb.String())
	}
	return rows, nil
}

// deviceBook is what the device methods use of the store (Devices): the
// paired devices, to list and to forget.
type deviceBook interface {
	Devices(ctx context.Context) ([]store.Device, error)
	RemoveDevice(ctx context.Context, id string) (bool, error)
}

// deviceArea answers pairing.start, device.list and device.revoke.
type deviceArea struct {
	book   deviceBook                                             // nil without a database
	start  func(ctx context.Context, by string) (PairCode, error) // Server.StartPairing
	hangUp func(deviceID string)                                  // ends a revoked device's connections
	record recordFunc
}

func (s *Server) deviceArea() deviceArea {
	return deviceArea{
		book:   s.devices, // a nil Devices stays nil
		start:  s.StartPairing,
		hangUp: func(id string) { s.finishConns(func(c *conn) bool { return c.deviceID == id }) },
		record: s.record,
	}
}

func (d deviceArea) methods(add func(name string, m method)) {
	add("pairing.start", method{owner: true, fn: d.pairingStart})
	add("device.list", method{owner: true, fn: d.list})
	add("device.revoke", method{owner: true, fn: d.revoke})
}

func (d deviceArea) pairingStart(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	p, err := d.start(ctx, c.caller.Client)
	if err != nil {
		return nil, err
	}
	return pairingResult{URL: p.URL, Code: p.Code, ExpiresAt: p.Expires.UTC().Format(time.RFC3339), QR: p.QR, Fingerprint: p.Fingerprint}, nil
}

func (d deviceArea) list(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	if d.book == nil {
		return devicesResult{Devices: []store.Device{}}, nil
	}
	list, err := d.book.Devices(ctx)
	if err != nil {
		return nil, err
	}
	return devicesResult{Devices: list}, nil
}

func (d deviceArea) revoke(ctx context.Context, c *call) (any, error) {
	var a struct {
		ID string `json:"id" rpc:"required"`
	}
	if err := rpc.DecodeParams(c.params, &a); err != nil {
		return nil, err
	}
	if d.book == nil {
		return nil, errs.New(errs.NotFound, "", "There is no device %q.", a.ID)
	}
	ok, err := d.book.RemoveDevice(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.New(errs.NotFound, "", "There is no device %q.", a.ID)
	}
	d.hangUp(a.ID) // a revoked device's connections end
	if err := d.record(ctx, c.caller.Client, "device.revoke", a.ID, ""); err != nil {
		return nil, err
	}
	return idResult{ID: a.ID}, nil
}

// pairCodes is what pairing needs of the one-time codes (pairing): the
// computer shows a code (StartPairing), the phone spends it here once,
// and attempts are limited so that codes cannot be guessed.
type pairCodes interface {
	usable(code string, now time.Time) bool
	allow(ip string, now time.Time) bool
	spend(code string, now time.Time) bool
}

// deviceAdder is what pairing needs of the store (Devices): keeping the
// new phone, and taking it back when its pairing could not be audited.
type deviceAdder interface {
	AddDevice(ctx context.Context, d store.Device, token string) error
	RemoveDevice(ctx context.Context, id string) (bool, error)
}

// pairHandler serves the pairing page a phone opens from the QR code
// (GET /pair?code=C, its /pair.js and /pair.css) and POST /pair, which
// spends the code and makes the phone a paired device.
type pairHandler struct {
	codes   pairCodes
	devices deviceAdder  // nil without a database: every code is refused
	secrets secretSigner // the new device's second secret, answered once
	record  recordFunc   // every pairing is in the audit log, or undone
	// fingerprint is the LAN certificate's, once ListenLAN has made it:
	// the page asks the owner to compare it with the computer's.
	fingerprint func() string
	publicURL   string // an Origin of public_url is the server's own too
	now         func() time.Time
	log         *slog.Logger
}

func (s *Server) pairHandler() pairHandler {
	return pairHandler{
		codes: s.pair, devices: s.devices, secrets: s.secretKey, record: s.record,
		fingerprint: func() string {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.lanFP
		},
		publicURL: s.cfg.Server.PublicURL, now: s.now, log: s.log,
	}
}

// ServeHTTP serves the routes the server registers for pairing: GET and
// POST /pair, GET /pair.js and /pair.css.
func (p pairHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/pair.js":
		static(w, "text/javascript; charset=utf-8", "no-store", pairJS)
	case "/pair.css":
		static(w, "text/css; charset=utf-8", "no-cache", pairCSS())
	case "/pair":
		if r.Method == http.MethodPost {
			p.post(w, r)
		} else {
			p.page(w, r)
		}
	default:
		http.NotFound(w, r)
	}
}

// static answers a fixed text of the given type.
func static(w http.ResponseWriter, contentType, cacheControl, text string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", cacheControl)
	w.Write([]byte(text))
}

// page serves GET /pair?code=C: a page where the phone names itself, or,
// when the code was already used or has expired, a page that says so
// before the owner types anything.
func (p pairHandler) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// With no-referrer, Chromium sends "Origin: null" on the page's own
	// POST, which /pair rightly refuses.
	w.Header().Set("Referrer-Policy", "same-origin")
	code := r.URL.Query().Get("code")
	usable := p.devices != nil && p.codes.usable(code, p.now())
	pairTmpl.Execute(w, struct {
		Code, Fingerprint string
		Usable            bool
	}{code, p.fingerprint(), usable})
}

// post serves POST /pair {code, name}: it spends the code and answers the
// device token once (also set as an HttpOnly cookie).
func (p pairHandler) post(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !sameOrigin(r, p.publicURL) {
		http.Error(w, "Cross-site request refused.", http.StatusForbidden)
		return
	}
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	if !p.codes.allow(ip, p.now()) {
		w.Header().Set("Retry-After", strconv.Itoa(int(pairWindow.Seconds())))
		http.Error(w, "Too many pairing attempts; wait a minute and try again.", http.StatusTooManyRequests)
		return
	}
	var in struct {
		Code string `json:"code"`
		Name string `json:"name"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&in); err != nil {
		http.Error(w, "Send {\"code\": …, \"name\": …} as JSON.", http.StatusBadRequest)
		return
	}
	name := strings.TrimSpace(in.Name)
	if name == "" || utf8.RuneCountInString(name) > 40 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		http.Error(w, "Give the device a name of 1 to 40 characters.", http.StatusBadRequest)
		return
	}
	if p.devices == nil || !p.codes.spend(in.Code, p.now()) {
		http.Error(w, "This pairing code was already used or has expired. Start pairing again on the computer.", http.StatusForbidden)
		return
	}
	token := randomString(32)
	now := p.now().UTC()
	d := store.Device{ID: "dv_" + randomString(9), Name: name, Paired: now, LastSeen: now}
	if err := p.devices.AddDevice(r.Context(), d, token); err != nil {
		p.log.Error("pair", "err", err)
		http.Error(w, "Corral could not save the device.", http.StatusInternalServerError)
		return
	}
	p.log.Info("device paired", "device", d.Name, "id", d.ID, "remote", r.RemoteAddr)
	if err := p.record(r.Context(), "device:"+d.Name, "device.pair", d.ID, "from "+r.RemoteAddr+"; "+r.UserAgent()); err != nil {
		p.devices.RemoveDevice(context.WithoutCancel(r.Context()), d.ID) // unaudited devices do not stay
		http.Error(w, "Corral could not write its audit log; the device was not paired.", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: deviceCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(deviceLifetime.Seconds())})
	w.Header().Set("Content-Type", "application/json")
	// The secret goes with the cookie on /ws (auth.go); pair.js keeps it
	// in this origin's localStorage.
	json.NewEncoder(w).Encode(map[string]string{"id": d.ID, "name": d.Name, "token": token, "secret": p.secrets.secretFor("device", token)})
}

// pairTmpl's fingerprint may break only after a colon (<wbr>), never in
// the middle of a byte ("C8:C" / "1:21" on a phone).
var pairTmpl = template.Must(template.New("pair").Funcs(template.FuncMap{"split": strings.Split}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>Pair with Corral</title><link rel="icon" href="/app-icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/pair.css"><script type="module" src="/pair.js"></script></head>
<body class="signed-out"><main class="signed-out-card">
{{if .Usable}}<h1><img src="/app-icon.svg" alt="" width="32" height="32"> Pair this phone with Corral</h1>
<p class="muted">Give this phone a name so you can recognise it in Corral's device list. Then it can answer your agents' requests.</p>
{{if .Fingerprint}}<div class="note"><p>Before you pair: your browser warned about this page's certificate. Open the certificate details (the icon left of the address) and check that its SHA-256 fingerprint is the one on the computer's pairing screen:</p>
<p><code id="fingerprint">{{range $i, $b := split .Fingerprint ":"}}{{if $i}}:<wbr>{{end}}{{$b}}{{end}}</code></p></div>{{end}}
<form id="pair"><input type="hidden" name="code" value="{{.Code}}">
<label for="name">Phone name</label>
<input id="name" name="name" maxlength="40" required autocomplete="off" placeholder="My phone">
<button type="submit" class="btn primary">Pair</button></form>
<p id="status" role="status"></p>
{{else if not .Code}}<h1><img src="/app-icon.svg" alt="" width="32" height="32"> This phone is not paired with Corral</h1>
<p id="not-paired">To answer your agents' requests from here, pair it again.</p>
<p>On the computer, open Corral's dashboard, choose <strong>Devices → Pair a phone</strong>, and scan the code.</p>
{{else}}<h1><img src="/app-icon.svg" alt="" width="32" height="32"> This pairing code no longer works</h1>
<p id="code-gone" class="note warn">It was already used or has expired (a code works once, for a few minutes).</p>
<p>On the computer, open Corral's dashboard, choose <strong>Devices → Pair a phone</strong>, and scan the new code.</p>
{{end}}</main></body></html>
`))

const pairJS = `const form = document.getElementById('pair');
const status = document.getElementById('status');
form?.addEventListener('submit', async (e) => {
  e.preventDefault();
  status.textContent = 'Pairing…';
  const body = JSON.stringify({ code: form.code.value, name: form.name.value });
  const res = await fetch('/pair', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  if (res.ok) {
    const { secret } = await res.json();
    localStorage.setItem('corral.device', secret); // sent with the cookie (this origin only)
    status.textContent = 'Paired. Opening your approvals…';
    location.href = '/#approvals';
  }
  else { status.textContent = await res.text(); }
});
`

// pairCSS styles the pages outside the dashboard (pairing, a used login
// link, errors) with the dashboard's own stylesheet — its palette, type
// and buttons — and a few rules for the pairing form. It is served to the
// LAN before pairing: the stylesheet holds no secrets.
var pairCSS = sync.OnceValue(func() string {
	return string(uiAssets().files["app.css"].body) + pairExtraCSS
})

const pairExtraCSS = `
/* ---------- pages outside the dashboard (app/server pairing.go) ---------- */
.signed-out-card { width: 100%; }
.signed-out-card p { margin: 0; }
.signed-out-card form { display: grid; gap: .5rem; }
.signed-out-card label { font-weight: 600; }
.signed-out-card form .btn { min-height: 48px; margin-top: .5rem; }
.signed-out-card .note { background: var(--warn-soft); color: var(--warn-ink); border-radius: var(--radius-sm); padding: .75rem; display: grid; gap: .5rem; }
.signed-out-card code { word-break: break-all; font-family: var(--mono); }
.signed-out-card #fingerprint { word-break: normal; overflow-wrap: normal; } /* breaks at its <wbr>, after a colon */
.signed-out-card .muted { color: var(--muted); }
#status:empty { display: none; }
`
