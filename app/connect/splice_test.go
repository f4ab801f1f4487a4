package connect

import (
	"strings"
	"testing"
)

// TestMergeJSONSplicesOnlyCorral: merging into a JSON file changes only
// the bytes of Corral's entry: other servers keep their formatting (one
// line, odd spacing, tabs), the file its final newline, and the entry is
// indented as the file is. Before, the whole file was re-indented.
func TestMergeJSONSplicesOnlyCorral(t *testing.T) {
	cursor, _ := Find("cursor")
	entryText := func(prefix, unit string) string {
		return strings.NewReplacer("\n", "\n"+prefix, "\t", unit).Replace(`{
	"command": "/usr/bin/corral",
	"args": [
		"mcp"
	],
	"env": {
		"CORRAL_URL": "http://127.0.0.1:8765",
		"CORRAL_KEY": "corral_abc-DEF_123"
	}
}`)
	}
	for _, tc := range []struct{ name, old, want string }{
		{"added after another server, 4 spaces",
			"{\n    \"mcpServers\": {\n        \"other\": {\"command\":   \"other\", \"args\": [\"x\"]}\n    },\n    \"x\": 1\n}\n",
			"{\n    \"mcpServers\": {\n        \"other\": {\"command\":   \"other\", \"args\": [\"x\"]},\n        \"corral\": " + entryText("        ", "    ") + "\n    },\n    \"x\": 1\n}\n"},
		{"replaced in place, tabs",
			"{\n\t\"mcpServers\": {\n\t\t\"corral\": {\"command\": \"/old\"},\n\t\t\"other\":{ \"command\":\"o\" }\n\t}\n}",
			"{\n\t\"mcpServers\": {\n\t\t\"corral\": " + entryText("\t\t", "\t") + ",\n\t\t\"other\":{ \"command\":\"o\" }\n\t}\n}"},
		{"no servers yet: after the last key",
			"{\n  \"theme\" : \"dark\"\n}\n",
			"{\n  \"theme\" : \"dark\",\n  \"mcpServers\" : {\n    \"corral\": " + entryText("    ", "  ") + "\n  }\n}\n"},
		{"an empty servers object",
			"{\n  \"mcpServers\": {}\n}\n",
			"{\n  \"mcpServers\": {\n    \"corral\": " + entryText("    ", "  ") + "\n  }\n}\n"},
		{"one line stays one line",
			`{"mcpServers":{"other":{"command":"other"}}}`,
			`{"mcpServers":{"other":{"command":"other"},"corral":{"command":"/usr/bin/corral","args":["mcp"],"env":{"CORRAL_URL":"http://127.0.0.1:8765","CORRAL_KEY":"corral_abc-DEF_123"}}}}`},
		{"strings with braces and escapes",
			"{\n  \"mcpServers\": {\n    \"q\": {\"command\": \"a}\\\"{[\"}\n  }\n}",
			"{\n  \"mcpServers\": {\n    \"q\": {\"command\": \"a}\\\"{[\"},\n    \"corral\": " + entryText("    ", "  ") + "\n  }\n}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := cursor.Merge([]byte(tc.old), entry)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("merged:\n%s\nwant:\n%s", out, tc.want)
			}
			// Merging again changes nothing.
			again, err := cursor.Merge(out, entry)
			if err != nil || string(again) != string(out) {
				t.Errorf("a second merge changed the file:\n%s", again)
			}
		})
	}
	// An empty file gets the whole snippet.
	if out, err := cursor.Merge(nil, entry); err != nil || string(out) != cursor.Snippet(entry)+"\n" && string(out) != cursor.Snippet(entry) {
		t.Errorf("into an empty file: %q %v", out, err)
	}
}
