// Package connect knows how agent apps (Claude Desktop, Claude Code,
// Cursor, VS Code, Codex CLI, Gemini CLI, Goose) are told about an MCP
// server: the snippet each one reads, the file it reads it from, and how
// to merge Corral into such a file without dropping what is there.
//
// Guarantees: Merge returns a file that parses, holds exactly what the
// old one held except Corral's own entry (for JSON: every other key, in
// its order; for TOML: every other line as it was), and holds Corral's
// entry as given. A file that does not parse is refused, never rewritten.
//
// Not guaranteed: JSON is re-indented with two spaces (a file indented
// otherwise shows that change in the diff); JSON with comments (JSONC) is
// refused rather than merged; YAML (Goose) and ~/.claude.json (use
// `claude mcp add`) are never written, only shown. The file locations are
// those the apps document for Linux; an app installed elsewhere is not
// found.
package connect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

// ServerName is the name Corral's entry has in every app's config.
const ServerName = "corral"

// Entry is how an app starts Corral: `corral mcp` with the daemon's URL
// and the agent's key in its environment, or MCP over HTTP at URL+"/mcp".
type Entry struct {
	Command string // absolute path of the corral program
	URL     string // the daemon, e.g. http://127.0.0.1:8765
	Key     string // the agent's key
}

func (e Entry) args() []string { return []string{"mcp"} }

// App is an agent app Corral can be connected to.
type App struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Format string `json:"format"` // "json", "toml", "yaml", "command", "text"
	// File is where the app reads its MCP servers, relative to the home
	// folder ("" when the app is set up by a command or by hand).
	File string `json:"file,omitempty"`
	// Servers is the JSON object holding the servers ("mcpServers",
	// "servers") or the TOML table ("mcp_servers").
	Servers string `json:"-"`
	Doc     string `json:"doc"`  // where the format and file come from
	Note    string `json:"note"` // what to do after
}

// Apps lists the apps in the order the dashboard shows them.
func Apps() []App {
	return []App{
		{ID: "claude-desktop", Title: "Claude Desktop", Format: "json", File: ".config/Claude/claude_desktop_config.json", Servers: "mcpServers",
			Doc:  "https://modelcontextprotocol.io/quickstart/user (macOS and Windows paths; Linux builds read ~/.config/Claude)",
			Note: "Quit Claude Desktop completely and start it again; Corral's tools appear under the tools icon."},
		{ID: "claude-code", Title: "Claude Code", Format: "command", File: ".claude.json",
			Doc:  "https://docs.anthropic.com/en/docs/claude-code/mcp",
			Note: "Run the command in a terminal; `claude mcp list` then shows corral. It is added for all your projects (--scope user)."},
		{ID: "cursor", Title: "Cursor", Format: "json", File: ".cursor/mcp.json", Servers: "mcpServers",
			Doc:  "https://cursor.com/docs/mcp",
			Note: "Cursor picks the file up by itself; check Settings → MCP that corral is switched on."},
		{ID: "vscode", Title: "VS Code", Format: "json", File: ".config/Code/User/mcp.json", Servers: "servers",
			Doc:  "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
			Note: "Open the Chat view in agent mode; VS Code asks once whether to start corral."},
		{ID: "codex", Title: "Codex CLI", Format: "toml", File: ".codex/config.toml", Servers: "mcp_servers",
			Doc:  "https://github.com/openai/codex/blob/main/docs/config.md (mcp_servers)",
			Note: "Start codex again; /mcp lists corral."},
		{ID: "gemini", Title: "Gemini CLI", Format: "json", File: ".gemini/settings.json", Servers: "mcpServers",
			Doc:  "https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md",
			Note: "Start gemini again; /mcp lists corral."},
		{ID: "goose", Title: "Goose", Format: "yaml", File: ".config/goose/config.yaml",
			Doc:  "https://block.github.io/goose/docs/guides/config-files",
			Note: "Paste this under the extensions: key of the file (Corral does not rewrite YAML), or add it with `goose configure` → Add Extension → Command-line Extension."},
		{ID: "other", Title: "Anything else (WebSocket, MCP over HTTP)", Format: "text",
			Doc:  "Corral's docs/agents.md, \"Connecting\"",
			Note: "Any MCP client that speaks streamable HTTP can use the URL and header; a JSON-RPC program uses the WebSocket."},
	}
}

