// Package mcp exposes Corral's agent methods as MCP tools (Model Context
// Protocol), with the official Go SDK. The same tools serve `corral mcp`
// (stdio, forwarding to the daemon over the WebSocket) and POST /mcp on the
// daemon (streamable HTTP, dispatching in-process as the authenticated
// client), so approvals, audit and the tray see every call either way.
//
// Guarantees: each tool performs one Corral method through the Backend it
// is given (read_multiple_files one file.read per path, at most 20), with
// the arguments as the client gave them, decoded into the method's params
// type as app/wire declares it (the tool's input schema is made from that
// type, its output schema from the answer's declaration there), and
// decides nothing itself: every fence is the backend's. Arguments that
// are missing, unknown, of the wrong type or contradictory are refused
// before the backend is called, with an isError result in a sentence
// naming the tool and the argument and what it takes (Corral's words, not
// the schema validator's); null for an optional argument means leaving
// it out, and a numeric one left out takes its schema's default. A
// backend error becomes an isError result carrying its polite sentence
// and, in parentheses, its kind. The client's cancellation
// (notifications/cancelled) ends the backend call's context; with a
// progressToken, each line the backend reports (Progress) is sent as
// notifications/progress with a growing count. What a file holds reaches
// the agent unchanged; the text Corral adds (how to read on, the encoding
// a file was read as) follows it on lines of its own, and a path it puts
// in a shell command is quoted as one word. The context parameter is
// offered only with Options.ActsForOthers.
//
// The tool list says the path rules once, in the server's instructions,
// and states every numeric argument's bounds and default. No answer of
// file_read or read_multiple_files exceeds 10 MiB encoded (maxAnswer),
// the most a client takes in one message: a base64 read's bytes are sent
// once, an image too large is refused, and files beyond the limit are
// left for another call, each saying how to read on.
//
// Not guaranteed: the size of other answers is bounded by the methods
// (file.read's 2000 lines or 256 KiB, command.output's cap), not here. A
// call the backend had started when the client gave up may have completed
// there. Agent text is not made visible for people here: the tools answer
// agents, and the owner's surfaces do that.
package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"corral/app/rpc"
	"corral/app/wire"
	"corral/core/execbox"
	"corral/core/fsbox"
	"corral/core/netgate"
	"corral/core/sandbox"
)

// Backend performs one Corral method as the connected client.
type Backend interface {
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// ValueBackend is a Backend in the daemon's own process, which takes a
// tool's arguments as the wire value they were decoded into and hands
// over a method's result as the value it is in its wire form (a text
// read as wire.TextShape, a command's wire.RunResult), sparing the
// tools encoding either to JSON and decoding it again.
type ValueBackend interface {
	Backend
	CallValue(ctx context.Context, method string, params any) (any, error)
}

// pathRules are said once, in the server's instructions, for every tool
// that takes a path.
const pathRules = "Paths in every tool are relative to your private folder (e.g. notes/todo.md). " +
	"'share/…' is the folder shared by every user and the companion; 'output/…' is where finished results belong. " +
	"Absolute paths and '~/…' outside your folder need the owner's approval, which may take a while or be denied. " +
	"A tool's reason argument says why you need it; it is shown to the owner when approval is needed."

const patchDesc = "Create, modify, rename and delete files in one call, all or nothing. " +
	"Formats: a unified diff as git diff writes it (--- /dev/null creates, +++ /dev/null deletes, git's rename from/to renames; a/ and b/ are stripped), " +
	"or the Codex format (*** Begin Patch, *** Add File: path with + lines, *** Delete File: path, *** Update File: path with optional *** Move to: path and @@ hunks of ' ', - and + lines, *** End Patch). " +
	"If a hunk does not match, nothing changes and the error names the file, line and text expected; read the file again and resend. " +
	"A numbered hunk may match up to 3 lines off (the result reports offsets); give 3 lines of context around each change."

// Descriptions shared by many tools.
const (
	reasonDesc  = "why you need it (see instructions)"
	contextDesc = "whose folder to use; leave it out for your own (see instructions)"
	// contextRules are added to the instructions when tools offer context.
	contextRules = " Every tool's context argument picks whose folder to use; leave it out for your own and set it only when told to: " +
		"user_id picks that user's folder, 'companion' in any of its fields the companion's, anything else the default folder, each only if this client may act for it."
)

// The tools' arguments are their methods' params as app/wire declares
// them (one declaration, with the JSON names, rpc:"required" marks and
// the descriptions the schemas show), handed to the backend as they were
// decoded; readManyIn is read_multiple_files's own.

type readManyIn struct {
	Paths   []string      `json:"paths" rpc:"required" jsonschema:"the files to read"`
	Reason  string        `json:"reason,omitempty"`
	Context *wire.Context `json:"context,omitempty"`
}

// inputSchema is In's input schema as the tools list shows it and the SDK
// validates it: the arguments In's rpc:"required" marks required, reason
// and context last, every reason and context described, and context a
// plain object (a JSON null for it is dropped before validation, see
// checkArguments, so it still means no context). edit adjusts the
// properties further.
func inputSchema[In any](withContext bool, edit func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: input schema: %v", err))
	}
	s.Required = nil
	for f := range reflect.TypeFor[In]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Tag.Get("rpc") == "required" {
			s.Required = append(s.Required, name)
		}
	}
	for _, k := range []string{"reason", "context"} {
		if slices.Contains(s.PropertyOrder, k) {
			s.PropertyOrder = append(slices.DeleteFunc(s.PropertyOrder, func(p string) bool { return p == k }), k)
		}
	}
	if p := s.Properties["reason"]; p != nil && p.Description == "" {
		p.Description = reasonDesc
	}
	if p := s.Properties["context"]; p != nil {
		p.Type, p.Types, p.Description = "object", nil, contextDesc
		if !withContext {
			delete(s.Properties, "context")
			s.PropertyOrder = slices.DeleteFunc(s.PropertyOrder, func(k string) bool { return k == "context" })
		}
	}
	single(s)
	if edit != nil {
		edit(s.Properties)
		// What edit took out (run_command's stream) is not offered.
		s.PropertyOrder = slices.DeleteFunc(s.PropertyOrder, func(k string) bool { return s.Properties[k] == nil })
	}
	return s
}

