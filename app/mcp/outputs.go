package mcp

import (
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// The tools' results as structuredContent: each tool's outputSchema is the
// schema of the Corral method's answer (the same JSON the text content
// carries), so a client may read either. Where the answer's Go type lives
// in core it is used directly; the answers app/server builds are mirrored
// here, with the fields a client relies on.

// readOut is file_read's structured result: file.read's answer, without
// the data of an image or of encoding=base64 (the content carries it).
type readOut struct {
	Type        string  `json:"type" jsonschema:"text, image or binary (encoding=base64)"`
	Path        string  `json:"path"`
	Bytes       int64   `json:"bytes" jsonschema:"the file's size"`
	Content     string  `json:"content,omitempty" jsonschema:"text: the lines returned"`
	TotalLines  int     `json:"totalLines,omitempty"`
	OutputLines int     `json:"outputLines,omitempty"`
	Truncated   bool    `json:"truncated,omitempty" jsonschema:"text: more lines follow"`
	TruncatedBy *string `json:"truncatedBy" jsonschema:"text: lines or bytes when truncated"`
	MimeType    string  `json:"mimeType,omitempty"`
	Encoding    string  `json:"encoding,omitempty" jsonschema:"text: the 8-bit encoding it was read as; binary: base64"`
	Offset      int64   `json:"offset,omitempty" jsonschema:"binary: the first byte"`
	Length      int     `json:"length,omitempty" jsonschema:"binary: how many bytes"`
	// No data: readHandler sends the bytes once, in the text content
	// (file.read's answer as it came), and an image's are its image
	// content.
}

// readManyOut is read_multiple_files's structured result.
type readManyOut struct {
	Files []readManyFile `json:"files"`
}

type readManyFile struct {
	readOut
	Error string `json:"error,omitempty" jsonschema:"why this file could not be read (the others are not affected)"`
}

// linkOut is link.create's answer.
type linkOut struct {
	URL       string `json:"url" jsonschema:"the link"`
	Path      string `json:"path" jsonschema:"the file or folder linked"`
	ExpiresAt string `json:"expiresAt" jsonschema:"when the link stops working (RFC 3339)"`
}

// resultOut is result.save's answer.
type resultOut struct {
	linkOut
	Content string `json:"content,omitempty" jsonschema:"markdown: the report, for a chat reply"`
	ViewURL string `json:"view_url,omitempty" jsonschema:"markdown: the report rendered as a page; give people this link"`
}

// infoOut is session.info's answer as an agent sees it.
type infoOut struct {
	Role      string `json:"role"`
	Client    string `json:"client"`
	Scope     string `json:"scope" jsonschema:"the folder your paths resolve in"`
	User      string `json:"user"`
	SharedDir string `json:"shared_dir"`
	OutputDir string `json:"output_dir"`
	Roots     []struct {
		Path   string `json:"path"`
		Access string `json:"access" jsonschema:"read or readwrite"`
	} `json:"roots" jsonschema:"folders you may use by absolute path"`
	Exec         map[string]any `json:"exec" jsonschema:"whether commands can run, and their limits"`
	Paused       bool           `json:"paused" jsonschema:"the owner has paused every agent"`
	AuditProblem string         `json:"audit_problem,omitempty"`
	ActFor       []string       `json:"act_for,omitempty" jsonschema:"other folders you may name in a context"`
}

// outputSchema is T's JSON Schema as a tool's outputSchema: objects stay
// open (a newer Corral may add members, which a client must not refuse),
// and no property has a type union (see nullable).
func outputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: output schema: %v", err))
	}
	nullable(s)
	open(s)
	if _, ok := any(*new(T)).(readManyOut); ok {
		bare(s)
	}
	return s
}

// nullable removes the ["null", T] type unions jsonschema.For makes of
// Go's pointers, slices and maps, which strict clients flag (the MCP
// Inspector's --strict, and clients that map schemas onto a one-type
// dialect): a member left out when empty (omitempty, so not required) is
// never null and becomes T; one always present may be null on the wire
// (a nil slice, a truncatedBy of null) and becomes anyOf T or null, each
// branch of one type.
func nullable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for k, p := range s.Properties {
		nullable(p)
		if len(p.Types) != 2 || p.Types[0] != "null" {
			continue
		}
		p.Type, p.Types = p.Types[1], nil
		if slices.Contains(s.Required, k) {
			desc := p.Description
			p.Description = ""
			s.Properties[k] = &jsonschema.Schema{Description: desc, AnyOf: []*jsonschema.Schema{p, {Type: "null"}}}
		}
	}
	nullable(s.Items)
}

func open(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Properties != nil {
		s.AdditionalProperties = nil
	}
	for _, p := range s.Properties {
		open(p)
	}
	for _, p := range s.AnyOf {
		open(p)
	}
	open(s.Items)
}

// bare removes the descriptions in s: read_multiple_files repeats
// file_read's result, described there.
func bare(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return s
	}
	s.Description = ""
	for _, p := range s.Properties {
		bare(p)
	}
	for _, p := range s.AnyOf {
		bare(p)
	}
	bare(s.Items)
	return s
}
