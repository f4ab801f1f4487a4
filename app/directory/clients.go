package server

import (
	"context"
	"slices"

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
func (x agentArea) clientList(ctx context.Context, c *call) (any, error) {
	if err := rpc.DecodeParams(c.params, &struct{}{}); err != nil {
		return nil, err
	}
	x.dir.mu.RLock()
	out := make([]clientInfo, 0, len(x.dir.agents))
	for _, a := range x.dir.ordered() {
		act := a.ActFor
		if act == nil {
			act = []string{}
		}
		out = append(out, clientInfo{Name: a.Name, User: a.User, ActFor: slices.Clone(act)})
	}
	x.dir.mu.RUnlock()
	return clientsResult{Clients: out}, nil
}