// single gives every property of s one type: Go's pointers and slices
// come out of jsonschema.For as ["null", T], a union some clients refuse.
// A null for an optional argument is dropped before validation (see
// checkArguments), so T alone says the same.
func single(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		single(p)
	}
	single(s.Items)
	if s.AdditionalProperties != nil {
		single(s.AdditionalProperties)
	}
}

func ptr(b bool) *bool { return &b }

func ptrf(f float64) *float64 { return &f }

func ptri(i int) *int { return &i }

// tool describes one MCP tool and the Corral method behind it.
type tool struct {
	name, method, title, desc string
	ann                       sdk.ToolAnnotations
}

var (
	readOnly    = sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	additive    = sdk.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	idempotent  = sdk.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
	destructive = sdk.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}
)

// handler makes a tool's handler that performs method on b.
type handler[In any] func(b Backend, method string) sdk.ToolHandlerFor[In, any]

// registry is what NewServer adds the tools to: the server, the backend
// their handlers call, each tool's input schema for checkArguments, and
// whether the tools offer the context parameter.
type registry struct {
	s           *sdk.Server
	b           Backend
	schemas     map[string]*jsonschema.Schema
	withContext bool
}

// addTool registers t on r.s with In's input schema (see inputSchema;
// edit may be nil), Out's output schema (see outputSchema; agentMembers
// names the members it states) and the
// handler h makes for t's method, and notes the input schema for
// checkArguments. The handler sets the result's structuredContent itself
// (the method's answer as it came, not re-encoded), so the SDK neither
// encodes nor validates it again.
func addTool[Out, In any](r registry, t tool, edit func(props map[string]*jsonschema.Schema), h handler[In]) {
	ann := t.ann
	in := inputSchema[In](r.withContext, edit)
	r.schemas[t.name] = in
	sdk.AddTool(r.s, &sdk.Tool{Name: t.name, Title: t.title, Description: t.desc, Annotations: &ann, InputSchema: in, OutputSchema: outputSchema[Out](agentMembers[t.name]...)}, withProgress(h(r.b, t.method)))
}

type progressKey struct{}

// Progress is the function a backend calls with a line of progress for
// the call under ctx (command output, "waiting for the owner's answer"),
// or nil when the client asked for none (no progressToken).
func Progress(ctx context.Context) func(message string) {
	f, _ := ctx.Value(progressKey{}).(func(string))
	return f
}

// withProgress gives h's backend calls a Progress function when the
// request carries a progressToken: each message becomes a
// notifications/progress with a growing progress count, so that clients
// which reset their timeout on progress keep waiting.
func withProgress[In any](h sdk.ToolHandlerFor[In, any]) sdk.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		if req == nil || req.Params == nil || req.Session == nil {
			return h(ctx, req, in)
		}
		tok := req.Params.GetProgressToken()
		if tok == nil {
			return h(ctx, req, in)
		}
		var mu sync.Mutex
		n := 0
		report := func(msg string) {
			mu.Lock()
			defer mu.Unlock()
			n++
			req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Message: msg, Progress: float64(n)})
		}
		return h(context.WithValue(ctx, progressKey{}, report), req, in)
	}
}

// runHandler is command.run's handler: with progress wanted, the output
// is streamed to it as it comes.
func runHandler(b Backend, method string) sdk.ToolHandlerFor[wire.RunArgs, any] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in wire.RunArgs) (*sdk.CallToolResult, any, error) {
		in.Stream = Progress(ctx) != nil
		v, raw, err := callBoth(ctx, b, method, in)
		if err != nil {
			return nil, nil, toolError(err)
		}
		res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}, StructuredContent: raw}
		if r, ok := v.(wire.RunResult); ok {
			markNotApplied(res, r.NotApplied)
		} else {
			// From JSON: only what markNotApplied needs.
			var r struct {
				NotApplied *wire.NotApplied `json:"not_applied"`
			}
			json.Unmarshal(raw, &r)
			markNotApplied(res, r.NotApplied)
		}
		return res, nil, nil
	}
}

// markNotApplied makes a command's result an error result, led by the
// sentence saying why, when some of its changes were not applied to the
// folders (na): the agent must not take them as made.
func markNotApplied(res *sdk.CallToolResult, na *wire.NotApplied) {
	if na == nil {
		return
	}
	res.IsError = true
	res.Content = append([]sdk.Content{&sdk.TextContent{Text: "corral: " + na.Message}}, res.Content...)
}

// callBoth performs method and returns its result as JSON (what a tool
// answers) and, from a ValueBackend, as the value it was in its wire
// form (v nil from any other backend): nothing is decoded again.
func callBoth(ctx context.Context, b Backend, method string, in any) (v any, raw json.RawMessage, err error) {
	vb, ok := b.(ValueBackend)
	if !ok {
		raw, err = b.Call(ctx, method, in)
		return nil, raw, err
	}
	if v, err = vb.CallValue(ctx, method, in); err != nil {
		return nil, nil, err
	}
	raw, err = rpc.Marshal(v)
	return v, raw, err
}

// Options shape the tool list for one client.
type Options struct {
	// ActsForOthers offers every tool's context parameter, which selects
	// another user's folder or the companion's. Only a client that may
	// act for others (act_for not empty, or the owner) can use it; for
	// the others it would be about half the tool list for nothing.
	ActsForOthers bool
	// CommandTimeout is the owner's exec.timeout: run_command's default
	// and longest timeout_ms; 0 means execbox.DefaultTimeout, the
	// config's default.
	CommandTimeout time.Duration
	// SessionID names each new session over streamable HTTP (the SDK's
	// ServerOptions.GetSessionID); nil: the SDK's random text.
	SessionID func() string
}