// Find returns the app with id.
func Find(id string) (App, bool) {
	for _, a := range Apps() {
		if a.ID == id {
			return a, true
		}
	}
	return App{}, false
}

// Writable reports whether Corral can merge itself into the app's file.
func (a App) Writable() bool {
	return (a.Format == "json" || a.Format == "toml") && a.File != ""
}

// Snippet is what the owner pastes (or runs) to connect the app.
func (a App) Snippet(e Entry) string {
	switch a.Format {
	case "json":
		root := newObject()
		servers := newObject()
		servers.set(ServerName, jsonEntry(a, e))
		root.set(a.Servers, servers)
		b, _ := encodeJSON(root)
		return string(b)
	case "toml":
		return tomlEntry(a, e)
	case "yaml":
		return "extensions:\n  " + ServerName + ":\n    enabled: true\n    type: stdio\n    name: " + ServerName + "\n    cmd: " + yamlString(e.Command) +
			"\n    args: [mcp]\n    envs:\n      CORRAL_URL: " + yamlString(e.URL) + "\n      CORRAL_KEY: " + yamlString(e.Key) + "\n    timeout: 300\n"
	case "command":
		return "claude mcp add --scope user --env CORRAL_URL=" + shellQuote(e.URL) + " --env CORRAL_KEY=" + shellQuote(e.Key) + " " + ServerName + " -- " + shellQuote(e.Command) + " mcp"
	default:
		return "MCP over HTTP (streamable):\n  URL:    " + e.URL + "/mcp\n  Header: Authorization: Bearer " + e.Key +
			"\n\nWebSocket JSON-RPC 2.0:\n  URL:    " + wsURL(e.URL) + "/ws\n  Header: Authorization: Bearer " + e.Key +
			"\n\nMCP over stdio:\n  CORRAL_URL=" + shellQuote(e.URL) + " CORRAL_KEY=" + shellQuote(e.Key) + " " + shellQuote(e.Command) + " mcp\n"
	}
}

func wsURL(u string) string {
	if rest, ok := strings.CutPrefix(u, "https://"); ok {
		return "wss://" + rest
	}
	return "ws://" + strings.TrimPrefix(u, "http://")
}

func jsonEntry(a App, e Entry) *object {
	o := newObject()
	if a.ID == "vscode" {
		o.set("type", "stdio")
	}
	o.set("command", e.Command)
	o.set("args", []any{"mcp"})
	env := newObject()
	env.set("CORRAL_URL", e.URL)
	env.set("CORRAL_KEY", e.Key)
	o.set("env", env)
	return o
}

func tomlEntry(a App, e Entry) string {
	return "[" + a.Servers + "." + ServerName + "]\ncommand = " + tomlString(e.Command) + "\nargs = [\"mcp\"]\nenv = { CORRAL_URL = " +
		tomlString(e.URL) + ", CORRAL_KEY = " + tomlString(e.Key) + " }\n"
}

// Merge returns old with Corral's entry added (or replaced), refusing a
// file that does not parse. Empty or missing content counts as an empty
// file.
func (a App) Merge(old []byte, e Entry) ([]byte, error) {
	switch a.Format {
	case "json":
		return a.mergeJSON(old, e)
	case "toml":
		return a.mergeTOML(old, e)
	}
	return nil, fmt.Errorf("Corral does not write %s's configuration; paste the snippet instead", a.Title)
}

// ErrParse marks a file that does not parse.
var ErrParse = errors.New("does not parse")

func (a App) mergeJSON(old []byte, e Entry) ([]byte, error) {
	var root *object
	if len(bytes.TrimSpace(old)) == 0 {
		root = newObject()
	} else {
		v, err := decodeJSON(old)
		if err != nil {
			return nil, fmt.Errorf("%w as JSON (%v); fix it or add Corral by hand", ErrParse, err)
		}
		var ok bool
		if root, ok = v.(*object); !ok {
			return nil, fmt.Errorf("%w: the file holds a JSON %s, not an object", ErrParse, kindOf(v))
		}
	}
	servers := newObject()
	if v, ok := root.get(a.Servers); ok {
		s, isObj := v.(*object)
		if !isObj {
			return nil, fmt.Errorf("%w: %q is a JSON %s, not an object", ErrParse, a.Servers, kindOf(v))
		}
		servers = s
	}
	servers.set(ServerName, jsonEntry(a, e))
	root.set(a.Servers, servers)
	return encodeJSON(root)
}

