package wire

import (
	"strconv"
	"time"

	"corral/app/rpc"
	"corral/core/fsbox"
)

// Info is fsbox.Info on the wire.
type Info struct {
	Name     string    `json:"name"`
	Path     string    `json:"path"` // agent-visible
	Type     string    `json:"type"` // "file", "dir" or "symlink"
	Size     int64     `json:"size"` // bytes of a file, of a symlink's target path; 0 for a folder
	Modified time.Time `json:"modified"`
}

// Match is fsbox.Match on the wire.
type Match struct {
	Path string `json:"path"` // agent-visible
	Line int    `json:"line"` // 1-based
	Text string `json:"text"` // the line without its ending, cut at MaxGrepText bytes
}

// Replacement is fsbox.Replacement on the wire.
type Replacement struct {
	Old string `json:"old_text" jsonschema:"the exact text to replace"`
	New string `json:"new_text" jsonschema:"the replacement text"`
	All bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence"`
}

// TextShape, ImageShape and BinaryShape are file.read's JSON shapes
// (docs/protocol.md), one for each fsbox.ReadResult type.
type TextShape struct {
	Type        string  `json:"type"`
	Path        string  `json:"path"`
	Content     string  `json:"content"`
	Bytes       int64   `json:"bytes"`
	TotalLines  int     `json:"totalLines"`
	OutputLines int     `json:"outputLines"`
	Truncated   bool    `json:"truncated"`
	TruncatedBy *string `json:"truncatedBy"` // null when not truncated
	Encoding    string  `json:"encoding,omitempty"`
}

type BinaryShape struct {
	Type      string `json:"type"`
	Path      string `json:"path"`
	Encoding  string `json:"encoding"`
	Bytes     int64  `json:"bytes"`
	Offset    int64  `json:"offset"`
	Length    int    `json:"length"`
	Truncated bool   `json:"truncated"`
	Data      []byte `json:"data"`
}

type ImageShape struct {
	Type     string `json:"type"`
	Path     string `json:"path"`
	MimeType string `json:"mimeType"`
	Bytes    int64  `json:"bytes"`
	Data     []byte `json:"data"`
}

// AppendJSON appends s as rpc.Marshal writes it (FuzzTextShapeJSON):
// file.read's answers are mostly Content, which rpc.AppendString escapes
// several times faster than encoding/json.
func (s TextShape) AppendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = rpc.AppendString(b, s.Type)
	b = append(b, `,"path":`...)
	b = rpc.AppendString(b, s.Path)
	b = append(b, `,"content":`...)
	b = rpc.AppendString(b, s.Content)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, s.Bytes, 10)
	b = append(b, `,"totalLines":`...)
	b = strconv.AppendInt(b, int64(s.TotalLines), 10)
	b = append(b, `,"outputLines":`...)
	b = strconv.AppendInt(b, int64(s.OutputLines), 10)
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, s.Truncated)
	b = append(b, `,"truncatedBy":`...)
	if s.TruncatedBy == nil {
		b = append(b, "null"...)
	} else {
		b = rpc.AppendString(b, *s.TruncatedBy)
	}
	if s.Encoding != "" {
		b = append(b, `,"encoding":`...)
		b = rpc.AppendString(b, s.Encoding)
	}
	return append(b, '}')
}

// Read returns r as file.read's shape for r.Type.
func Read(r fsbox.ReadResult) any {
	switch r.Type {
	case "image":
		return ImageShape{r.Type, r.Path, r.MimeType, r.Bytes, r.Data}
	case "binary":
		return BinaryShape{r.Type, r.Path, r.Encoding, r.Bytes, r.Offset, len(r.Data), r.Truncated, r.Data}
	}
	var by *string
	if r.TruncatedBy != "" {
		by = &r.TruncatedBy
	}
	return TextShape{r.Type, r.Path, r.Content, r.Bytes, r.TotalLines, r.OutputLines, r.Truncated, by, r.Encoding}
}