// minCommandTimeout is run_command's shortest timeout_ms, the shortest
// exec.timeout the config takes.
const minCommandTimeout = time.Second

// bound sets a numeric property's minimum, maximum and (unless def is
// nil) default: the bounds the method itself keeps (core's constants),
// stated in the schema made from its params' declaration.
func bound(p *jsonschema.Schema, lo, hi float64, def any) {
	p.Minimum, p.Maximum = ptrf(lo), ptrf(hi)
	if def != nil {
		b, _ := json.Marshal(def)
		p.Default = b
	}
}

// NewServer returns an MCP server whose tools call b.
func NewServer(b Backend, version string, o Options) *sdk.Server {
	instructions := "Corral gives you a private folder on the owner's computer. " + pathRules +
		" Commands run in a sandbox: your folder (as $HOME) and its playground/ are writable, share/ is at /share, everything else is read-only, and there is no network unless you ask and the owner allows it."
	if o.ActsForOthers {
		instructions += contextRules
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "corral", Title: "Corral", Version: version}, &sdk.ServerOptions{Instructions: instructions, GetSessionID: o.SessionID})
	r := registry{s: s, b: b, schemas: map[string]*jsonschema.Schema{}, withContext: o.ActsForOthers}
	maxLines := float64(fsbox.MaxReadLines)
	lines := func(p map[string]*jsonschema.Schema) {
		bound(p["offset"], 1, math.MaxInt32, 1)
		bound(p["limit"], 1, maxLines, maxLines)
	}
	addTool[readOut](r, tool{"file_read", "file.read", "Read a file", "Read a text file (2000 lines or 256 KiB per call; offset/limit for more, tail for the last lines), an image, or with encoding=base64 any file's bytes.", readOnly},
		func(p map[string]*jsonschema.Schema) {
			lines(p)
			bound(p["tail"], 1, maxLines, nil)
			p["encoding"].Enum, p["encoding"].Default = []any{"text", "base64"}, json.RawMessage(`"text"`)
			bound(p["byte_offset"], 0, 1<<40, 0) // 1 TiB
		}, readHandler)
	addTool[readManyOut](r, tool{"read_multiple_files", "file.read", "Read several files", "Read up to 20 text files, each as file_read would; one that fails says why without failing the others.", readOnly},
		func(p map[string]*jsonschema.Schema) {
			p["paths"].MinItems, p["paths"].MaxItems = ptri(1), ptri(maxReadMany)
		}, readManyHandler)
	addTool[wire.Info](r, tool{"file_stat", "file.stat", "About a file", "Say whether a path is a file, folder or symlink, with its size and modification time.", readOnly},
		nil, forward[wire.StatArgs])
	addTool[wire.DocumentResult](r, tool{"document_read", "file.document_read", "Read a document", "Extract the text of a PDF, Word, OpenDocument, Excel, PowerPoint, EPUB, RTF or HTML file, " +
		"with markers such as '=== Page 3 ===' (spreadsheet rows as tab-separated cells); 2000 lines or 256 KiB per call. Scanned or locked files give no text.", readOnly},
		lines, documentHandler)
	addTool[wire.WriteResult](r, tool{"file_write", "file.write", "Write a file", "Create or replace a file (atomically), or append to it.", destructive},
		func(p map[string]*jsonschema.Schema) {
			p["encoding"].Enum, p["encoding"].Default = []any{"utf8", "base64"}, json.RawMessage(`"utf8"`)
		}, forward[wire.WriteArgs])
	addTool[wire.EditResult](r, tool{"file_edit", "file.edit", "Edit a file", "Replace exact text in a file (old_text/new_text, or edits applied in order, all or none); each old_text must occur once unless replace_all. Returns the diff.", destructive},
		nil, forward[wire.EditArgs])
	addTool[wire.PatchResult](r, tool{"apply_patch", "file.apply_patch", "Apply a patch", patchDesc, destructive},
		nil, forward[wire.PatchArgs])
	addTool[wire.ListResult](r, tool{"folder_list", "folder.list", "List a folder", "List a folder's files and sub-folders with sizes and dates (at most 1000 entries).", readOnly},
		func(p map[string]*jsonschema.Schema) { bound(p["depth"], 1, fsbox.MaxListDepth, 1) }, forward[wire.ListArgs])
	addTool[wire.FindResult](r, tool{"file_find", "file.find", "Find files", "Find files whose path matches a glob (** matches any number of folders).", readOnly},
		nil, forward[wire.FindArgs])
	addTool[wire.GrepResult](r, tool{"file_grep", "file.grep", "Search file contents", "Search text files for a regular expression; returns path, line number and line.", readOnly},
		func(p map[string]*jsonschema.Schema) {
			bound(p["max_matches"], 1, sandbox.MaxGrepMatches, sandbox.DefaultMatches)
		}, forward[wire.GrepArgs])
	addTool[wire.FolderResult](r, tool{"folder_create", "folder.create", "Make a folder", "Make a folder and any missing folders above it; one that exists is fine (created is then false).", idempotent},
		nil, forward[wire.FolderArgs])
	addTool[wire.PathResult](r, tool{"file_delete", "file.delete", "Delete a file or folder", "Delete a file, or a folder (one that is not empty needs recursive=true).", sdk.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}},
		nil, forward[wire.DeleteArgs])
	addTool[wire.MoveResult](r, tool{"file_move", "file.move", "Move or rename", "Move or rename a file or folder; the destination must not exist.", destructive},
		nil, forward[wire.MoveArgs])
	timeout := o.CommandTimeout
	if timeout <= 0 {
		timeout = execbox.DefaultTimeout
	}
	addTool[wire.RunResult](r, tool{"run_command", "command.run", "Run a command", "Run a shell command in the sandbox; output is capped. No network unless asked: allowed_domains and package_managers give those domains, the ones no rule covers asked of the owner in one question before it starts (list every domain it needs: others are refused at once); network=true any public domain, asked every time. " +
		"Programs reach them through Corral's proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY; ssh: ProxyCommand via socks5 127.0.0.1:3128), never this computer or the home network; network.refused says what was refused.",
		sdk.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(true)}},
		func(p map[string]*jsonschema.Schema) {
			names := []any{}
			for _, b := range netgate.Bundles() {
				names = append(names, b.Name)
			}
			p["package_managers"].Items.Enum = names
			delete(p, "stream") // set by runHandler when the client wants progress
			ms := float64(timeout.Milliseconds())
			bound(p["timeout_ms"], float64(minCommandTimeout.Milliseconds()), ms, ms)
		}, runHandler)
	addTool[wire.Saved](r, tool{"save_result_page", "result.save", "Save a result page", "Save a report in output/ and get links for the owner. markdown: short text you also show in chat (it comes back, with view_url to give people); html: long reports (only links come back).", additive},
		func(p map[string]*jsonschema.Schema) {
			p["format"].Enum, p["format"].Default = []any{"markdown", "html"}, json.RawMessage(`"markdown"`)
		}, forward[wire.ResultArgs])
	addTool[wire.LinkResult](r, tool{"generate_link", "link.create", "Share a file", "Make a signed, expiring link to a file or folder in your folder or share/ (output/ is usual), for the owner to open in a browser.", additive},
		func(p map[string]*jsonschema.Schema) {
			p["expires_in"] = &jsonschema.Schema{
				Type:        "string",
				Pattern:     expiresPattern,
				Description: `seconds ("3600") or a duration ("30m", "7d"), at least 1m; default: the owner's setting`,
			}
		}, forward[wire.LinkArgs])
	addTool[wire.SessionInfo](r, tool{"session_info", "session.info", "About this session", "Who you are to Corral: your scope, the shared and output folders, other folders you may use, and whether commands can run.", readOnly},
		nil, forward[wire.InfoArgs])
	s.AddReceivingMiddleware(checkArguments(r.schemas))
	return s
}

