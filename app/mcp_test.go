package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearerRT struct{ key string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

func textOf(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPBothTransports drives `corral mcp` over stdio and POST /mcp over
// HTTP with the official Go SDK client, as an agent app would.
func TestMCPBothTransports(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	for _, name := range []string{"stdio", "http"} {
		t.Run(name, func(t *testing.T) {
			cs := mcpClient(t, r, name)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
				if tl.Description == "" || tl.Annotations == nil || tl.InputSchema == nil {
					t.Errorf("tool %s lacks description, annotations or schema", tl.Name)
				}
				if tl.Name == "file_read" && !tl.Annotations.ReadOnlyHint {
					t.Error("file_read is not marked read-only")
				}
				if tl.Name == "run_command" && (tl.Annotations.OpenWorldHint == nil || !*tl.Annotations.OpenWorldHint) {
					t.Error("run_command is not marked open-world")
				}
			}
			for _, want := range []string{"file_read", "file_write", "file_edit", "folder_list", "file_find", "file_grep", "file_delete", "file_move", "apply_patch", "run_command", "save_result_page", "generate_link", "session_info", "document_read"} {
				if !slices.Contains(names, want) {
					t.Errorf("missing tool %s (have %v)", want, names)
				}
			}
			if res := callMCP(t, cs, "file_write", map[string]any{"path": "mcp/" + name + ".txt", "content": "hello from " + name}); res.IsError {
				t.Fatalf("file_write: %s", textOf(t, res))
			}
			if res := callMCP(t, cs, "file_read", map[string]any{"path": "mcp/" + name + ".txt"}); res.IsError || textOf(t, res) != "hello from "+name {
				t.Fatalf("file_read: %v %q", res.IsError, textOf(t, res))
			}
			res := callMCP(t, cs, "file_read", map[string]any{"path": "../../owner.token"})
			if !res.IsError || strings.Contains(textOf(t, res), r.ownerKey) || !strings.Contains(textOf(t, res), "denied") {
				t.Fatalf("traversal: isError=%v %q", res.IsError, textOf(t, res))
			}
			res = callMCP(t, cs, "save_result_page", map[string]any{"title": "T", "content": "# Hi", "format": "markdown"})
			if res.IsError || !strings.Contains(textOf(t, res), "/files/out?path=output/report_") || !strings.Contains(textOf(t, res), "&token=") {
				t.Fatalf("save_result_page: %q", textOf(t, res))
			}
		})
	}
	// Wrong key over HTTP: 401 before any MCP.
	resp, err := (&http.Client{Transport: bearerRT{"wrong-key-wrong-key"}}).Post(r.url+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil || resp.StatusCode != 401 {
		t.Errorf("bad key: %v %v", err, resp)
	}
}
