// Package server is Corral's HTTP side: /healthz, the WebSocket JSON-RPC
// endpoint /ws, /mcp, /files/out, pairing, login and logout, the
// dashboard, and the method table that maps JSON-RPC calls onto core's
// sandbox facade.
//
// The methods come in areas (files, commands, approvals, rules, audit
// and its summary, links, devices, session, agents and people, connect,
// config, settings) and the routes in
// small handlers (share.FilesOut, app/pairing's, loginHandler), each
// depending only on a narrow interface of what it uses, so each can be
// tested against a fake (areas_test.go, pairlogin_test.go); the
// transport is app/wsrpc's. The method table checks, for every
// transport, that the method exists, that the caller may call it (owner
// only, a paired device's short list) and the agent's current settings.
//
// Every route checks the Host header against an allowlist; /ws also checks
// that a present Origin is the server's own, and authenticates with a
// bearer key or the owner's session cookie before upgrading. No input
// closes the server; a panic in a handler is logged and answered as io.
//
// The server builds none of Corral's parts: New takes them, wired by
// app/wiring, through Config (the way Tailscale's localapi takes a
// HandlerConfig); the daemon and this package's tests both build them
// with wiring.Build, so what the tests exercise is the wiring that runs.
// The owner's settings and config reload are app/settings', over hooks
// the server provides (settingsarea.go). MCP over HTTP and WebSocket is
// app/mcpserve's: the server checks the origin, the key and the agent's
// connection places, and hands it the key's caller and the method
// table's typed entry (mcpserve.go).
//
// Size: about 3,250 lines of non-test code, above the house's 2,500
// (TestHouse in app/daemon). What is left is what every route and transport shares (the
// Host allowlist and guard, keys, cookies and second secrets, the method
// table with its rows, the /ws connection, the LAN listener), which a
// package of its own would take back through an interface about as large.
package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"corral/app/config"
	"corral/app/directory"
	"corral/app/mcpserve"
	"corral/app/pairing"
	"corral/app/settings"
	"corral/app/share"
	"corral/core/applypatch"
	"corral/core/audit"
	"corral/core/commands"
	"corral/core/documents"
	"corral/core/errs"
	"corral/core/links"
	"corral/core/sandbox"
	"corral/core/undo"
)

// AuditLog is what the server needs of the store: recording the owner's
// own actions, reading and following the audit log.
type AuditLog interface {
	audit.Sink
	audit.Reader
	audit.Subscriber
}

// record audits an action the server performs itself (logins, pairing,
// devices); the answer waits for it like every other.
func (s *Server) record(ctx context.Context, who, op, target, detail string) error {
	_, err := s.audit.Record(context.WithoutCancel(ctx), audit.Event{
		Time: s.now().UTC(), Client: who, Op: op, Target: target, Detail: detail,
		Decision: audit.Allow, DecidedBy: audit.ByOwner,
	})
	if err != nil {
		s.log.Error("audit record failed", "op", op, "err", err)
		return errs.Wrap(err, errs.IO, "", "Corral could not write its audit log, so it withholds the result of this action.")
	}
	return nil
}

// Config is what New builds a server from: the config Corral started
// with and its parts, wired outside the server (app/wiring). The sandbox
// facade, links and undo are core's services, as Tailscale's
// HandlerConfig passes its backend: each area of the method table takes
// of them only the narrow interface it uses (methods.go).
type Config struct {
	Config *config.Config
	// Files are where Corral's own files are: settings.set checks a new
	// config.toml's roots against them as start-up does; zero: unchecked.
	Files      config.Files
	Sandbox    *sandbox.Sandbox
	Links      *links.Service      // links over Sandbox (link.create, /files/out)
	Undo       *undo.Service       // the owner's undo and versions over Sandbox
	Commands   *commands.Service   // agents' commands over Sandbox
	Patches    *applypatch.Service // file.apply_patch over Sandbox
	Documents  *documents.Service  // file.document_read over Sandbox
	Audit      AuditLog
	OwnerToken string
	Logger     *slog.Logger
	Clock      func() time.Time  // nil: time.Now
	OnPause    func(paused bool) // optional: told when agents are paused or resumed
	// RotateLinks replaces the link-signing key (links.rotate); by names
	// who asked, for the audit log.
	RotateLinks func(ctx context.Context, by string) error
	Version     string  // reported to MCP clients
	Devices     Devices // paired devices; nil: pairing unavailable
	// Sessions keeps the owner's browser logins across restarts
	// (sessions.go); nil: a restart signs every browser out.
	Sessions SessionStore
	// LANCertFile is where the LAN side's certificate is kept (made on
	// first use, mode 0600); "" makes one in memory for each start.
	LANCertFile string
	// Agents keeps the agents and people the owner adds at runtime
	// (app/directory); nil: only those of config.toml, and none can be added.
	Agents AgentStore
	// Home is the owner's home folder, where agent apps keep their
	// config files (connect.go); "": connect can show but not write.
	Home string
	// CorralCommand is the corral program agent apps start for MCP
	// ("corral mcp"); "": the daemon's own executable.
	CorralCommand string
}

