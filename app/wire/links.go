package wire

// The results of link.create, result.save, links.rotate and
// session.login, declared once: app/share and app/server build them
// (their names there are aliases), MCP's generate_link and
// save_result_page state the members an agent reads as their output
// schemas (the jsonschema tags), and the CLI reads them. Fields are
// declared in alphabetical order of their JSON names, so the bytes are
// those of the maps they replaced (encoding/json sorts map keys).

// LinkResult answers link.create; the owner also learns the link's reach.
type LinkResult struct {
	ExpiresAt string `json:"expiresAt" jsonschema:"when the link stops working (RFC 3339)"`
	*Reach
	Path string `json:"path" jsonschema:"the file or folder linked"`
	URL  string `json:"url" jsonschema:"the link"`
}

// Reach is where the owner can open a new link: lan_url only while the
// LAN listener runs and no public_url is set.
type Reach struct {
	LanURL    string `json:"lan_url,omitempty"`
	LocalOnly bool   `json:"local_only"`
}

// Saved answers result.save. Content and view_url are present (content
// even when empty) only for a markdown report.
type Saved struct {
	Content   *string `json:"content,omitempty" jsonschema:"markdown: the report, for a chat reply"`
	ExpiresAt string  `json:"expiresAt" jsonschema:"when the link stops working (RFC 3339)"`
	Path      string  `json:"path" jsonschema:"the file or folder linked"`
	URL       string  `json:"url" jsonschema:"the link"`
	ViewURL   *string `json:"view_url,omitempty" jsonschema:"markdown: the report rendered as a page; give people this link"`
}

// Rotated answers links.rotate.
type Rotated struct {
	Rotated bool `json:"rotated"`
}

// LoginResult answers session.login: a one-time dashboard URL.
type LoginResult struct {
	ExpiresAt string `json:"expiresAt"`
	URL       string `json:"url"`
}
