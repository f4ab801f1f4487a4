package mcp

import (
	"fmt"
	"reflect"
	"slices"

	"corral/app/wire"

	"github.com/google/jsonschema-go/jsonschema"
)

// The tools' results as structuredContent: each tool's outputSchema is the
// schema of the Corral method's answer (the same JSON the text content
// carries), so a client may read either, made from the answer's one
// declaration (app/wire) with the members an agent reads. file_read's is
// its own: file.read's answer without the bytes, which the content
// carries.

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

// outputSchema is T's JSON Schema as a tool's outputSchema: objects stay
// open (a newer Corral may add members, which a client must not refuse),
// and no property has a type union (see nullable). With members, only
// those are stated, their required ones in that order: the parts of a
// method's answer an agent reads (the owner's are left out), from the
// answer's one declaration (app/wire) and its jsonschema tags.
func outputSchema[T any](members ...string) *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: opaque})
	if err != nil {
		panic(fmt.Sprintf("mcp: output schema: %v", err))
	}
	if members != nil {
		only(s, members)
	}
	nullable(s)
	open(s)
	if _, ok := any(*new(T)).(readManyOut); ok {
		bare(s)
	}
	return s
}

// agentMembers are, for the tools whose answer carries the owner's parts
// too, the members of the answer an agent reads: its output schema states
// these (the required ones in this order), and the rest stay open.
var agentMembers = map[string][]string{
	"generate_link":    {"url", "path", "expiresAt"},
	"save_result_page": {"url", "path", "expiresAt", "content", "view_url"},
	"session_info": {"role", "client", "scope", "user", "shared_dir", "output_dir", "roots", "exec", "paused",
		"audit_problem", "act_for"},
}

// opaque are the parts of an answer stated as an object only: session.info's
// exec, whose members are told in words (and may change with the sandbox).
var opaque = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[wire.SessionExec](): {Type: "object", AdditionalProperties: &jsonschema.Schema{}},
}

// only keeps members of s's properties, and its required ones in the
// order of members; it panics on a member T does not have, so a renamed
// field stops every test.
func only(s *jsonschema.Schema, members []string) {
	props := map[string]*jsonschema.Schema{}
	var required []string
	for _, m := range members {
		p, ok := s.Properties[m]
		if !ok {
			panic(fmt.Sprintf("mcp: output schema: no member %q", m))
		}
		props[m] = p
		if slices.Contains(s.Required, m) {
			required = append(required, m)
		}
	}
	s.Properties, s.Required, s.PropertyOrder = props, required, nil
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
