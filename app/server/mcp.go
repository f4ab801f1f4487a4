package server

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"corral/app/mcp"
	"corral/app/rpc"
	"corral/core/sandbox"
)

// Invoke runs one method as caller, outside any connection (MCP over
// HTTP). Methods that need a connection (subscriptions) are refused.
func (s *Server) Invoke(ctx context.Context, caller sandbox.Caller, method string, params json.RawMessage) (any, error) {
	return s.run(ctx, method, &call{caller: caller, params: params})
}

// mcpBackend adapts Invoke to the MCP tools.
type mcpBackend struct {
	s      *Server
	caller sandbox.Caller
}

type kindError struct{ e *rpc.Error }

func (k kindError) Error() string { return k.e.Message }
func (k kindError) Kind() string {
	if k.e.Data == nil {
		return ""
	}
	return k.e.Data.Kind
}

func (b mcpBackend) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	res, err := b.s.Invoke(ctx, b.caller, method, raw)
	if err != nil {
		return nil, kindError{rpc.FromError(err)}
	}
	return rpc.Marshal(res) // as /ws writes it: a URL's "&" stays "&"
}

// mcpServers holds one MCP server per authenticated client.
type mcpServers struct {
	mu      sync.Mutex
	servers map[string]*sdk.Server
	handler http.Handler
}

func (s *Server) mcpHandler() http.Handler {
	ms := &mcpServers{servers: map[string]*sdk.Server{}}
	ms.handler = sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		caller, _ := r.Context().Value(callerKey{}).(sandbox.Caller)
		ms.mu.Lock()
		defer ms.mu.Unlock()
		srv, ok := ms.servers[caller.Client]
		if !ok {
			srv = mcp.NewServer(mcpBackend{s: s, caller: caller}, s.version)
			ms.servers[caller.Client] = srv
		}
		return srv
	}, &sdk.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		DisableLocalhostProtection: true, // guard checks Host against our own allowlist
		MaxRequestBodyBytes:        s.cfg.Server.MaxMessageBytes,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r, s.cfg.Server.PublicURL) {
			http.Error(w, "Cross-origin request refused.", http.StatusForbidden)
			return
		}
		tok, ok := bearer(r)
		var caller sandbox.Caller
		if ok {
			caller, ok = s.id.fromBearer(tok)
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="corral"`)
			http.Error(w, "Authentication required: send Authorization: Bearer <key>.", http.StatusUnauthorized)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.Server.MaxMessageBytes)
		ms.handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, caller)))
	})
}

type callerKey struct{}
