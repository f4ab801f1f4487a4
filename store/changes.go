package store

import (
	"encoding/json"

	"corral/core/audit"
)

// change is an audit.Change as the events table's changes column holds
// it: a JSON object with these names, which every later Corral reads back,
// so they never change (the same names as on the wire, where app/wire
// declares them again).
type change struct {
	Path       string           `json:"path"`
	Kind       audit.ChangeKind `json:"kind"`
	From       string           `json:"from,omitempty"`
	SizeBefore int64            `json:"size_before"`
	SizeAfter  int64            `json:"size_after"`
	Version    string           `json:"version,omitempty"`
	After      string           `json:"after,omitempty"`
	Mode       uint32           `json:"mode,omitempty"`
	Link       string           `json:"link,omitempty"`
	NotKept    string           `json:"not_kept,omitempty"`
	Dir        bool             `json:"dir,omitempty"`
}

// changesJSON is the changes column of an event: its changes as a JSON
// array, or "" when it changed nothing.
func changesJSON(cs []audit.Change) string {
	if len(cs) == 0 {
		return ""
	}
	out := make([]change, len(cs))
	for i, c := range cs {
		out[i] = change(c) // a field added to audit.Change fails to compile here
	}
	b, err := json.Marshal(out)
	if err != nil { // a change holds only strings and numbers
		return ""
	}
	return string(b)
}

// parseChanges reads a changes column back.
func parseChanges(col string) ([]audit.Change, error) {
	var in []change
	if err := json.Unmarshal([]byte(col), &in); err != nil {
		return nil, err
	}
	out := make([]audit.Change, len(in))
	for i, c := range in {
		out[i] = audit.Change(c)
	}
	return out, nil
}
