// Package mcp exposes Corral's agent methods as MCP tools (Model Context
// Protocol), with the official Go SDK. The same tools serve `corral mcp`
// (stdio, forwarding to the daemon over the WebSocket) and POST /mcp on the
// daemon (streamable HTTP, dispatching in-process as the authenticated
// client), so approvals, audit and the tray see every call either way.
package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Backend performs one Corral method as the connected client.
type Backend interface {
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// Context is the optional request context of PROTOCOL.md section 4.
type Context struct {
	SessionID        string `json:"session_id,omitempty" jsonschema:"selects the companion scope when it is 'companion'"`
	UserID           string `json:"user_id,omitempty" jsonschema:"a configured user whose folder to use (only if this client may act for that user)"`
	AppID            string `json:"app_id,omitempty"`
	ChannelName      string `json:"channel_name,omitempty"`
	ConversationType string `json:"conversation_type,omitempty"`
}

const pathRules = "Paths are relative to your private folder (e.g. notes/todo.md). " +
	"'share/…' is the folder shared by every user and the companion; 'output/…' is where finished results belong. " +
	"Absolute paths and '~/…' outside your folder need the owner's approval, which may take a while or be denied."

type readIn struct {
	Path    string   `json:"path" jsonschema:"file to read, e.g. notes/todo.md or share/docs/a.txt"`
	Offset  int      `json:"offset,omitempty" jsonschema:"first line to return, 1-based"`
	Limit   int      `json:"limit,omitempty" jsonschema:"how many lines to return (at most 2000 per call)"`
	Reason  string   `json:"reason,omitempty" jsonschema:"why you need it; shown to the owner if approval is needed"`
	Context *Context `json:"context,omitempty"`
}

type writeIn struct {
	Path     string   `json:"path" jsonschema:"file to write; parent folders are created"`
	Content  string   `json:"content" jsonschema:"the text to write (or base64 with encoding=base64)"`
	Append   bool     `json:"append,omitempty" jsonschema:"append instead of replacing the file"`
	Encoding string   `json:"encoding,omitempty" jsonschema:"utf8 (default) or base64 for binary content"`
	Reason   string   `json:"reason,omitempty" jsonschema:"why; shown to the owner if approval is needed"`
	Context  *Context `json:"context,omitempty"`
}

type editIn struct {
	Path       string   `json:"path" jsonschema:"file to edit"`
	OldText    string   `json:"old_text" jsonschema:"exact text to replace; must occur exactly once unless replace_all"`
	NewText    string   `json:"new_text" jsonschema:"replacement text"`
	ReplaceAll bool     `json:"replace_all,omitempty" jsonschema:"replace every occurrence"`
	Reason     string   `json:"reason,omitempty"`
	Context    *Context `json:"context,omitempty"`
}

type listIn struct {
	Path    string   `json:"path,omitempty" jsonschema:"folder to list; empty for your whole folder"`
	Depth   int      `json:"depth,omitempty" jsonschema:"how deep to list, 1 to 5 (default 1)"`
	Reason  string   `json:"reason,omitempty"`
	Context *Context `json:"context,omitempty"`
}

type findIn struct {
	Pattern string   `json:"pattern" jsonschema:"glob such as **/*.md or notes/*.txt"`
	Path    string   `json:"path,omitempty" jsonschema:"folder to search in (default: your folder)"`
	Reason  string   `json:"reason,omitempty"`
	Context *Context `json:"context,omitempty"`
}

type grepIn struct {
	Pattern    string   `json:"pattern" jsonschema:"regular expression (RE2 syntax)"`
	Path       string   `json:"path,omitempty" jsonschema:"folder or file to search (default: your folder)"`
	Glob       string   `json:"glob,omitempty" jsonschema:"only files whose path matches this glob"`
	MaxMatches int      `json:"max_matches,omitempty" jsonschema:"at most this many matches (default 100, max 1000)"`
	Reason     string   `json:"reason,omitempty"`
	Context    *Context `json:"context,omitempty"`
}

type deleteIn struct {
	Path      string   `json:"path" jsonschema:"file or folder to delete"`
	Recursive bool     `json:"recursive,omitempty" jsonschema:"delete a folder with everything in it"`
	Reason    string   `json:"reason,omitempty"`
	Context   *Context `json:"context,omitempty"`
}

type moveIn struct {
	From    string   `json:"from" jsonschema:"path to move"`
	To      string   `json:"to" jsonschema:"new path; must not exist yet"`
	Reason  string   `json:"reason,omitempty"`
	Context *Context `json:"context,omitempty"`
}

type runIn struct {
	Command    string            `json:"command" jsonschema:"shell command, run as /bin/sh -c COMMAND"`
	WorkingDir string            `json:"working_dir,omitempty" jsonschema:"folder relative to your home folder; 'playground' for the scratch folder"`
	Network    bool              `json:"network,omitempty" jsonschema:"ask the owner for network access for this one run (asked every time)"`
	TimeoutMs  int               `json:"timeout_ms,omitempty" jsonschema:"kill the command after this many milliseconds"`
	Env        map[string]string `json:"env,omitempty" jsonschema:"extra environment variables"`
	Stdin      string            `json:"stdin,omitempty" jsonschema:"text fed to the command's standard input"`
	Context    *Context          `json:"context,omitempty"`
}

type resultIn struct {
	Title   string   `json:"title" jsonschema:"title of the page"`
	Content string   `json:"content" jsonschema:"Markdown or HTML"`
	Format  string   `json:"format,omitempty" jsonschema:"markdown (short text to show in chat; default) or html (long or complex reports)"`
	Context *Context `json:"context,omitempty"`
}

type linkIn struct {
	Path      string   `json:"path" jsonschema:"file or folder in your folder or share/ to link"`
	ExpiresIn string   `json:"expires_in,omitempty" jsonschema:"how long the link works, e.g. 1h or 7d (default 24h)"`
	Context   *Context `json:"context,omitempty"`
}

type infoIn struct {
	Context *Context `json:"context,omitempty"`
}

func ptr(b bool) *bool { return &b }

// tool describes one MCP tool and the Corral method behind it.
type tool struct {
	name, method, title, desc string
	ann                       sdk.ToolAnnotations
}

var (
	readOnly    = sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	additive    = sdk.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	destructive = sdk.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}
)