// Server serves Corral's HTTP routes.
type Server struct {
	cfg   *config.Config
	box   *sandbox.Sandbox
	links *links.Service
	undo  *undo.Service
	cmds  *commands.Service
	// patches and docs answer file.apply_patch and file.document_read.
	patches *applypatch.Service
	docs    *documents.Service
	audit   AuditLog
	log     *slog.Logger
	now     func() time.Time
	id      identity
	// secretKey derives each browser credential's second secret (auth.go).
	secretKey secretKey
	hosts     atomic.Pointer[hosts] // replaced whole, never written in place (allowHost)
	logins    *logins
	methods   map[string]method
	http      *http.Server
	onPause   func(bool)
	rotate    func(context.Context, string) error
	version   string
	pair      *pairing.Service
	lanURL    string       // set by ListenLAN
	lanFP     string       // the LAN certificate's SHA-256 fingerprint, set by ListenLAN
	lanLn     net.Listener // the LAN listener while it is open (ListenLAN, StopLAN)
	lanOn     atomic.Bool  // the LAN listener is open: paired devices are served
	// lanCertFile keeps the LAN certificate ("": made in memory);
	// lanIP picks the LAN address (tests pick a loopback one).
	lanCertFile string
	lanIP       func() (net.IP, error)

	dir           *directory.Directory // live agents and people (directory.go)
	ownerHome     string
	corralCommand string
	settings      *settings.Settings // the owner's settings and config reload (settingsarea.go)
	lanMu         sync.Mutex         // one StartLAN or StopLAN at a time
	mcp           *mcpserve.Handler  // MCP over HTTP and WebSocket (mcpserve.go)
	calls         *callLimiter       // each agent's rate of calls (limiter.go)

	credentials // checks a browser's cookies and their second secrets (auth.go)

	mu    sync.Mutex
	conns map[*conn]struct{}
	// agentConns counts each agent's /ws connections, open or opening.
	agentConns map[string]int
	agentCalls map[string]agentShare // what each agent's /ws connections share (shareOf)
	closed     bool
	addr       string // the address actually listened on
}

