// Package connect knows how agent apps (Claude Desktop, Claude Code,
// Cursor, VS Code, Codex CLI, Gemini CLI, Goose) are told about an MCP
// server: the snippet each one reads, the file it reads it from, and how
// to merge Corral into such a file without dropping what is there.
//
// Guarantees: Merge returns a file that parses, holds exactly what the
// old one held except Corral's own entry (for JSON: every other key, in
// its order; for TOML: every other line as it was), and holds Corral's
// entry as given. A JSON file keeps every byte outside Corral's entry:
// the entry is spliced in (replacing an earlier one, or after the last
// server) in the indentation the file uses, so other servers keep their
// formatting. A file that does not parse is refused, never rewritten.
//
// Not guaranteed: a JSON file whose layout the splice cannot follow is
// re-indented with two spaces (the diff shows it); JSON with comments
// (JSONC) is refused rather than merged; YAML (Goose) and ~/.claude.json (use
// `claude mcp add`) are never written, only shown. The file locations are
// those the apps document for Linux; an app installed elsewhere is not
// found.
//
// Setup answers the owner's agent.connect, agent.connect_preview and
// agent.connect_write (app/server registers them): it shows every app's
// snippet for one agent, and writes Corral into an app's file under the
// owner's home. The file is always the one the app documents, never a
// path from the caller; a key given must be the agent's current key
// (compared in constant time against its hash); a write refuses a file
// changed since the preview it names (Digest) or one that is not a plain
// file, keeps the old file as a backup beside it (a new file is made
// owner-only), and is recorded in the audit log before its answer. It
// does not decode JSON-RPC or check that the caller is the owner.
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

	"corral/app/config"
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
	return "[" + a.Servers + "." + ServerName + "]\ncommand = " + config.Quote(e.Command) + "\nargs = [\"mcp\"]\nenv = { CORRAL_URL = " +
		config.Quote(e.URL) + ", CORRAL_KEY = " + config.Quote(e.Key) + " }\n"
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
	whole, err := encodeJSON(root)
	if err != nil {
		return nil, err
	}
	// Splice the entry into the file as it is; keep the splice only if it
	// holds exactly what the re-encoded file holds.
	if len(bytes.TrimSpace(old)) > 0 {
		if spliced, ok := spliceJSON(old, a.Servers, jsonEntry(a, e)); ok && sameJSON(spliced, whole) {
			return spliced, nil
		}
	}
	return whole, nil
}

// sameJSON reports whether a and b are the same JSON text but for
// whitespace outside strings.
func sameJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// member is one key of a JSON object as it sits in the file: where its
// key starts, where the key ends, and the span of its value.
type member struct {
	key                             string
	keyStart, keyEnd, valStart, end int
}

// spliceJSON puts entry under servers.corral in data, a JSON object that
// parses, by editing only the bytes of Corral's entry: it replaces an
// earlier entry, or goes after the last server (or, with no servers
// object, after the root's last key), indented as the file is. ok is
// false when the layout defeats it.
func spliceJSON(data []byte, servers string, entry *object) ([]byte, bool) {
	root := skipWS(data, 0)
	if root >= len(data) || data[root] != '{' {
		return nil, false
	}
	top, _, ok := members(data, root)
	if !ok || len(top) == 0 {
		return nil, false
	}
	unit := indentUnit(data, root, top[0])
	replace := func(start, end int, with string) []byte {
		out := make([]byte, 0, len(data)+len(with))
		out = append(out, data[:start]...)
		out = append(out, with...)
		return append(out, data[end:]...)
	}
	for _, m := range top {
		if m.key != servers {
			continue
		}
		if data[m.valStart] != '{' {
			return nil, false
		}
		inner, _, ok := members(data, m.valStart)
		if !ok {
			return nil, false
		}
		if len(inner) == 0 { // "mcpServers": {}
			o := newObject()
			o.set(ServerName, entry)
			return replace(m.valStart, m.end, indentJSON(o, lineIndent(data, m.keyStart), unit)), true
		}
		for _, c := range inner {
			if c.key == ServerName {
				return replace(c.valStart, c.end, indentJSON(entry, lineIndent(data, c.keyStart), unit)), true
			}
		}
		last := inner[len(inner)-1]
		return replace(last.end, last.end, after(data, inner[0], last, m.valStart)+indentJSON(entry, lineIndent(data, last.keyStart), unit)), true
	}
	o := newObject()
	o.set(ServerName, entry)
	last := top[len(top)-1]
	key, _ := marshalNoEscape(servers)
	return replace(last.end, last.end, strings.Replace(after(data, top[0], last, root), `"`+ServerName+`"`, string(key), 1)+indentJSON(o, lineIndent(data, last.keyStart), unit)), true
}

// after is what goes after an object's last member to start one more
// called corral: a comma, the break and indentation between the object's
// opening and its first key, and the key with the colon spelled as the
// last member spells it.
func after(data []byte, first, last member, open int) string {
	key, _ := marshalNoEscape(ServerName)
	return "," + string(data[open+1:first.keyStart]) + string(key) + string(data[last.keyEnd:last.valStart])
}

// indentUnit is one level of the file's indentation: what the root's
// first key is indented by beyond the root's own line; "" for a file on
// one line.
func indentUnit(data []byte, root int, first member) string {
	if !bytes.ContainsRune(data[root:first.keyStart], '\n') {
		return ""
	}
	return strings.TrimPrefix(lineIndent(data, first.keyStart), lineIndent(data, root))
}

// lineIndent is the blank space that starts the line holding data[at].
func lineIndent(data []byte, at int) string {
	start := bytes.LastIndexByte(data[:at], '\n') + 1
	end := start
	for end < at && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// indentJSON encodes v with lines after the first starting with prefix,
// one unit per level; compact when unit is "".
func indentJSON(v any, prefix, unit string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if unit != "" {
		enc.SetIndent(prefix, unit)
	}
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

func skipWS(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// members lists the members of the object opening at data[open]; end is
// just after its closing brace. data is JSON that parses.
func members(data []byte, open int) (out []member, end int, ok bool) {
	i := skipWS(data, open+1)
	for i < len(data) && data[i] != '}' {
		if data[i] == ',' {
			i = skipWS(data, i+1)
			continue
		}
		if data[i] != '"' {
			return nil, 0, false
		}
		keyEnd, ok := skipValue(data, i)
		if !ok {
			return nil, 0, false
		}
		var key string
		if json.Unmarshal(data[i:keyEnd], &key) != nil {
			return nil, 0, false
		}
		j := skipWS(data, keyEnd)
		if j >= len(data) || data[j] != ':' {
			return nil, 0, false
		}
		val := skipWS(data, j+1)
		valEnd, ok := skipValue(data, val)
		if !ok {
			return nil, 0, false
		}
		out = append(out, member{key: key, keyStart: i, keyEnd: keyEnd, valStart: val, end: valEnd})
		i = skipWS(data, valEnd)
	}
	if i >= len(data) {
		return nil, 0, false
	}
	return out, i + 1, true
}

// skipValue returns the index just after the JSON value starting at
// data[i].
func skipValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return 0, false
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, ok := skipValue(data, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(data) && !strings.ContainsRune(",}] \t\r\n", rune(data[j])) {
		j++
	}
	return j, j > i
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