// NewServer returns an MCP server whose tools call b.
func NewServer(b Backend, version string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "corral", Title: "Corral", Version: version}, &sdk.ServerOptions{
		Instructions: "Corral gives you a private folder on the owner's computer. " + pathRules +
			" Commands run in a sandbox: your folder (as $HOME) and its playground/ are writable, share/ is at /share, everything else is read-only, and there is no network unless you ask with network=true and the owner allows it for that one run.",
	})
	add := func(t tool, register func(*sdk.Tool)) {
		ann := t.ann
		ann.Title = t.title
		register(&sdk.Tool{Name: t.name, Title: t.title, Description: t.desc, Annotations: &ann})
	}
	add(tool{"file_read", "file.read", "Read a file", "Read a text file (up to 2000 lines or 256 KiB per call; use offset/limit for more) or an image. " + pathRules, readOnly},
		func(t *sdk.Tool) { sdk.AddTool(s, t, readHandler(b)) })
	add(tool{"file_write", "file.write", "Write a file", "Create or replace a file (atomically), or append to it. " + pathRules, destructive},
		func(t *sdk.Tool) { sdk.AddTool(s, t, forward[writeIn](b, "file.write")) })
	add(tool{"file_edit", "file.edit", "Edit a file", "Replace exact text in a file. Fails with a conflict unless old_text occurs exactly once (or replace_all is set). " + pathRules, destructive},
		func(t *sdk.Tool) { sdk.AddTool(s, t, forward[editIn](b, "file.edit")) })
	add(tool{"folder_list", "folder.list", "List a folder", "List a folder's files and sub-folders with sizes and dates (depth 1–5, at most 1000 entries). " + pathRules, readOnly},
		func(t *sdk.Tool) { sdk.AddTool(s, t, forward[listIn](b, "folder.list")) })
	add(tool{"file_find", "file.find", "Find files", "Find files whose path matches a glob (** matches any number of folders). " + pathRules, readOnly},
		func(t *sdk.Tool) { sdk.AddTool(s, t, forward[findIn](b, "file.find")) })
	add(tool{"file_grep", "file.grep", "Search file contents", "Search text files for a regular expression; returns path, line number and line. " + pathRules, readOnly},
		func(t *sdk.Tool) { sdk.AddTool(s, t, forward[grepIn](b, "file.grep")) })
	add(tool{"file_delete", "file.delete", "Delete a file or folder", "Delete a file, or a folder (a non-empty folder needs recursive=true). " + pathRules, destructive},
		func(t *sdk.Tool) { sdk.AddTool(s, t, forward[deleteIn](b, "file.delete")) })
	add(tool{"file_move", "file.move", "Move or rename", "Move or rename a file or folder; the destination must not exist. " + pathRules, destructive},
		func(t *sdk.Tool) { sdk.AddTool(s, t, forward[moveIn](b, "file.move")) })
	add(tool{"run_command", "command.run", "Run a command", "Run a shell command in a sandbox. $HOME is your folder and $HOME/playground a scratch folder; both are writable, as is /share. Everything else is read-only and the owner's files are not there. Network is off unless you set network=true, which asks the owner every time. Output is capped; long runs are killed at the timeout.",
		sdk.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(true)}},
		func(t *sdk.Tool) { sdk.AddTool(s, t, forward[runIn](b, "command.run")) })
	add(tool{"save_result_page", "result.save", "Save a result page", "Save a report in output/ and get a link the owner can open. Use format=markdown for short text you will also show in chat (the content comes back), format=html for long or complex reports (only the link comes back).", additive},
		func(t *sdk.Tool) { sdk.AddTool(s, t, forward[resultIn](b, "result.save")) })
	add(tool{"generate_link", "link.create", "Share a file", "Make a signed, expiring link to a file or folder in your folder or share/ (output/ is the usual place), for the owner to open in a browser.", additive},
		func(t *sdk.Tool) { sdk.AddTool(s, t, forward[linkIn](b, "link.create")) })
	add(tool{"session_info", "session.info", "About this session", "Who you are to Corral: your scope, the shared and output folder names, extra folders you may use, and whether commands are available.", readOnly},
		func(t *sdk.Tool) { sdk.AddTool(s, t, forward[infoIn](b, "session.info")) })
	return s
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
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}}, nil, nil
	}
}

