package server

import (
	"html/template"
	"net/http"
	"slices"

	"corral/store"
)

// sessionBook is what login and logout need of the owner's browser
// sessions (logins): a one-time login code opens one, signing out ends
// it, and a cookie counts only while its session is valid.
type sessionBook interface {
	sessionChecker
	redeem(code string) (sid string, ok bool)
	end(sid string)
}

// deviceSignOut is what logout needs of the paired devices
// (app/pairing): the phone a cookie names, and its sign out (revoked,
// its connections ended, its cookie cleared).
type deviceSignOut interface {
	deviceFinder
	SignOut(w http.ResponseWriter, r *http.Request, d store.Device)
}

// loginHandler serves GET /login?code=C, which turns a one-time login
// code into the owner's browser session, and POST /logout, which ends
// that session or signs a paired phone out. At logout a cookie counts
// only with its second secret (auth.go): another server on this host can
// be sent the cookie, never the secret.
type loginHandler struct {
	sessions sessionBook
	devices  deviceSignOut
	secrets  secretSigner // login hands the session's secret to the page once
	// hangUp ends the open connections that match (Server.finishConns):
	// a signed-out tab keeps none (a phone's: app/pairing's SignOut).
	hangUp    func(match func(*conn) bool) int
	publicURL string // an Origin of public_url is the server's own too
	// signedIn reports whether the request comes from a browser signed in
	// as the owner (Server.session); nil: never.
	signedIn func(*http.Request) bool
}

func (s *Server) loginHandler() loginHandler {
	return loginHandler{
		sessions: s.logins, devices: s.pair, secrets: s.secretKey, hangUp: s.finishConns,
		publicURL: s.cfg.Server.PublicURL, signedIn: s.session,
	}
}

// ServeHTTP serves the routes the server registers for it: GET /login and
// POST /logout.
func (l loginHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/login":
		l.login(w, r)
	case "/logout":
		l.logout(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (l loginHandler) login(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		// No body, so never the secret: a link checker's HEAD must not
		// spend the owner's one-time link.
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "Open this link in a browser.", http.StatusMethodNotAllowed)
		return
	}
	sid, ok := l.sessions.redeem(r.URL.Query().Get("code"))
	if !ok && l.signedIn != nil && l.signedIn(r) {
		// A used link opened again in a browser that is signed in: the
		// dashboard it was for (the browser keeps a fragment such as
		// #event=ID across the redirect).
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if !ok {
		writePage(w, http.StatusForbidden, page{Title: "Login link used or expired", Body: "This login link was already used or has expired. A link works once, for two minutes: choose Open dashboard in the Corral tray menu for a fresh one, or run “corral open” on this computer."})
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: sid, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(sessionTTL.Seconds()),
	})
	// Not a redirect: the page hands the session's second secret to the
	// dashboard's own origin (login.js keeps it in sessionStorage), then
	// goes on to /, keeping a fragment such as #event=ID.
	uiHeaders(w)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	loginTmpl.Execute(w, l.secrets.secretFor("session", sid))
}

var loginTmpl = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="corral-secret" content="{{.}}">
<title>Corral</title><script type="module" src="/ui/js/login.js"></script></head>
<body><noscript>The Corral dashboard needs JavaScript.</noscript></body></html>
`))

func (l loginHandler) logout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r, l.publicURL) {
		http.Error(w, "Cross-site request refused.", http.StatusForbidden)
		return
	}
	// The Sign out form carries one secret. Unbounded, its parse would
	// read 10 MB for anyone who got the cookie (another server here).
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	creds := credentials{sessions: l.sessions, paired: l.devices, secretSigner: l.secrets}
	if d, ok := creds.signedDevice(r); ok {
		l.devices.SignOut(w, r, d) // app/pairing
		return
	}
	if sid := creds.signedSession(r); sid != "" {
		l.sessions.end(sid)
		// Other tabs signed in with this session lose their connections.
		l.hangUp(func(cn *conn) bool { return cn.session == sid })
	} else if slices.ContainsFunc(cookieValues(r, cookieName), l.sessions.valid) {
		// The cookie alone (another local site's server got it) does
		// not sign the owner out.
		http.Error(w, "Sign out from the dashboard itself.", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
