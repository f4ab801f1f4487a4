package connect

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

var entry = Entry{Command: "/usr/bin/corral", URL: "http://127.0.0.1:8765", Key: "corral_abc-DEF_123"}

func TestMergeJSONKeepsEverything(t *testing.T) {
	app, _ := Find("claude-desktop")
	old := `{
  "theme": "dark",
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"A": "<&>"}},
    "corral": {"command": "/old/corral", "args": ["mcp"]}
  },
  "zz": [1, 2.50, {"b": null, "a": true}]
}`
	out, err := app.Merge([]byte(old), entry)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	// Order kept, numbers as written, no HTML escaping.
	if strings.Index(s, `"theme"`) > strings.Index(s, `"mcpServers"`) || strings.Index(s, `"mcpServers"`) > strings.Index(s, `"zz"`) ||
		strings.Index(s, `"filesystem"`) > strings.Index(s, `"corral"`) || !strings.Contains(s, "2.50") || !strings.Contains(s, `"<&>"`) ||
		strings.Index(s, `"b"`) > strings.Index(s, `"a"`) {
		t.Errorf("order or values changed:\n%s", s)
	}
	var v struct {
		Theme      string
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	c := v.MCPServers["corral"]
	if v.Theme != "dark" || v.MCPServers["filesystem"].Command != "npx" || c.Command != entry.Command || c.Env["CORRAL_KEY"] != entry.Key || c.Env["CORRAL_URL"] != entry.URL || len(c.Args) != 1 {
		t.Errorf("merged: %+v", v)
	}
}

func TestMergeRefuses(t *testing.T) {
	js, _ := Find("cursor")
	tm, _ := Find("codex")
	for _, tc := range []struct {
		app App
		in  string
	}{
		{js, `{"mcpServers": {`},
		{js, "// comment\n{}"},
		{js, `[1,2]`},
		{js, `{"mcpServers": []}`},
		{js, `{"a":1,"a":2}`},
		{js, `{} {}`},
		{tm, "model = \n"},
		{tm, "mcp_servers = 3\n"},
	} {
		if _, err := tc.app.Merge([]byte(tc.in), entry); err == nil {
			t.Errorf("%s %q: merged", tc.app.ID, tc.in)
		} else if !errors.Is(err, ErrParse) {
			t.Errorf("%s %q: %v (not ErrParse)", tc.app.ID, tc.in, err)
		}
	}
	// VS Code's own format has a type.
	vs, _ := Find("vscode")
	out, err := vs.Merge(nil, entry)
	if err != nil || !strings.Contains(string(out), `"servers"`) || !strings.Contains(string(out), `"type": "stdio"`) {
		t.Errorf("vscode: %s %v", out, err)
	}
}

func TestMergeTOML(t *testing.T) {
	app, _ := Find("codex")
	old := `model = "o3" # my model

[mcp_servers.other]
command = "npx"
args = ["x"]

[mcp_servers.corral]
command = "/old"
[mcp_servers.corral.env]
CORRAL_KEY = "old"

[profiles.fast]
model = "mini"
`
	out, err := app.Merge([]byte(old), entry)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `model = "o3" # my model`) || strings.Contains(string(out), `"old"`) {
		t.Errorf("merged:\n%s", out)
	}
	var v map[string]any
	if err := toml.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	servers := v["mcp_servers"].(map[string]any)
	c := servers["corral"].(map[string]any)
	if servers["other"] == nil || c["command"] != entry.Command || c["env"].(map[string]any)["CORRAL_KEY"] != entry.Key || v["profiles"] == nil {
		t.Errorf("merged: %v", v)
	}
	// Twice is the same as once.
	again, err := app.Merge(out, entry)
	if err != nil || string(again) != string(out) {
		t.Errorf("second merge differs: %v\n%s", err, again)
	}
	// An inline definition cannot be taken out safely: refused.
	if _, err := app.Merge([]byte("[mcp_servers]\ncorral = { command = \"x\" }\n"), entry); err == nil {
		t.Error("inline corral entry was rewritten")
	}
}

func TestSnippetsParse(t *testing.T) {
	for _, app := range Apps() {
		s := app.Snippet(entry)
		if !strings.Contains(s, entry.Key) {
			t.Errorf("%s: snippet lacks the key", app.ID)
		}
		switch app.Format {
		case "json":
			if !json.Valid([]byte(s)) {
				t.Errorf("%s: invalid JSON", app.ID)
			}
		case "toml":
			var v map[string]any
			if err := toml.Unmarshal([]byte(s), &v); err != nil {
				t.Errorf("%s: %v", app.ID, err)
			}
		}
	}
	cc, _ := Find("claude-code")
	if got := cc.Snippet(entry); got != "claude mcp add --scope user --env CORRAL_URL=http://127.0.0.1:8765 --env CORRAL_KEY=corral_abc-DEF_123 corral -- /usr/bin/corral mcp" {
		t.Errorf("claude code: %s", got)
	}
}

// FuzzMerge: whatever a config file holds, Merge either refuses it or
// returns a file that parses and keeps Corral's entry.
func FuzzMerge(f *testing.F) {
	for _, s := range []string{"", "{}", `{"mcpServers":{"a":{}}}`, `{"x":[1,{"y":"\u00e9"}]}`, "a = 1\n[mcp_servers.corral]\nx=1\n", "[x]\n[[y]]\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, id := range []string{"claude-desktop", "codex"} {
			app, _ := Find(id)
			out, err := app.Merge([]byte(in), entry)
			if err != nil {
				continue
			}
			if !strings.Contains(string(out), entry.Key) {
				t.Fatalf("%s: merged without the key: %q", id, out)
			}
			var v map[string]any
			if id == "codex" {
				if err := toml.Unmarshal(out, &v); err != nil {
					t.Fatalf("codex: merged file does not parse: %v\n%q", err, out)
				}
			} else if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("json: merged file does not parse: %v\n%q", err, out)
			}
		}
	})
}