func readHandler(b Backend) sdk.ToolHandlerFor[readIn, any] {
	return func(ctx context.Context, _ *sdk.CallToolRequest, in readIn) (*sdk.CallToolResult, any, error) {
		raw, err := b.Call(ctx, "file.read", in)
		if err != nil {
			return nil, nil, toolError(err)
		}
		var r struct {
			Type        string  `json:"type"`
			Path        string  `json:"path"`
			Content     string  `json:"content"`
			MimeType    string  `json:"mimeType"`
			Data        string  `json:"data"`
			TotalLines  int     `json:"totalLines"`
			OutputLines int     `json:"outputLines"`
			Truncated   bool    `json:"truncated"`
			TruncatedBy *string `json:"truncatedBy"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, nil, err
		}
		if r.Type == "image" {
			data, err := base64.StdEncoding.DecodeString(r.Data)
			if err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: data, MIMEType: r.MimeType}}}, nil, nil
		}
		text := r.Content
		if r.Truncated {
			first := max(in.Offset, 1)
			var sb strings.Builder
			sb.WriteString(text)
			if !strings.HasSuffix(text, "\n") {
				sb.WriteByte('\n')
			}
			fmt.Fprintf(&sb, "\n[Showing lines %d–%d of %d. Call file_read with offset=%d to read on.]", first, first+r.OutputLines-1, r.TotalLines, first+r.OutputLines)
			text = sb.String()
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
	}
}
