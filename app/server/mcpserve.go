package server

import (
	"context"
	"net/http"
	"strings"

	"corral/app/mcpserve"
	"corral/core/errs"
	"corral/core/policy"
	"corral/core/sandbox"
)

// MCP over HTTP and the WebSocket relay of `corral mcp` live in
// app/mcpserve; here are the gates of /mcp (origin, key, the agent's
// connection places) and what the handler is given of the server: the
// key's caller now and the method table's typed entry.

// mcpHandler serves /mcp (mcpserve.Handler.Serve) after the checks every
// agent route makes.
func (s *Server) mcpHandler() http.Handler {
	s.mcp = mcpserve.New(mcpMethods{s}, mcpserve.Options{Version: s.version, CommandTimeout: s.cfg.Exec.Timeout.D(),
		MaxMessageBytes: s.cfg.Server.MaxMessageBytes, Secret: s.secretKey.secretFor, Now: s.now})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r, s.cfg.Server.PublicURL) {
			http.Error(w, "Cross-origin request refused.", http.StatusForbidden)
			return
		}
		tok, ok := bearer(r)
		var caller sandbox.Caller
		if ok {
			caller, ok = mcpMethods{s}.Caller(r.Context(), tok)
		}
		if !ok {
			unauthorized(w)
			return
		}
		// /mcp requests (a GET stream lasts as long as the agent wants)
		// count against the same bound as /ws connections.
		if !s.admitConn(w, caller) {
			return
		}
		if !caller.Owner {
			defer s.releaseConn(caller.Client)
		}
		s.mcp.Serve(w, r, caller, tok)
	})
}

// mcpMethods is the server as mcpserve sees it (mcpserve.Server).
type mcpMethods struct{ s *Server }

func (m mcpMethods) Caller(ctx context.Context, key string) (sandbox.Caller, bool) {
	caller, ok := m.s.id.fromBearer(key)
	if ok {
		m.s.touchAgent(ctx, caller)
	}
	return caller, ok
}

// Call runs method as caller outside any connection (methods that need
// one, subscriptions, are refused): params, the tool's arguments as they
// were decoded, go to the method as they are (call.args).
func (m mcpMethods) Call(ctx context.Context, caller sandbox.Caller, method string, params any, progress func(string)) (any, error) {
	if !caller.Owner {
		// The same places as the agent's /ws calls (shareOf): one bound
		// on an agent's calls at once, whatever transport they come by.
		places := m.s.shareOf(caller).calls
		select {
		case places <- struct{}{}:
			defer func() { <-places }()
		case <-ctx.Done():
			return nil, errs.New(errs.Unavailable, "", "The call was cancelled while it waited for this agent's other calls to finish.")
		}
	}
	c := &call{caller: caller, args: params}
	if progress != nil {
		ctx = policy.WithWaiting(ctx, func(a policy.Approval) { progress(waitingMessage(a)) })
		c.output = func(_ string, data []byte) { progress(strings.TrimSuffix(string(data), "\n")) }
	}
	return m.s.run(ctx, method, c)
}

func (m mcpMethods) TakeBig(ctx context.Context, caller sandbox.Caller) (func(), error) {
	return m.s.shareOf(caller).waiting.TakeBig(ctx)
}
