package mcphttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHeaders(t *testing.T) {
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" {
			t.Errorf("path %q", r.URL.Path)
		}
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Header.Clone())
		w.Write(b)
	}))
	defer srv.Close()
	resp, body, err := Post(t.Context(), srv.URL, "k", "", `{"x":1}`)
	if err != nil || resp.StatusCode != 200 || body != `{"x":1}` {
		t.Fatalf("Post: %v %v %q", err, resp, body)
	}
	if _, _, err := Post(t.Context(), srv.URL, "k", "s1", `{}`); err != nil {
		t.Fatal(err)
	}
	req, _ := Request(t.Context(), http.MethodGet, srv.URL, "k", "s1", nil)
	if r, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		r.Body.Close()
	}
	for i, want := range []map[string]string{
		{"Authorization": "Bearer k", "Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": "", "Mcp-Protocol-Version": ""},
		{"Authorization": "Bearer k", "Mcp-Session-Id": "s1", "Mcp-Protocol-Version": ProtocolVersion},
		{"Authorization": "Bearer k", "Accept": "text/event-stream", "Content-Type": "", "Mcp-Session-Id": "s1"},
	} {
		for k, v := range want {
			if g := got[i].Get(k); g != v {
				t.Errorf("request %d: %s %q, want %q", i, k, g, v)
			}
		}
	}
}
