package server

import (
	"context"

	"corral/app/rpc"
)

// Methods the dashboard needs beyond PROTOCOL.md's table.

// clientInfo is one configured client as the owner sees it: never its key.
type clientInfo struct {
	Name   string   `json:"name"`
	User   string   `json:"user"`
	ActFor []string `json:"act_for"`
}

// clientList answers client.list (owner): the configured clients, so the
// dashboard can offer their names as filters before any of them has acted.
func (s *Server) clientList(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	out := make([]clientInfo, 0, len(s.cfg.Clients))
	for _, cl := range s.cfg.Clients {
		act := cl.ActFor
		if act == nil {
			act = []string{}
		}
		out = append(out, clientInfo{Name: cl.Name, User: cl.User, ActFor: act})
	}
	return map[string]any{"clients": out}, nil
}
