package wire

// Bundle is netgate.Bundle on the wire.
type Bundle struct {
	Name    string   `json:"name"`
	Domains []string `json:"domains"`
}

// Refusal is netgate.Refusal on the wire.
type Refusal struct {
	Target string `json:"target"` // host:port
	Reason string `json:"reason"`
}

// Summary is netgate.Summary on the wire.
type Summary struct {
	Connections int       `json:"connections"` // allowed and opened
	Allowed     []string  `json:"allowed,omitempty"`
	Refused     []Refusal `json:"refused,omitempty"`
	BytesUp     int64     `json:"bytesUp"`
	BytesDown   int64     `json:"bytesDown"`
}