// checkArguments answers a tools/call that lacks a required argument,
// names one the tool does not have, gives its arguments as something
// other than an object or a value the SDK cannot decode (1e999), gives
// one that does not fit its schema (badArguments: type, bounds, enum,
// pattern, items, fields) or arguments that do not go together, with an
// isError result in a sentence ("file_read needs a value for path (the
// file to read)."), before the SDK's own validation, whose wording is a
// validator's, sees it; every other call goes on to that validation
// (which then finds nothing) and to the SDK's defaults, except that
// optional arguments given as null are dropped (null means "not given").
// aliases are the tools' names before this one: a call by an old name is
// the tool's, though the list shows only the new name.
var aliases = map[string]string{"create_directory": "folder_create"}

func checkArguments(schemas map[string]*jsonschema.Schema) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			r, ok := req.(*sdk.CallToolRequest)
			if ok && r.Params != nil {
				if name, ok := aliases[r.Params.Name]; ok {
					r.Params.Name = name
				}
			}
			if !ok || r.Params == nil || schemas[r.Params.Name] == nil {
				return next(ctx, method, req)
			}
			name, schema := r.Params.Name, schemas[r.Params.Name]
			if rpc.LoneSurrogate(r.Params.Arguments) {
				// Decoded, the string would name another file (U+FFFD).
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: rpc.LoneSurrogateMessage}
			}
			args := map[string]json.RawMessage{}
			if raw := r.Params.Arguments; len(raw) > 0 && json.Unmarshal(raw, &args) != nil {
				return refuse(fmt.Sprintf("%s's arguments must be a JSON object of named arguments.", name)), nil
			}

			// null for an optional argument means leaving it out (a null
			// context meant no context when the schema allowed null); a
			// required one that is null is named as missing below.
			dropped := false
			for k, v := range args {
				if isNull(v) && !slices.Contains(schema.Required, k) {
					delete(args, k)
					dropped = true
				}
			}
			if dropped {
				raw, err := json.Marshal(args)
				if err != nil {
					return nil, err
				}
				r.Params.Arguments = raw
			}
			if name == "generate_link" {
				if v, ok := seconds(args["expires_in"]); ok {
					args["expires_in"] = v
					raw, err := json.Marshal(args)
					if err != nil {
						return nil, err
					}
					r.Params.Arguments = raw
				}
			}
			msg := argumentProblems(name, schema, args)
			for _, k := range schema.PropertyOrder {
				// What the SDK would fail to decode, in Go's words.
				var v any
				if raw, ok := args[k]; ok && msg == "" && json.Unmarshal(raw, &v) != nil {
					msg = fmt.Sprintf("%s's argument %s is not a value Corral can read (a number too large, say).", name, k)
				}
			}
			if msg == "" {
				msg = badArguments(name, schema, args)
			}
			if msg == "" && name == "file_read" {
				msg = readConflict(args)
			}
			if msg == "" && name == "generate_link" {
				msg = shortLink(args["expires_in"])
			}
			if _, edits := args["edits"]; msg == "" && name == "file_edit" && !edits && (args["old_text"] == nil || args["new_text"] == nil) {
				// old_text and new_text are required unless edits are given.
				msg = "file_edit needs values for old_text (the exact text to replace) and new_text (the replacement text), or a list of edits."
			}
			if msg != "" {
				return refuse(msg), nil
			}
			res, err := next(ctx, method, req)
			if tr, ok := res.(*sdk.CallToolResult); ok {
				if tr.IsError && len(tr.Content) == 1 {
					if tc, ok := tr.Content[0].(*sdk.TextContent); ok {
						tc.Text = schemaMismatch(name, tc.Text)
					}
				}
				return oneTextResult{tr}, err
			}
			return res, err
		}
	}
}

