package main

import (
	"strings"
	"testing"
)

// TestMCPReadToolsMore: head and tail of file_read, read_multiple_files
// (one missing file does not fail the others) and file_stat.
func TestMCPReadToolsMore(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	cs := mcpClient(t, r, "stdio")
	var lines []string
	for i := 1; i <= 50; i++ {
		lines = append(lines, "line"+strings.Repeat("x", i%3)+"#"+itoa(i))
	}
	if res := callMCP(t, cs, "file_write", map[string]any{"path": "m/a.txt", "content": strings.Join(lines, "\n") + "\n"}); res.IsError {
		t.Fatal(textOf(t, res))
	}
	callMCP(t, cs, "file_write", map[string]any{"path": "m/b.txt", "content": "bee"})
	if got := textOf(t, callMCP(t, cs, "file_read", map[string]any{"path": "m/a.txt", "limit": 2})); !strings.HasPrefix(got, lines[0]+"\n"+lines[1]+"\n") || strings.Contains(got, "#3\n") {
		t.Errorf("limit: %q", got)
	}
	if got := textOf(t, callMCP(t, cs, "file_read", map[string]any{"path": "m/a.txt", "tail": 3})); !strings.HasPrefix(got, strings.Join(lines[47:], "\n")) || strings.Contains(got, "#47\n") {
		t.Errorf("tail: %q", got)
	}
	if res := callMCP(t, cs, "file_read", map[string]any{"path": "m/a.txt", "limit": 2, "tail": 2}); !res.IsError {
		t.Errorf("limit and tail together: %q", textOf(t, res))
	}
	res := callMCP(t, cs, "read_multiple_files", map[string]any{"paths": []string{"m/b.txt", "m/none.txt", "m/a.txt"}})
	got := textOf(t, res)
	if res.IsError || !strings.Contains(got, "== m/b.txt ==\nbee") || !strings.Contains(got, "m/none.txt: ") || !strings.Contains(got, lines[49]) {
		t.Errorf("read_multiple_files: %q", got)
	}
	got = textOf(t, callMCP(t, cs, "file_stat", map[string]any{"path": "m/b.txt"}))
	if !strings.Contains(got, `"type":"file"`) || !strings.Contains(got, `"size":3`) {
		t.Errorf("file_stat: %q", got)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
