package wire

import (
	"encoding/json"
	"reflect"
)

// InfoArgs are session.info's params.
type InfoArgs struct {
	Context *Context `json:"context,omitempty"`
}

// LinkArgs are link.create's params: links.LinkArgs with its lifetime
// as the caller wrote it, a number of seconds or a duration string
// (docs/protocol.md section 10), which the transport parses.
type LinkArgs struct {
	Context   *Context        `json:"context,omitempty"`
	Path      string          `json:"path" rpc:"required" jsonschema:"the file or folder to link"`
	ExpiresIn json.RawMessage `json:"expires_in,omitempty"`
}

// Params names the params type of every method whose params are core
// types (or, for session.info and link.create, a context and core
// arguments the transport finishes): the one definition the WebSocket
// decodes and MCP's tools take as their arguments.
var Params = map[string]reflect.Type{
	"session.info":       reflect.TypeFor[InfoArgs](),
	"file.read":          reflect.TypeFor[ReadArgs](),
	"file.write":         reflect.TypeFor[WriteArgs](),
	"file.edit":          reflect.TypeFor[EditArgs](),
	"file.apply_patch":   reflect.TypeFor[PatchArgs](),
	"file.delete":        reflect.TypeFor[DeleteArgs](),
	"file.move":          reflect.TypeFor[MoveArgs](),
	"file.stat":          reflect.TypeFor[StatArgs](),
	"folder.list":        reflect.TypeFor[ListArgs](),
	"folder.create":      reflect.TypeFor[FolderArgs](),
	"file.find":          reflect.TypeFor[FindArgs](),
	"file.grep":          reflect.TypeFor[GrepArgs](),
	"file.document_read": reflect.TypeFor[DocumentReadArgs](),
	"command.run":        reflect.TypeFor[RunArgs](),
	"link.create":        reflect.TypeFor[LinkArgs](),
	"result.save":        reflect.TypeFor[ResultArgs](),
	"versions.list":      reflect.TypeFor[HistoryArgs](),
	"changes.get":        reflect.TypeFor[ChangesArgs](),
	"undo.preview":       reflect.TypeFor[UndoArgs](),
	"undo.apply":         reflect.TypeFor[UndoArgs](),
	"undo.client":        reflect.TypeFor[UndoClientArgs](),
	"version.restore":    reflect.TypeFor[RestoreArgs](),
	"versions.forget":    reflect.TypeFor[ForgetArgs](),
}