// readConflict says which of file_read's arguments, as the client gave
// them, do not go together, or returns "" (file.read's own check; a
// base64 read here always goes by byte_offset).
func readConflict(args map[string]json.RawMessage) string {
	has := func(k string) bool { _, ok := args[k]; return ok }
	b64 := string(args["encoding"]) == `"base64"`
	return sandbox.ReadConflict(b64, has("offset"), has("limit"), has("tail"), b64 || has("byte_offset"))
}

// minLinkLife is the shortest expires_in generate_link takes: a shorter
// link would be dead before anyone opened it.
const minLinkLife = time.Minute

// shortLink says so when expires_in (already checked against its
// pattern) is shorter than minLinkLife, or returns "".
func shortLink(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) != nil || s == "" {
		return ""
	}
	var d float64 // seconds
	for _, m := range durationPart.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.ParseFloat(m[1], 64)
		d += n * unitSeconds[m[2]]
	}
	if d < minLinkLife.Seconds() {
		return fmt.Sprintf("generate_link's expires_in must be at least 1m (60 seconds), not %q: a link that short would stop working before anyone opened it.", s)
	}
	return ""
}

var (
	durationPart = regexp.MustCompile(`([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h|d)`)
	unitSeconds  = map[string]float64{"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}
)

// badArguments checks each argument against its schema (type, bounds,
// enum, pattern, items, fields), and says in Corral's own sentence what
// the first one that does not fit should be, or returns "". The SDK's
// validation, which follows, then finds nothing to say.
func badArguments(tool string, s *jsonschema.Schema, args map[string]json.RawMessage) string {
	for _, k := range s.PropertyOrder {
		raw, ok := args[k]
		if !ok {
			continue
		}
		d := json.NewDecoder(strings.NewReader(string(raw)))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			continue // said by checkArguments
		}
		if msg := badValue(tool+"'s "+k, s.Properties[k], v); msg != "" {
			return msg
		}
	}
	return ""
}

