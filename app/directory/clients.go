package directory

import "slices"

// ClientInfo is one agent as client.list shows it: never its key.
type ClientInfo struct {
	Name   string   `json:"name"`
	User   string   `json:"user"`
	ActFor []string `json:"act_for"`
}

// Clients answers client.list (owner): the agents in agent.list's order,
// so the dashboard can offer their names as filters before any of them
// has acted.
func (d *Directory) Clients() []ClientInfo {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]ClientInfo, 0, len(d.agents))
	for _, a := range d.ordered() {
		act := a.ActFor
		if act == nil {
			act = []string{}
		}
		out = append(out, ClientInfo{Name: a.Name, User: a.User, ActFor: slices.Clone(act)})
	}
	return out
}