// New builds a server from its parts. The caller then loads the agents
// and people of the store (LoadAgents) before it serves.
func New(o Config) *Server {
	s := &Server{
		cfg:     o.Config,
		box:     o.Sandbox,
		links:   o.Links,
		undo:    o.Undo,
		cmds:    o.Commands,
		patches: o.Patches,
		docs:    o.Documents,
		audit:   o.Audit,
		log:     o.Logger,
		now:     o.Clock,
		conns:   map[*conn]struct{}{},
		onPause: o.OnPause,
		rotate:  o.RotateLinks,
		version: o.Version,

		lanCertFile: o.LANCertFile,
		lanIP:       pairing.LANAddress,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.logins = newLogins(s.now)
	s.calls = newCallLimiter(s.now, o.Config.Audit.AgentCallsPerSecond, o.Config.Audit.AgentCallBurst, s.recordRefusals)
	if o.Sessions != nil {
		s.logins.keepSessions(context.Background(), o.Sessions, s.log)
	}
	s.id.owner = sha256.Sum256([]byte(o.OwnerToken))
	s.secretKey = sha256.Sum256([]byte("corral second secret\x00" + o.OwnerToken))
	s.pair = s.newPairing(o.Devices)
	s.credentials = credentials{sessions: s.logins, paired: s.pair, secretSigner: s.secretKey}
	s.dir = newDirectory(s, o)
	s.id.dir = s.dir
	s.ownerHome, s.corralCommand = o.Home, o.CorralCommand
	h := newHosts(o.Config.Server.Listen, o.Config.Server.PublicURL)
	s.hosts.Store(&h)
	s.settings = s.newSettings(o)
	if o.Sandbox != nil {
		if pol := o.Sandbox.Policy(); pol != nil {
			pol.SetLevelOf(s.dir.LevelOf) // every question carries its agent's trust level
		}
	}
	if o.Commands != nil {
		o.Commands.SetAgents(s.dir.Current) // a waiting command starts only if its agent still may run it
	}
	s.methods = s.methodTable()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /ws", s.serveWS)
	login, pair := s.loginHandler(), s.pair
	mux.Handle("GET /login", login)
	mux.Handle("GET /files/out", share.FilesOut{Box: s.links, Log: s.log, QR: qrSVG})
	mux.Handle("/mcp", s.mcpHandler())
	mux.Handle("GET /pair", pair)
	mux.Handle("GET /pair.js", pair)
	mux.Handle("GET /pair.css", pair)
	for p := range webAppFiles {
		mux.HandleFunc("GET "+p, s.webAppFile)
	}
	mux.HandleFunc("GET /app-icon.png", s.appIcon)
	mux.HandleFunc("GET /qr.svg", s.qrImage) // the QR code of a link (qr.go)
	mux.Handle("POST /pair", pair)
	mux.Handle("POST /logout", login)
	s.registerUI(mux) // the dashboard: / and /ui/ (web.go)
	s.http = &http.Server{
		Handler:           s.guard(mux),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute, // a slow body (POST /pair, /mcp) cannot hold a connection; /ws sets its own deadlines after the upgrade
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		ConnContext:       markLAN, // the LAN listener's requests are the LAN's
	}
	return s
}

// guard applies the checks every route shares: the Host allowlist and
// security headers, and a recover so a panic never takes the server down.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", "path", r.URL.Path, "err", fmt.Sprint(v))
				http.Error(w, "Internal error.", http.StatusInternalServerError)
			}
		}()
		if !s.hosts.Load().allowed(r.Host) {
			http.Error(w, "This server does not answer to that host name.", http.StatusForbidden)
			return
		}
		if fromLAN(r) {
			open, deviceOnly := lanRoute(r)
			if !s.lanOn.Load() && lanListened(r) {
				// The LAN was turned off: a connection left open by a
				// phone gets nothing more.
				w.Header().Set("Connection", "close")
				http.Error(w, "Corral no longer listens on the LAN.", http.StatusServiceUnavailable)
				return
			}
			if !open && !(deviceOnly && s.lanOn.Load() && s.hasDevice(r)) {
				w.Header().Set("WWW-Authenticate", `Cookie realm="corral"`)
				http.Error(w, "Pair this device with Corral first.", http.StatusUnauthorized)
				return
			}
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// Listen opens the listening socket on addr (the config's listen address
// when empty).
func (s *Server) Listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = s.cfg.Server.Listen
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.addr = ln.Addr().String()
	// The listening host is a name we answer to, too.
	if host, _, err := net.SplitHostPort(s.addr); err == nil {
		s.allowHost(host)
	}
	s.mu.Unlock()
	return ln, nil
}

// allowHost adds name to the Host allowlist by publishing a new list:
// requests being served keep reading the old one, never a map being
// written. Callers hold s.mu, so two additions do not lose one another.
func (s *Server) allowHost(name string) {
	h := s.hosts.Load().with(name)
	s.hosts.Store(&h)
}

// BaseURL is where the server can be reached: public_url, else the
// listening address.
func (s *Server) BaseURL() string {
	if s.cfg.Server.PublicURL != "" {
		return s.cfg.Server.PublicURL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return "http://" + s.addr
}

// LocalURL is the loopback URL of the listening socket.
func (s *Server) LocalURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "http://" + s.addr
}