// badValue says what v, the value of what (e.g. "file_read's limit"),
// should be if it does not fit s, or returns "".
func badValue(what string, s *jsonschema.Schema, v any) string {
	if s == nil {
		return ""
	}
	wrong := func(want string) string {
		b, _ := json.Marshal(v)
		got := string(b)
		if len(got) > 40 {
			got = got[:37] + "..."
		}
		return fmt.Sprintf("%s must be %s, not %s.", what, want, got)
	}
	switch s.Type {
	case "string":
		str, ok := v.(string)
		switch {
		case len(s.Enum) > 0 && (!ok || !slices.Contains(s.Enum, any(str))):
			var names []string
			for _, e := range s.Enum {
				names = append(names, fmt.Sprint(e))
			}
			return wrong(plural(len(names), "", "one of ") + or(names))
		case !ok:
			return wrong("a string")
		case s.Pattern != "" && !regexp.MustCompile(s.Pattern).MatchString(str):
			return wrong(patternWords[s.Pattern])
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return wrong("true or false")
		}
	case "integer", "number":
		n, ok := v.(json.Number)
		f, err := n.Float64()
		whole := true
		if s.Type == "integer" {
			_, ierr := strconv.ParseInt(string(n), 10, 64)
			whole = ierr == nil
		}
		if !ok || err != nil || !whole || (s.Minimum != nil && f < *s.Minimum) || (s.Maximum != nil && f > *s.Maximum) {
			return wrong(numberRange(s))
		}
	case "array":
		items, ok := v.([]any)
		switch {
		case !ok:
			return wrong("a list")
		case s.MinItems != nil && len(items) < *s.MinItems, s.MaxItems != nil && len(items) > *s.MaxItems:
			lo, hi := 0, math.MaxInt
			if s.MinItems != nil {
				lo = *s.MinItems
			}
			if s.MaxItems != nil {
				hi = *s.MaxItems
			}
			return wrong(fmt.Sprintf("a list of %d to %d items", lo, hi))
		}
		for i, it := range items {
			if msg := badValue(fmt.Sprintf("%s[%d]", what, i), s.Items, it); msg != "" {
				return msg
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return wrong("an object")
		}
		keys := slices.Sorted(maps.Keys(obj))
		for _, k := range keys {
			p := s.Properties[k]
			if p == nil && s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil {
				p = s.AdditionalProperties
			}
			if p == nil && s.Properties != nil {
				return fmt.Sprintf("%s has no field %s; its fields are %s.", what, k, and(s.PropertyOrder))
			}
			if msg := badValue(what+"."+k, p, obj[k]); msg != "" {
				return msg
			}
		}
		for _, k := range s.Required {
			if _, ok := obj[k]; !ok {
				return fmt.Sprintf("%s needs a value for %s.", what, k)
			}
		}
	}
	return ""
}

// numberRange says which numbers s takes: "a whole number from 1 to 5".
func numberRange(s *jsonschema.Schema) string {
	kind := "a number"
	if s.Type == "integer" {
		kind = "a whole number"
	}
	switch {
	case s.Minimum != nil && s.Maximum != nil:
		return fmt.Sprintf("%s from %s to %s", kind, num(*s.Minimum), num(*s.Maximum))
	case s.Minimum != nil:
		return fmt.Sprintf("%s of at least %s", kind, num(*s.Minimum))
	case s.Maximum != nil:
		return fmt.Sprintf("%s of at most %s", kind, num(*s.Maximum))
	}
	return kind
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// or joins words as a sentence offers them: "a", "a or b", "a, b or c".
func or(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// refuse is the isError result saying msg.
func refuse(msg string) *sdk.CallToolResult {
	res := &sdk.CallToolResult{}
	res.SetError(errors.New(msg))
	return res
}

// schemaMismatch rewrites the SDK's report of arguments that fail the
// input schema (`validating "arguments": validating root: validating
// /properties/offset: type: …`) as a sentence naming the tool and the
// argument; any other text is returned as it is.
func schemaMismatch(tool, text string) string {
	detail, ok := strings.CutPrefix(text, `validating "arguments": `)
	if !ok {
		return text
	}
	detail = strings.TrimPrefix(detail, "validating root: ")
	if rest, ok := strings.CutPrefix(detail, "validating /properties/"); ok {
		if name, why, ok := strings.Cut(rest, ": "); ok {
			// A nested property or item adds its own "validating …: ".
			for strings.HasPrefix(why, "validating /") {
				_, why, _ = strings.Cut(why, ": ")
			}
			detail = name + ": " + why
		}
	}
	return fmt.Sprintf("%s's arguments do not fit its input schema: %s.", tool, strings.TrimSuffix(detail, "."))
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

// patternWords says what each pattern of the tools' schemas takes.
var patternWords = map[string]string{
	expiresPattern: `seconds ("3600") or a duration such as "30m", "1h" or "7d"`,
}

// expiresPattern is generate_link's expires_in: whole seconds, or a
// duration as Corral's config takes it (Go's units and d for days).
const expiresPattern = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h|d))+$|^[0-9]+$`

// seconds turns an expires_in given as a number (3600) or as digits
// ("3600") into the duration string "3600s", which fits the schema and
// which link.create reads as the same time; ok is false for anything else.
func seconds(v json.RawMessage) (json.RawMessage, bool) {
	s := strings.Trim(string(v), `"`)
	if s == "" || len(s) > 12 || strings.Trim(s, "0123456789") != "" {
		return nil, false
	}
	return json.RawMessage(`"` + s + `s"`), true
}

// argumentProblems says in sentences which arguments of the tool name are
// unknown or missing (a required one that is null counts as missing), or
// returns "".
func argumentProblems(name string, s *jsonschema.Schema, args map[string]json.RawMessage) string {
	var unknown, missing []string
	for k := range args {
		if s.Properties[k] == nil {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range s.Required {
		if v, ok := args[k]; !ok || isNull(v) {
			if d := s.Properties[k].Description; d != "" {
				k += " (" + d + ")"
			}
			missing = append(missing, k)
		}
	}
	var out []string
	if len(unknown) > 0 {
		out = append(out, fmt.Sprintf("%s has no %s %s; its parameters are %s.", name, plural(len(unknown), "parameter", "parameters"), and(unknown), and(s.PropertyOrder)))
	}
	if len(missing) > 0 {
		who := name
		if len(out) > 0 {
			who = "It"
		}
		out = append(out, fmt.Sprintf("%s needs %s %s.", who, plural(len(missing), "a value for", "values for"), and(missing)))
	}
	return strings.Join(out, " ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// and joins words as a sentence lists them: "a", "a and b", "a, b and c".
func and(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// Error is what a backend returns for a Corral error: a polite sentence.
type Error interface {
	error
	Kind() string
}

// toolError turns a backend failure into an isError result text.
func toolError(err error) error {
	var ke Error
	if errors.As(err, &ke) && ke.Kind() != "" {
		return fmt.Errorf("%s (%s)", ke.Error(), ke.Kind())
	}
	return err
}

// forward calls method with the tool's arguments and answers its JSON result.
func forward[In any](b Backend, method string) sdk.ToolHandlerFor[In, any] {
	return func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		raw, err := b.Call(ctx, method, in)
		if err != nil {
			return nil, nil, toolError(err)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}, StructuredContent: raw}, nil, nil
	}
}

// readHandler is file.read's handler: images become MCP image content, and
// a cut text says how to read on. tail is file.read's own: one call.
func readHandler(b Backend, method string) sdk.ToolHandlerFor[wire.ReadArgs, any] {
	return func(ctx context.Context, _ *sdk.CallToolRequest, in wire.ReadArgs) (*sdk.CallToolResult, any, error) {
		// The schema's defaults are filled in (offset 1, limit 2000):
		// which arguments were given is checked on the call as it came
		// (checkArguments, readConflict), so tail and encoding=base64
		// take the place of offset and limit here.
		if in.Encoding == "base64" || in.Tail > 0 {
			in.Offset, in.Limit = 0, 0
		}
		if in.Encoding == "text" {
			in.Encoding = "" // the default, as file.read takes it
		}
		v, raw, err := readResult(ctx, b, method, in)
		if err != nil {
			return nil, nil, toolError(err)
		}
		switch r := v.(type) {
		case wire.BinaryShape:
			// The bytes once, in the text content (file.read's JSON as
			// it came, data included); structuredContent the rest.
			if raw == nil {
				if raw, err = rpc.Marshal(r); err != nil {
					return nil, nil, err
				}
			}
			out := readOut{Type: r.Type, Path: r.Path, Bytes: r.Bytes, Encoding: r.Encoding, Offset: r.Offset, Length: r.Length, Truncated: r.Truncated}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}, StructuredContent: out}, nil, nil
		case wire.ImageShape:
			if n := base64.StdEncoding.EncodedLen(int(r.Bytes)); n > maxAnswer-answerSlack {
				return nil, nil, fmt.Errorf("%s is an image of %.1f MiB; sent as an image it would make an answer larger than the %d MiB a client takes in one message. Read its bytes in pieces with encoding=base64 and byte_offset (%d MiB at a time), or make a smaller copy with run_command.",
					in.Path, float64(r.Bytes)/(1<<20), maxAnswer>>20, fsbox.MaxBase64Bytes>>20)
			}
			out := readOut{Type: r.Type, Path: r.Path, Bytes: r.Bytes, MimeType: r.MimeType}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: r.Data, MIMEType: r.MimeType}}, StructuredContent: out}, nil, nil
		case wire.TextShape:
			text := r.Content
			if r.Truncated {
				path := r.Path
				if path == "" {
					path = in.Path
				}
				first := max(in.Offset, 1)
				if in.Tail > 0 {
					first = max(1, r.TotalLines-in.Tail+1)
				}
				text = withReadOnHint(text, path, first, r.OutputLines, r.TotalLines, r.TruncatedBy != nil && *r.TruncatedBy == fsbox.ByBytes)
			}
			if r.Encoding != "" {
				text = strings.TrimSuffix(text, "\n") + "\n[This file is not UTF-8; it was read as " + r.Encoding + " and converted. Writing it back with file_write stores UTF-8.]"
			}
			// structuredContent as a value, not raw: encoding/json checks
			// and compacts a json.RawMessage byte by byte, several times
			// slower than it escapes a string, and the content is most of it.
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: r}, nil, nil
		}
		return nil, nil, fmt.Errorf("file.read answered something Corral's file_read does not know: %.100s", raw)
	}
}

