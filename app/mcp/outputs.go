package mcp

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// The tools' results as structuredContent: each tool's outputSchema is the
// schema of the Corral method's answer (the same JSON the text content
// carries), so a client may read either. Where the answer's Go type lives
// in core it is used directly; the answers app/server builds are mirrored
// here, with the fields a client relies on.

// readOut is file_read's structured result: file.read's answer, without
// an image's data (the image content carries it).
type readOut struct {
	Type        string  `json:"type" jsonschema:"text, image or binary (encoding=base64)"`
	Path        string  `json:"path" jsonschema:"the file, as you name it"`
	Bytes       int64   `json:"bytes" jsonschema:"the file's size"`
	Content     string  `json:"content,omitempty" jsonschema:"text: the lines returned, line endings included"`
	TotalLines  int     `json:"totalLines,omitempty" jsonschema:"text: the lines in the file"`
	OutputLines int     `json:"outputLines,omitempty" jsonschema:"text: the lines in content"`
	Truncated   bool    `json:"truncated,omitempty" jsonschema:"text: lines after the returned ones remain"`
	TruncatedBy *string `json:"truncatedBy,omitempty" jsonschema:"text: lines or bytes when truncated"`
	MimeType    string  `json:"mimeType,omitempty" jsonschema:"image: its type"`
	Encoding    string  `json:"encoding,omitempty" jsonschema:"text: the 8-bit encoding the file was read as (windows-1252 or iso-8859-1), absent for UTF-8; binary: base64"`
	Offset      int64   `json:"offset,omitempty" jsonschema:"binary: the first byte in data"`
	Length      int     `json:"length,omitempty" jsonschema:"binary: the bytes in data"`
	Data        string  `json:"data,omitempty" jsonschema:"binary: the bytes, in base64"`
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
	} `json:"roots" jsonschema:"host folders you may use by their absolute path"`
	Exec         map[string]any `json:"exec" jsonschema:"whether commands are available, where they may write, their network and limits"`
	Paused       bool           `json:"paused" jsonschema:"the owner has paused every agent"`
	AuditProblem string         `json:"audit_problem,omitempty"`
	ActFor       []string       `json:"act_for,omitempty" jsonschema:"other folders you may name in a context"`
}

// outputSchema is T's JSON Schema as a tool's outputSchema: objects stay
// open (a newer Corral may add members, which a client must not refuse).
func outputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: output schema: %v", err))
	}
	open(s)
	return s
}

func open(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Type == "object" && s.Properties != nil {
		s.AdditionalProperties = nil
	}
	for _, p := range s.Properties {
		open(p)
	}
	open(s.Items)
}