// LoginURL returns a fresh one-time dashboard login.
func (s *Server) LoginURL() (string, time.Time) {
	code, exp := s.logins.newCode()
	return s.LocalURL() + "/login?code=" + code, exp
}

// Serve serves on the listeners until ctx is done, then shuts down
// gracefully: in-flight calls are drained (up to drain) before connections
// close.
func (s *Server) Serve(ctx context.Context, drain time.Duration, lns ...net.Listener) error {
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { errc <- s.http.Serve(ln) }()
	}
	select {
	case err := <-errc:
		s.http.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drain)
	defer cancel()
	err := s.http.Shutdown(sctx) // stops accepting; waits for plain HTTP requests
	s.closeConns(sctx)
	s.calls.flushAll(sctx) // refusals not yet summarised reach the log before it closes
	if errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return err
}

// closeConns drains and closes every WebSocket connection.
func (s *Server) closeConns(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { c.Shutdown(ctx) })
	}
	wg.Wait()
}

func (s *Server) track(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; ok && !c.caller.Owner {
		s.releaseConnLocked(c.caller.Client)
	}
	delete(s.conns, c)
}

// holdConn takes one of client's maxConnsPerClient connection places and
// reports whether there was one.
func (s *Server) holdConn(client string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.agentConns[client] >= maxConnsPerClient {
		return false
	}
	if s.agentConns == nil {
		s.agentConns = map[string]int{}
	}
	s.agentConns[client]++
	return true
}

func (s *Server) releaseConn(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseConnLocked(client)
}

func (s *Server) releaseConnLocked(client string) {
	if s.agentConns[client]--; s.agentConns[client] <= 0 {
		delete(s.agentConns, client)
	}
}

// finishConns ends the open connections that match and says how many.
func (s *Server) finishConns(match func(*conn) bool) int {
	s.mu.Lock()
	var victims []*conn
	for c := range s.conns {
		if match(c) {
			victims = append(victims, c)
		}
	}
	s.mu.Unlock()
	for _, c := range victims {
		c.finish()
	}
	return len(victims)
}

// Connections reports how many WebSocket connections are open.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// AgentsConnected counts the agents with a /ws connection open: agents,
// not connections (one agent may hold several), and neither the owner's
// dashboard nor paired phones.
func (s *Server) AgentsConnected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for c := range s.conns {
		if !c.caller.Owner && c.deviceID == "" {
			seen[c.caller.Client] = true
		}
	}
	return len(seen)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// session reports whether the request carries a valid owner session or
// the cookie of a paired device.
func (s *Server) session(r *http.Request) bool {
	_, _, ok := s.browser(r)
	return ok
}

// browser returns the caller a browser's cookies name: the owner signed
// in with a login code, or a paired device (deviceID set).
func (s *Server) browser(r *http.Request) (caller sandbox.Caller, deviceID string, ok bool) {
	if !fromLAN(r) && slices.ContainsFunc(cookieValues(r, cookieName), s.logins.valid) {
		return browserCaller, "", true
	}
	if d, ok := s.device(r); ok {
		return pairing.Caller(d), d.ID, true
	}
	return sandbox.Caller{}, "", false
}

func (s *Server) hasDevice(r *http.Request) bool {
	_, ok := s.device(r)
	return ok
}

type page struct{ Title, Body string }

// pageTmpl is Corral's page outside the dashboard (a used login link, an
// error): the dashboard's look and logo, from /pair.css and /app-icon.svg,
// which a phone on the LAN may load before it is paired.
var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.Title}}</title><link rel="icon" href="/app-icon.svg" type="image/svg+xml"><link rel="stylesheet" href="/pair.css"></head>
<body class="signed-out"><main class="signed-out-card">
<h1><img src="/app-icon.svg" alt="" width="32" height="32"> {{.Title}}</h1><p>{{.Body}}</p>
</main></body></html>
`))

// pageCSP lets a page outside the dashboard load its stylesheet, logo and
// script from this origin only.
const pageCSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// writePage answers a page of pageTmpl with status code.
func writePage(w http.ResponseWriter, code int, p page) {
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	pageTmpl.Execute(w, p)
}
