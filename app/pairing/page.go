package pairing

import (
	"context"
	"encoding/json"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"corral/store"
)

// pairCodes is what the pairing page needs of the one-time codes (codes):
// the computer shows a code (Service.Start), the phone spends it here once,
// and attempts are limited so that codes cannot be guessed.
type pairCodes interface {
	usable(code string, now time.Time) bool
	allow(ip string, now time.Time) bool
	spend(code string, now time.Time) bool
}

// deviceAdder is what the pairing page needs of the store (Store): keeping the
// new phone, and taking it back when its pairing could not be audited.
type deviceAdder interface {
	AddDevice(ctx context.Context, d store.Device, token string) error
	RemoveDevice(ctx context.Context, id string) (bool, error)
}

// pairHandler serves the pairing page a phone opens from the QR code
// (GET /pair?code=C, its /pair.js and /pair.css) and POST /pair, which
// spends the code and makes the phone a paired device.
type pairHandler struct {
	codes pairCodes
	// devices is nil without a database: every code is refused.
	devices deviceAdder
	// secret is a credential's second secret: the new device's is
	// answered once.
	secret func(kind, credential string) string
	// record writes the audit log: every pairing is in it, or undone.
	record func(ctx context.Context, who, op, target, detail string) error
	// fingerprint is the LAN certificate's, once it was made: the page
	// asks the owner to compare it with the computer's.
	fingerprint func() string
	sameOrigin  func(*http.Request) bool // POST /pair from another site is refused
	css         func() string            // /pair.css
	now         func() time.Time
	log         *slog.Logger
}

// ServeHTTP serves the routes the server registers for pairing: GET and
// POST /pair, GET /pair.js and /pair.css.
func (p pairHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/pair.js":
		static(w, "text/javascript; charset=utf-8", "no-store", pairJS)
	case "/pair.css":
		static(w, "text/css; charset=utf-8", "no-cache", p.css())
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
	if !p.sameOrigin(r) {
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
	if err := p.record(r.Context(), Caller(d).Client, "device.pair", d.ID, "from "+r.RemoteAddr+"; "+r.UserAgent()); err != nil {
		p.devices.RemoveDevice(context.WithoutCancel(r.Context()), d.ID) // unaudited devices do not stay
		http.Error(w, "Corral could not write its audit log; the device was not paired.", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: Cookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(deviceLifetime.Seconds())})
	w.Header().Set("Content-Type", "application/json")
	// The secret goes with the cookie on /ws (app/server's auth.go); pair.js keeps it
	// in this origin's localStorage.
	json.NewEncoder(w).Encode(map[string]string{"id": d.ID, "name": d.Name, "token": token, "secret": p.secret("device", token)})
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

// pairExtraCSS is added to the dashboard's own stylesheet (Config.Stylesheet)
// for /pair.css, which styles the pages outside the dashboard (pairing, a
// used login link, errors) with the dashboard's palette, type and buttons,
// and the pairing form. It is served to the LAN before pairing: the
// stylesheet holds no secrets. (Its first line names the file it came
// from before app/pairing: kept, so /pair.css stays byte for byte.)
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