func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "object"
}

// object is a JSON object that keeps its keys' order.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) get(k string) (any, bool) { v, ok := o.vals[k]; return v, ok }

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := marshalNoEscape(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalNoEscape(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// maxDepth bounds nesting, so a hostile file cannot exhaust the stack.
const maxDepth = 200

// decodeJSON reads one JSON value keeping objects' key order; numbers stay
// as written. Trailing data is an error.
func decodeJSON(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more follows the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; dup {
					return nil, fmt.Errorf("key %q appears twice", k)
				}
				o.set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// mergeTOML appends Corral's table, after taking out an earlier one, and
// checks by parsing both that nothing else changed.
func (a App) mergeTOML(old []byte, e Entry) ([]byte, error) {
	before := map[string]any{}
	if err := toml.Unmarshal(old, &before); err != nil {
		return nil, fmt.Errorf("%w as TOML (%v); fix it or add Corral by hand", ErrParse, firstLine(err.Error()))
	}
	if servers, ok := before[a.Servers].(map[string]any); ok {
		if _, ok := servers[ServerName]; ok {
			var err error
			if old, err = dropTable(old, a.Servers+"."+ServerName); err != nil {
				return nil, err
			}
		}
	} else if _, ok := before[a.Servers]; ok {
		return nil, fmt.Errorf("%w: %s is not a table", ErrParse, a.Servers)
	}
	out := bytes.TrimRight(old, "\n")
	if len(out) > 0 {
		out = append(out, "\n\n"...)
	}
	out = append(out, tomlEntry(a, e)...)
	after := map[string]any{}
	if err := toml.Unmarshal(out, &after); err != nil {
		return nil, fmt.Errorf("Corral's entry would not fit in this file (%v); add it by hand", firstLine(err.Error()))
	}
	// Everything but Corral's entry is as it was.
	strip := func(m map[string]any) map[string]any {
		c := map[string]any{}
		for k, v := range m {
			c[k] = v
		}
		if s, ok := c[a.Servers].(map[string]any); ok {
			s2 := map[string]any{}
			for k, v := range s {
				if k != ServerName {
					s2[k] = v
				}
			}
			c[a.Servers] = s2
		}
		return c
	}
	b, af := strip(before), strip(after)
	if _, ok := before[a.Servers]; !ok {
		delete(af, a.Servers)
		if s, ok := after[a.Servers].(map[string]any); ok && len(s) > 1 {
			return nil, errors.New("Corral's entry changed other servers; add it by hand")
		}
	}
	if !reflect.DeepEqual(b, af) {
		return nil, errors.New("merging would change more than Corral's own entry (the file defines it in a way Corral cannot take out); add it by hand")
	}
	return out, nil
}

// dropTable removes the lines of [name] and its sub-tables ([name.x]) up
// to the next other table header. An entry defined otherwise (inline, or
// as dotted keys) is refused.
func dropTable(data []byte, name string) ([]byte, error) {
	lines := strings.SplitAfter(string(data), "\n")
	var out strings.Builder
	in, found := false, false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			h := strings.Trim(strings.TrimSpace(strings.SplitN(t, "#", 2)[0]), "[] \t")
			in = h == name || strings.HasPrefix(h, name+".")
			found = found || in
		}
		if !in {
			out.WriteString(l)
		}
	}
	if !found {
		return nil, errors.New("Corral's entry is already in this file in a form Corral cannot replace; edit it by hand")
	}
	return []byte(out.String()), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// tomlString is a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// yamlString is a YAML double-quoted scalar (JSON's escapes are valid there).
func yamlString(s string) string {
	b, _ := marshalNoEscape(s)
	return string(b)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-:=+@,%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