// readResult performs a file.read and returns its answer as the shape
// its type names (wire.TextShape, wire.ImageShape, wire.BinaryShape):
// from a ValueBackend as it is (raw nil), from any other decoded from
// its JSON, raw.
func readResult(ctx context.Context, b Backend, method string, in wire.ReadArgs) (v any, raw json.RawMessage, err error) {
	if vb, ok := b.(ValueBackend); ok {
		v, err = vb.CallValue(ctx, method, in)
		return v, nil, err
	}
	if raw, err = b.Call(ctx, method, in); err != nil {
		return nil, nil, err
	}
	var t struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, raw, err
	}
	switch t.Type {
	case "image":
		var x wire.ImageShape
		err = json.Unmarshal(raw, &x)
		v = x
	case "binary":
		var x wire.BinaryShape
		err = json.Unmarshal(raw, &x)
		v = x
	default:
		var x wire.TextShape
		err = json.Unmarshal(raw, &x)
		v = x
	}
	return v, raw, err
}

// oneTextResult is a tool's result that encodes a single text content
// and a structuredContent in one pass (rpc.AppendString, TextShape's
// AppendJSON, a raw answer as it came); the SDK encodes a text content
// and then checks and compacts it, and compacts the whole again, byte by
// byte. Any other result encodes as the SDK's.
type oneTextResult struct{ *sdk.CallToolResult }

func (r oneTextResult) MarshalJSON() ([]byte, error) {
	res := r.CallToolResult
	tc, ok := (*sdk.TextContent)(nil), len(res.Content) == 1 && res.Meta == nil
	if ok {
		tc, ok = res.Content[0].(*sdk.TextContent)
	}
	if !ok || tc.Meta != nil || tc.Annotations != nil {
		return res.MarshalJSON()
	}
	var structured []byte
	switch v := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		structured = v
	case wire.TextShape:
		structured = v.AppendJSON(make([]byte, 0, len(v.Content)+256))
	default:
		return res.MarshalJSON()
	}
	// The rest (isError, and the resultType the SDK may set) as the SDK
	// writes it, after the members built here.
	rest := *res
	rest.Content, rest.StructuredContent = nil, nil
	tail, err := rest.MarshalJSON()
	if err != nil {
		return nil, err
	}
	tail, ok = bytes.CutPrefix(tail, []byte(`{"content":null`))
	if !ok {
		return res.MarshalJSON()
	}
	b := make([]byte, 0, len(tc.Text)+len(structured)+len(tail)+64)
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = rpc.AppendString(b, tc.Text)
	b = append(b, "}]"...)
	if structured != nil {
		b = append(b, `,"structuredContent":`...)
		b = append(b, structured...)
	}
	return append(b, tail...), nil
}

// maxAnswer is the largest answer a tool gives, encoded: clients take
// messages up to 10 MiB (the TypeScript SDK's stdio transport drops longer
// lines, and so the session). answerSlack is room for the envelope.
const (
	maxAnswer   = 10 << 20
	answerSlack = 64 << 10
)

// jsonLen is how long s is as a JSON string, at most: Go's encoder
// escapes quotes, backslashes, control characters, <, > and &, U+2028,
// U+2029 and invalid UTF-8 in up to 6 bytes.
func jsonLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			n += 2
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 6
		case c < utf8.RuneSelf:
			n++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				n += 6
			} else {
				n += size
			}
			i += size
			continue
		}
		i++
	}
	return n
}

// answerLen is how long res's content and a raw structuredContent are,
// encoded, at most.
func answerLen(res *sdk.CallToolResult) int {
	n := 64
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			n += jsonLen(c.Text) + 32
		case *sdk.ImageContent:
			n += base64.StdEncoding.EncodedLen(len(c.Data)) + len(c.MIMEType) + 48
		default:
			b, _ := json.Marshal(c)
			n += len(b)
		}
	}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok {
		n += len(raw)
	} else if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		n += len(b)
	}
	return n
}

