package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestMCPStructuredContent calls every tool over both transports, as a
// client that reads structuredContent would: each tool lists an
// outputSchema, each successful result carries structuredContent that
// validates against it, and the text content is still there for clients
// that ignore structured content.
func TestMCPStructuredContent(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			cs := mcpClient(t, r, transport)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			schemas := map[string]*jsonschema.Resolved{}
			for _, tl := range list.Tools {
				if tl.OutputSchema == nil {
					t.Errorf("%s has no outputSchema", tl.Name)
					continue
				}
				raw, _ := json.Marshal(tl.OutputSchema)
				var s jsonschema.Schema
				if err := json.Unmarshal(raw, &s); err != nil {
					t.Fatalf("%s: outputSchema: %v", tl.Name, err)
				}
				if s.Type != "object" {
					t.Errorf("%s: outputSchema type %q, want object", tl.Name, s.Type)
				}
				res, err := s.Resolve(nil)
				if err != nil {
					t.Fatalf("%s: outputSchema does not resolve: %v", tl.Name, err)
				}
				schemas[tl.Name] = res
			}
			d := transport + "/"
			blob := []byte("\x7fELF\x00\x01\x02\xff\xfe")
			png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
			calls := []struct {
				tool string
				args map[string]any
			}{
				{"file_write", map[string]any{"path": d + "a.txt", "content": "one\ntwo\nthree\n"}},
				{"file_write", map[string]any{"path": d + "dot.png", "content": png, "encoding": "base64"}},
				{"file_read", map[string]any{"path": d + "a.txt"}},
				{"file_read", map[string]any{"path": d + "a.txt", "tail": 1}},
				{"file_read", map[string]any{"path": d + "dot.png"}},
				{"file_write", map[string]any{"path": d + "latin1.txt", "content": base64.StdEncoding.EncodeToString([]byte("caf\xe9 \x80\n")), "encoding": "base64"}},
				{"file_read", map[string]any{"path": d + "latin1.txt"}},
				{"file_write", map[string]any{"path": d + "blob", "content": base64.StdEncoding.EncodeToString(blob), "encoding": "base64"}},
				{"file_read", map[string]any{"path": d + "blob", "encoding": "base64", "byte_offset": 1}},
				{"read_multiple_files", map[string]any{"paths": []string{d + "a.txt", d + "none.txt", d + "dot.png"}}},
				{"file_stat", map[string]any{"path": d + "a.txt"}},
				{"file_write", map[string]any{"path": d + "page.html", "content": "<h1>Title</h1><p>body</p>"}},
				{"document_read", map[string]any{"path": d + "page.html"}},
				{"file_edit", map[string]any{"path": d + "a.txt", "old_text": "two", "new_text": "2"}},
				{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: " + d + "p.txt\n+patched\n*** End Patch\n"}},
				{"folder_list", map[string]any{"path": transport}},
				{"file_find", map[string]any{"pattern": d + "*.txt"}},
				{"file_grep", map[string]any{"pattern": "three", "path": transport}},
				{"file_move", map[string]any{"from": d + "p.txt", "to": d + "q.txt"}},
				{"folder_create", map[string]any{"path": d + "made/below"}},
				{"file_delete", map[string]any{"path": d + "q.txt"}},
				{"run_command", map[string]any{"command": "echo hi"}},
				{"save_result_page", map[string]any{"title": "T", "content": "# hi"}},
				{"generate_link", map[string]any{"path": d + "a.txt", "expires_in": 60}},
				{"session_info", map[string]any{}},
			}
			called := map[string]bool{}
			var latin, bin bool
			for _, c := range calls {
				res := callMCP(t, cs, c.tool, c.args)
				if res.IsError {
					t.Errorf("%s: %s", c.tool, textOf(t, res))
					continue
				}
				called[c.tool] = true
				if len(res.Content) == 0 {
					t.Errorf("%s: no content for clients that ignore structured content", c.tool)
				}
				if res.StructuredContent == nil {
					t.Errorf("%s: no structuredContent", c.tool)
					continue
				}
				// As the client received it: plain JSON values.
				raw, _ := json.Marshal(res.StructuredContent)
				var v any
				json.Unmarshal(raw, &v)
				if s := schemas[c.tool]; s != nil {
					if err := s.Validate(v); err != nil {
						t.Errorf("%s: structuredContent %s does not fit the outputSchema: %v", c.tool, raw, err)
					}
				}
				switch c.tool {
				case "file_read":
					if !strings.Contains(string(raw), `"path":"`+d) {
						t.Errorf("file_read: structuredContent without the path: %s", raw)
					}
					var f struct{ Type, Path, Content, Encoding, Data string }
					json.Unmarshal(raw, &f)
					switch f.Path {
					case d + "latin1.txt":
						latin = true
						if f.Content != "café €\n" || f.Encoding != "windows-1252" || !strings.Contains(textOf(t, res), "café €") || !strings.Contains(textOf(t, res), "windows-1252") {
							t.Errorf("file_read of a windows-1252 file: %s / %q", raw, textOf(t, res))
						}
						continue
					case d + "blob":
						// The bytes once: in the text content, not
						// in structuredContent too.
						bin = true
						var text struct{ Data string }
						json.Unmarshal([]byte(textOf(t, res)), &text)
						if got, _ := base64.StdEncoding.DecodeString(text.Data); f.Type != "binary" || f.Data != "" || !bytes.Equal(got, blob[1:]) {
							t.Errorf("file_read base64: %s / %.200s", raw, textOf(t, res))
						}
						continue
					}
					if strings.Contains(string(raw), `"data"`) {
						t.Errorf("file_read: an image's data is repeated in structuredContent: %s", raw)
					}
				case "folder_create":
					if !strings.Contains(string(raw), `"created":true`) {
						t.Errorf("folder_create: %s", raw)
					}
				case "read_multiple_files":
					var m struct {
						Files []struct{ Path, Content, Error, Type string }
					}
					json.Unmarshal(raw, &m)
					if len(m.Files) != 3 || m.Files[0].Content != "one\ntwo\nthree\n" || m.Files[1].Error == "" || m.Files[2].Type != "image" {
						t.Errorf("read_multiple_files: %s", raw)
					}
				}
			}
			if !latin || !bin {
				t.Errorf("the windows-1252 file (%v) or the base64 read (%v) was not checked", latin, bin)
			}
			for _, tl := range list.Tools {
				if !called[tl.Name] {
					t.Errorf("%s was not called with success here; add it to this test", tl.Name)
				}
			}
		})
	}
}