// documentHandler is file.document_read's handler: the text, and when it
// was cut, how to read on.
func documentHandler(b Backend, method string) sdk.ToolHandlerFor[wire.DocumentReadArgs, any] {
	return func(ctx context.Context, _ *sdk.CallToolRequest, in wire.DocumentReadArgs) (*sdk.CallToolResult, any, error) {
		v, raw, err := callBoth(ctx, b, method, in)
		if err != nil {
			return nil, nil, toolError(err)
		}
		r, ok := v.(wire.DocumentResult)
		if !ok {
			if err := json.Unmarshal(raw, &r); err != nil {
				return nil, nil, err
			}
		}
		var sb strings.Builder
		sb.WriteString(r.Content)
		if r.TotalLines == 0 {
			sb.WriteString("[The document holds no text; if it is a scanned PDF, its pages are images.]")
		}
		if r.Truncated {
			if !strings.HasSuffix(r.Content, "\n") {
				sb.WriteByte('\n')
			}
			first := max(in.Offset, 1)
			last, next := first+r.OutputLines-1, first+r.OutputLines
			if r.TruncatedBy != nil && *r.TruncatedBy == fsbox.ByBytes && !strings.HasSuffix(r.Content, "\n") {
				fmt.Fprintf(&sb, "\n[Line %d of %d is longer than document_read returns; these are its first %d bytes.", last, r.TotalLines, len(r.Content))
				if next <= r.TotalLines {
					fmt.Fprintf(&sb, " Call document_read with offset=%d for the lines after it.", next)
				}
				sb.WriteByte(']')
			} else {
				fmt.Fprintf(&sb, "\n[Showing lines %d–%d of %d. Call document_read with offset=%d to read on.]", first, last, r.TotalLines, next)
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: sb.String()}}, StructuredContent: raw}, nil, nil
	}
}

// withReadOnHint appends to content, lines first to first+lines-1 of a
// file of total lines, how to read on. Only a cut by bytes can fall
// inside a line, and then content is the start of that one line alone
// (file.read returns whole lines otherwise): file_read cannot give the
// rest of it, so the hint names a run_command that can (asking for as
// much at a time as file.read returns at most), and offers the next line
// only if there is one.
func withReadOnHint(content, path string, first, lines, total int, byBytes bool) string {
	var sb strings.Builder
	sb.WriteString(content)
	if !strings.HasSuffix(content, "\n") {
		sb.WriteByte('\n')
	}
	last, next := first+lines-1, first+lines
	switch {
	case byBytes && !strings.HasSuffix(content, "\n"):
		file := shellQuote(path)
		var cmd string
		if total == 1 {
			cmd = fmt.Sprintf("tail -c +%d %s | head -c %d", len(content)+1, file, fsbox.MaxReadBytes)
		} else {
			cmd = fmt.Sprintf("sed -n %dp %s | tail -c +%d | head -c %d", last, file, len(content)+1, fsbox.MaxReadBytes)
		}
		fmt.Fprintf(&sb, "\n[Line %d of %d is longer than file_read returns; these are its first %d bytes. To read the rest of it, use run_command, e.g. `%s`.", last, total, len(content), cmd)
		if next <= total {
			fmt.Fprintf(&sb, " Call file_read with offset=%d for the lines after it.", next)
		}
		sb.WriteByte(']')
	case next <= total:
		fmt.Fprintf(&sb, "\n[Showing lines %d–%d of %d. Call file_read with offset=%d to read on.]", first, last, total, next)
	default:
		fmt.Fprintf(&sb, "\n[Showing lines %d–%d of %d.]", first, last, total)
	}
	return sb.String()
}

// shellQuote quotes path for /bin/sh, so that it is one word that does not
// start with '-'.
func shellQuote(path string) string {
	if strings.HasPrefix(path, "-") {
		path = "./" + path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}

// maxReadMany bounds read_multiple_files.
const maxReadMany = 20

// readManyHandler reads each path with file.read, one after another, and
// answers one text block per file headed by its path; a failure is that
// file's text, not the call's.
func readManyHandler(b Backend, method string) sdk.ToolHandlerFor[readManyIn, any] {
	one := readHandler(b, method)
	return func(ctx context.Context, req *sdk.CallToolRequest, in readManyIn) (*sdk.CallToolResult, any, error) {
		if len(in.Paths) == 0 || len(in.Paths) > maxReadMany {
			return nil, nil, fmt.Errorf("Give between 1 and %d paths.", maxReadMany)
		}
		res := &sdk.CallToolResult{}
		out := readManyOut{Files: []readManyFile{}}
		size := answerSlack
		for i, p := range in.Paths {
			r, _, err := one(ctx, req, wire.ReadArgs{Path: p, Reason: in.Reason, Context: in.Context})
			if err == nil {
				// Its content and structured copy (a text is in both).
				if size += answerLen(r) + jsonLen(p); size > maxAnswer {
					rest := in.Paths[i:]
					msg := fmt.Sprintf("Not read, to keep this answer under the %d MiB a client takes in one message: %s. Call read_multiple_files again with %s, or file_read for each.", maxAnswer>>20, strings.Join(rest, ", "), plural(len(rest), "that path", "those paths"))
					res.Content = append(res.Content, &sdk.TextContent{Text: "[" + msg + "]"})
					for _, q := range rest {
						out.Files = append(out.Files, readManyFile{readOut: readOut{Path: q}, Error: msg})
					}
					break
				}
			}
			if err != nil {
				res.Content = append(res.Content, &sdk.TextContent{Text: p + ": " + err.Error()})
				out.Files = append(out.Files, readManyFile{readOut: readOut{Path: p}, Error: err.Error()})
				continue
			}
			res.Content = append(res.Content, &sdk.TextContent{Text: "== " + p + " ==\n"})
			res.Content = append(res.Content, r.Content...)
			f := readManyFile{}
			if raw, ok := r.StructuredContent.(json.RawMessage); ok {
				json.Unmarshal(raw, &f.readOut)
			} else if o, ok := r.StructuredContent.(readOut); ok {
				f.readOut = o
			} else if o, ok := r.StructuredContent.(wire.TextShape); ok {
				f.readOut = readOut{Type: o.Type, Path: o.Path, Bytes: o.Bytes, Content: o.Content, TotalLines: o.TotalLines,
					OutputLines: o.OutputLines, Truncated: o.Truncated, TruncatedBy: o.TruncatedBy, Encoding: o.Encoding}
			}
			out.Files = append(out.Files, f)
		}
		res.StructuredContent = out
		return res, nil, nil
	}
}
