package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"corral/app/testkit/wsframe"
	"corral/app/wire"
	"corral/core/audit"
	"corral/core/testkit/poll"
)

func TestHealthzAndHostCheck(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	for _, tc := range []struct {
		host string
		want int
	}{
		{"", http.StatusOK}, // the URL's own host
		{"localhost:1234", http.StatusOK},
		{"[::1]:80", http.StatusOK},
		{"evil.example:80", http.StatusForbidden},
		{"127.0.0.1.nip.io", http.StatusForbidden},
		{"localhost.", http.StatusForbidden},
	} {
		req, _ := http.NewRequest("GET", h.url+"/healthz", nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]string
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q: status %d, want %d", tc.host, resp.StatusCode, tc.want)
		}
		if tc.want == 200 && body["status"] != "ok" {
			t.Errorf("Host %q: body %v", tc.host, body)
		}
	}
}

func TestUpgradeRefusals(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	ws := "ws" + strings.TrimPrefix(h.url, "http") + "/ws"
	cases := []struct {
		name   string
		header http.Header
		query  string
		want   int
	}{
		{"no auth", http.Header{}, "", 401},
		{"wrong key", http.Header{"Authorization": {"Bearer nope-nope-nope-nope"}}, "", 401},
		{"basic auth", http.Header{"Authorization": {"Basic " + aliceKey}}, "", 401},
		{"key in query", http.Header{}, "?token=" + aliceKey + "&key=" + aliceKey, 401},
		{"foreign origin", http.Header{"Authorization": {"Bearer " + aliceKey}, "Origin": {"http://evil.example"}}, "", 403},
		{"null origin", http.Header{"Authorization": {"Bearer " + aliceKey}, "Origin": {"null"}}, "", 403},
		{"other loopback origin", http.Header{"Authorization": {"Bearer " + aliceKey}, "Origin": {"http://localhost:1"}}, "", 403},
		{"foreign host", http.Header{"Authorization": {"Bearer " + aliceKey}, "Host": {"evil.example"}}, "", 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := websocket.Dialer{}
			hdr := tc.header.Clone()
			if host := hdr.Get("Host"); host != "" {
				hdr.Del("Host")
				// gorilla takes the Host from the URL: send the upgrade
				// by hand to the real address with the foreign name.
				req, _ := http.NewRequest("GET", h.url+"/ws", nil)
				req.Host = host
				for k, v := range hdr {
					req.Header[k] = v
				}
				req.Header.Set("Connection", "Upgrade")
				req.Header.Set("Upgrade", "websocket")
				req.Header.Set("Sec-WebSocket-Version", "13")
				req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.want {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
				}
				return
			}
			c, resp, err := d.Dial(ws+tc.query, hdr)
			if err == nil {
				c.Close()
				t.Fatal("upgrade succeeded")
			}
			if resp == nil || resp.StatusCode != tc.want {
				t.Fatalf("got %v, want status %d", resp, tc.want)
			}
		})
	}
	// The dashboard's own origin is accepted.
	d := websocket.Dialer{}
	c, _, err := d.Dial(ws, http.Header{"Authorization": {"Bearer " + aliceKey}, "Origin": {h.url}})
	if err != nil {
		t.Fatalf("same-origin upgrade: %v", err)
	}
	c.Close()
}

func TestFileRoundTrip(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	c := h.dial(aliceKey)

	w := rpcCall[map[string]any](t, c, "file.write", m("path", "notes/todo.txt", "content", "one\ntwo\nthree\n"))
	if w["path"] != "notes/todo.txt" || w["bytes"].(float64) != 14 {
		t.Fatalf("write: %v", w)
	}
	r := rpcCall[map[string]any](t, c, "file.read", m("path", "notes/todo.txt", "offset", 2, "limit", 1))
	if r["content"] != "two\n" && r["content"] != "two" {
		t.Errorf("read content %q", r["content"])
	}
	if r["totalLines"].(float64) != 3 || r["truncated"] != true || r["truncatedBy"] != "lines" {
		t.Errorf("read fields: %v", r)
	}
	rpcCall[map[string]any](t, c, "file.write", m("path", "notes/todo.txt", "content", "four\n", "append", true))
	e := rpcCall[map[string]any](t, c, "file.edit", m("path", "notes/todo.txt", "old_text", "two", "new_text", "2"))
	if e["replacements"].(float64) != 1 {
		t.Errorf("edit: %v", e)
	}
	host, _ := os.ReadFile(filepath.Join(h.base, "alice", "notes", "todo.txt"))
	if string(host) != "one\n2\nthree\nfour\n" {
		t.Errorf("file on disk: %q", host)
	}
	ce := callErr(t, c, "file.edit", m("path", "notes/todo.txt", "old_text", "nothing like this", "new_text", "x"))
	if ce.Data.Kind != "conflict" {
		t.Errorf("edit without match: %+v", ce)
	}

	st := rpcCall[wire.Info](t, c, "file.stat", m("path", "notes/todo.txt"))
	if st.Type != "file" || st.Size != 17 || st.Path != "notes/todo.txt" {
		t.Errorf("stat: %+v", st)
	}
	rpcCall[map[string]any](t, c, "file.write", m("path", "share/docs/shared.md", "content", "# hello\nTODO: share\n"))
	list := rpcCall[struct {
		Path    string      `json:"path"`
		Entries []wire.Info `json:"entries"`
	}](t, c, "folder.list", m("path", "share", "depth", 2))
	var names []string
	for _, e := range list.Entries {
		names = append(names, e.Path)
	}
	if strings.Join(names, ",") != "share/docs,share/docs/shared.md" {
		t.Errorf("list share: %v", names)
	}
	root := rpcCall[struct {
		Entries []wire.Info `json:"entries"`
	}](t, c, "folder.list", nil)
	if len(root.Entries) == 0 || root.Entries[0].Path == "" {
		t.Errorf("list root: %+v", root)
	}
	for _, e := range root.Entries {
		if strings.Contains(e.Path, h.base) {
			t.Errorf("host path leaked: %s", e.Path)
		}
	}

	find := rpcCall[struct{ Matches []string }](t, c, "file.find", m("pattern", "**/*.txt"))
	if strings.Join(find.Matches, ",") != "notes/todo.txt" {
		t.Errorf("find: %v", find.Matches)
	}
	grep := rpcCall[struct{ Matches []wire.Match }](t, c, "file.grep", m("pattern", "TODO", "path", "share"))
	if len(grep.Matches) != 1 || grep.Matches[0].Path != "share/docs/shared.md" || grep.Matches[0].Line != 2 {
		t.Errorf("grep: %+v", grep.Matches)
	}

	mv := rpcCall[map[string]any](t, c, "file.move", m("from", "notes/todo.txt", "to", "output/todo.txt"))
	if mv["to"] != "output/todo.txt" {
		t.Errorf("move: %v", mv)
	}
	ce = callErr(t, c, "file.read", m("path", "notes/todo.txt"))
	if ce.Data.Kind != "not_found" || !strings.Contains(ce.Message, "notes/todo.txt") || strings.Contains(ce.Message, h.base) {
		t.Errorf("read moved file: %+v", ce)
	}
	rpcCall[map[string]any](t, c, "file.delete", m("path", "output/todo.txt"))
	rpcCall[any](t, c, "file.write", m("path", "notes/keep.txt", "content", "k"))
	ce = callErr(t, c, "file.delete", m("path", "notes"))
	if ce.Data.Kind != "conflict" {
		t.Errorf("delete folder without recursive: %+v", ce)
	}
}

func TestScopeIsolation(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, bob, comp, multi := h.dial(aliceKey), h.dial(bobKey), h.dial(companionKey), h.dial(multiKey)
	rpcCall[any](t, alice, "file.write", m("path", "secret.txt", "content", "alice's secret"))
	rpcCall[any](t, comp, "file.write", m("path", "secret.txt", "content", "companion's secret"))

	for _, p := range []string{"secret.txt", "../alice/secret.txt", "share/../../alice/secret.txt", "/" + filepath.Join(h.base, "alice", "secret.txt")} {
		ce := callErr(t, bob, "file.read", m("path", p))
		if strings.Contains(ce.Message, "alice's secret") || (ce.Data.Kind != "denied" && ce.Data.Kind != "not_found") {
			t.Errorf("bob read %q: %+v", p, ce)
		}
	}
	// bob may not pick alice's scope through a context.
	ce := callErr(t, bob, "file.read", m("path", "secret.txt", "context", m("user_id", "alice")))
	if ce.Data.Kind != "forbidden" {
		t.Errorf("bob acting for alice: %+v", ce)
	}
	// multi-agent may act for alice and the companion, not bob.
	r := rpcCall[map[string]any](t, multi, "file.read", m("path", "secret.txt", "context", m("user_id", "alice")))
	if r["content"] != "alice's secret" {
		t.Errorf("multi as alice: %v", r)
	}
	r = rpcCall[map[string]any](t, multi, "file.read", m("path", "secret.txt", "context", m("channel_name", "CompanioN")))
	if r["content"] != "companion's secret" {
		t.Errorf("multi as companion: %v", r)
	}
	ce = callErr(t, multi, "file.read", m("path", "secret.txt", "context", m("user_id", "bob")))
	if ce.Data.Kind != "forbidden" {
		t.Errorf("multi as bob: %+v", ce)
	}
	// An unknown user id with no companion field selects default, which
	// multi-agent owns.
	ce = callErr(t, multi, "file.read", m("path", "secret.txt", "context", m("user_id", "mallory")))
	if ce.Data.Kind != "not_found" {
		t.Errorf("multi as default: %+v", ce)
	}
	info := rpcCall[map[string]any](t, multi, "session.info", m("context", m("app_id", "companion")))
	if info["scope"] != "companion" || info["role"] != "client" {
		t.Errorf("session.info: %v", info)
	}
	// Everyone shares share/.
	rpcCall[any](t, bob, "file.write", m("path", "Share/from-bob.txt", "content", "hi"))
	r = rpcCall[map[string]any](t, alice, "file.read", m("path", "share/from-bob.txt"))
	if r["content"] != "hi" {
		t.Errorf("share: %v", r)
	}
}

func TestOwnerOnlyAndUnknownMethods(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	for _, meth := range []string{"audit.query", "audit.subscribe", "session.login", "audit.stats"} {
		if ce := callErr(t, alice, meth, nil); ce.Data.Kind != "forbidden" {
			t.Errorf("%s by a client: %+v", meth, ce)
		}
	}
	if ce := callErr(t, alice, "no.such", nil); ce.Code != -32601 {
		t.Errorf("unknown method: %+v", ce)
	}
	if ce := callErr(t, alice, "file.read", m("path", "x", "offest", 3)); ce.Code != -32602 || !strings.Contains(ce.Message, "offest") {
		t.Errorf("unknown param: %+v", ce)
	}
	if ce := callErr(t, alice, "file.read", m("path", 7)); ce.Code != -32602 {
		t.Errorf("wrong type: %+v", ce)
	}
	owner := h.dial(ownerToken)
	login := rpcCall[map[string]string](t, owner, "session.login", nil)
	if !strings.Contains(login["url"], "/login?code=") {
		t.Fatalf("login: %v", login)
	}
	// The code works once.
	jar := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := jar.Get(login["url"])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 1 || !resp.Cookies()[0].HttpOnly || resp.Cookies()[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d %v", resp.StatusCode, resp.Cookies())
	}
	cookie := resp.Cookies()[0]
	resp, _ = jar.Get(login["url"])
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("second use of a login code: %d", resp.StatusCode)
	}
	// The cookie with its second secret opens /ws as the owner.
	ws := "ws" + strings.TrimPrefix(h.url, "http") + "/ws"
	signed := websocket.Dialer{Subprotocols: []string{"corral", "corral.secret." + h.srv.secretFor("session", cookie.Value)}}
	conn, _, err := signed.Dial(ws, http.Header{"Cookie": {cookie.String()}, "Origin": {h.url}})
	if err != nil {
		t.Fatalf("cookie upgrade: %v", err)
	}
	conn.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"session.info"}`))
	_, msg, _ := conn.ReadMessage()
	conn.Close()
	if !strings.Contains(string(msg), `"role":"owner"`) {
		t.Errorf("cookie session: %s", msg)
	}
}

// raw opens a bare WebSocket for frame-level tests.
func (h *harness) raw(key string) *websocket.Conn {
	h.t.Helper()
	ws := "ws" + strings.TrimPrefix(h.url, "http") + "/ws"
	c, _, err := websocket.DefaultDialer.Dial(ws, http.Header{"Authorization": {"Bearer " + key}})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c
}

// The transport answers malformed frames (app/wsrpc TestMalformedFrames);
// here, what the server adds: parameters the method refuses, and the
// configured frame limit.
func TestMalformedFrames(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	c := h.raw(aliceKey)
	code := func(v map[string]any) float64 {
		e, _ := v["error"].(map[string]any)
		if e == nil {
			return 0
		}
		return e["code"].(float64)
	}
	for _, tc := range []struct {
		kind  int
		frame string
		code  float64
		id    any
	}{
		{websocket.TextMessage, `{`, -32700, nil},
		{websocket.TextMessage, `{"jsonrpc":"2.0","id":6,"method":"file.read","params":["a"]}`, -32602, 6.0},
		{websocket.TextMessage, `{"jsonrpc":"2.0","id":7,"method":"file.read","params":{"path":"a\u0000b"}}`, -32000, 7.0},
	} {
		v := wsframe.RoundTrip(t, c, tc.kind, tc.frame)
		if code(v) != tc.code || v["id"] != tc.id {
			t.Errorf("%q: got %v, want code %v id %v", tc.frame, v, tc.code, tc.id)
		}
	}
	// The connection is still usable.
	v := wsframe.RoundTrip(t, c, websocket.TextMessage, `{"jsonrpc":"2.0","id":"ok","method":"session.info"}`)
	if v["result"] == nil {
		t.Fatalf("after malformed frames: %v", v)
	}

	// An oversized message closes with 1009; the server keeps serving.
	big := `{"jsonrpc":"2.0","id":1,"method":"file.write","params":{"path":"big","content":"` + strings.Repeat("x", 70000) + `"}}`
	c.WriteMessage(websocket.TextMessage, []byte(big))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := c.ReadMessage()
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != websocket.CloseMessageTooBig {
		t.Fatalf("oversized: %v, want close 1009", err)
	}
	c2 := h.raw(aliceKey)
	if v := wsframe.RoundTrip(t, c2, websocket.TextMessage, `{"jsonrpc":"2.0","id":1,"method":"session.info"}`); v["result"] == nil {
		t.Fatalf("server after 1009: %v", v)
	}
}

func TestAuditCompleteAndFiltered(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, bob, owner := h.dial(aliceKey), h.dial(bobKey), h.dial(ownerToken)
	rpcCall[any](t, alice, "file.write", m("path", "a.txt", "content", "x"))
	rpcCall[any](t, alice, "file.read", m("path", "a.txt"))
	callErr(t, alice, "file.read", m("path", "/etc/passwd"))
	callErr(t, bob, "file.read", m("path", "../alice/a.txt"))
	rpcCall[any](t, bob, "folder.list", nil)
	callErr(t, bob, "file.stat", m("path", "100%_'\\.txt"))

	type page struct {
		Events     []wire.Event `json:"events"`
		NextCursor string       `json:"next_cursor"`
	}
	all := rpcCall[page](t, owner, "audit.query", nil)
	if len(all.Events) != 6 {
		t.Fatalf("events: %d, want 6: %+v", len(all.Events), all.Events)
	}
	if all.Events[0].Op != "file.stat" || all.Events[5].Op != "file.write" {
		t.Errorf("order: newest first wanted, got %s … %s", all.Events[0].Op, all.Events[5].Op)
	}
	outside := all.Events[3]
	if outside.Target != "/etc/passwd" || outside.Decision != audit.Deny || outside.Client != "alice-agent" || outside.User != "alice" {
		t.Errorf("outside read event: %+v", outside)
	}
	for _, tc := range []struct {
		params map[string]any
		want   int
	}{
		{m("client", "bob-agent"), 3},
		{m("user", "alice"), 3},
		{m("op", "file.read"), 3},
		{m("decision", "deny"), 2},
		{m("decision", "allow"), 3},
		{m("text", "100%_'\\"), 1},
		{m("text", "%"), 1},
		{m("client", "bob-agent", "decision", "deny"), 1},
		{m("until", "2000-01-01T00:00:00Z"), 0},
		{m("agent", "BOB"), 3},
		{m("client", "bob"), 0}, // client stays exact
		{m("ops", []string{"file.write", "folder.list"}), 2},
		{m("changed", true), 1},
		{m("text", "A.TXT"), 3},
		{m("hide_own", true), 6}, // agents' reads are not the owner's housekeeping
	} {
		got := rpcCall[page](t, owner, "audit.query", tc.params)
		if len(got.Events) != tc.want {
			t.Errorf("filter %v: %d events, want %d", tc.params, len(got.Events), tc.want)
		}
	}
	// Pagination walks everything once.
	seen := map[int64]bool{}
	cursor := ""
	for i := 0; i < 10; i++ {
		p := rpcCall[page](t, owner, "audit.query", m("limit", 4, "cursor", cursor))
		for _, e := range p.Events {
			if seen[e.ID] {
				t.Fatalf("event %d twice", e.ID)
			}
			seen[e.ID] = true
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	if len(seen) != 6 {
		t.Errorf("paged through %d events, want 6", len(seen))
	}
	if ce := callErr(t, owner, "audit.query", m("ops", []string{})); ce.Code != -32602 {
		t.Errorf("empty ops: %+v", ce)
	}
	if ce := callErr(t, owner, "audit.query", m("cursor", "garbage")); ce.Code != -32602 {
		t.Errorf("bad cursor: %+v", ce)
	}
}

func TestAuditSubscribe(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, owner := h.dial(aliceKey), h.dial(ownerToken)
	rpcCall[any](t, owner, "audit.subscribe", nil)
	rpcCall[any](t, alice, "file.write", m("path", "x.txt", "content", "hello"))
	select {
	case n := <-owner.Notifications():
		var p struct{ Event wire.Event }
		json.Unmarshal(n.Params, &p)
		if n.Method != "audit.event" || p.Event.Op != "file.write" || p.Event.Target != "x.txt" || p.Event.ID == 0 {
			t.Errorf("notification: %s %s", n.Method, n.Params)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no audit.event notification")
	}
}

// 32 concurrent connections, each making calls in parallel: every call
// answered, exactly one event per call.
func TestConcurrentConnectionsAuditCounts(t *testing.T) {
	t.Parallel()
	h := start(t, unlimitedCalls) // 640 calls of each agent at once: more than its rate allows
	const conns, calls = 32, 20
	var wg sync.WaitGroup
	errc := make(chan error, conns*calls)
	for i := range conns {
		key := aliceKey
		if i%2 == 1 {
			key = bobKey
		}
		c := h.dial(key)
		wg.Go(func() {
			var inner sync.WaitGroup
			for j := range calls {
				inner.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					p := m("path", "c/"+strings.Repeat("x", i%5+1)+".txt", "content", "data")
					if _, err := c.Call(ctx, "file.write", p); err != nil {
						errc <- err
					}
					if _, err := c.Call(ctx, "file.read", m("path", "../nope")); err == nil {
						errc <- os.ErrInvalid
					}
					_ = j
				})
			}
			inner.Wait()
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	owner := h.dial(ownerToken)
	count := func(p map[string]any) int {
		n, cursor := 0, ""
		for {
			p["limit"], p["cursor"] = 1000, cursor
			pg := rpcCall[struct {
				Events     []wire.Event `json:"events"`
				NextCursor string       `json:"next_cursor"`
			}](t, owner, "audit.query", p)
			n += len(pg.Events)
			if cursor = pg.NextCursor; cursor == "" {
				return n
			}
		}
	}
	if n := count(m("op", "file.write")); n != conns*calls {
		t.Errorf("write events: %d, want %d", n, conns*calls)
	}
	if n := count(m("op", "file.read", "decision", "deny")); n != conns*calls {
		t.Errorf("denied read events: %d, want %d", n, conns*calls)
	}
}

func TestShutdownDrainsAndFlushes(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	c := h.dial(aliceKey)
	rpcCall[any](t, c, "file.write", m("path", "before.txt", "content", "x"))
	h.stop()
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("connection still open after shutdown")
	}
	// The store was closed and flushed: reopen the file and count.
	st := reopen(t, h)
	p, err := st.Query(context.Background(), audit.Filter{})
	if err != nil || len(p.Events) != 1 {
		t.Fatalf("after restart: %v %+v", err, p)
	}
}

// Signing out closes the connections other tabs opened with the session,
// also when the sign-out comes the moment the other tab's connection was
// upgraded (the server tracks a connection only after the upgrade's
// answer is out, so a sign-out in between must be caught there).
func TestSignOutClosesTheSessionsConnections(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ws := "ws" + strings.TrimPrefix(h.url, "http") + "/ws"
	for i := range 40 {
		login, _ := h.srv.LoginURL()
		resp, err := noRedirect.Get(login)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		cookie := resp.Cookies()[0]
		secret := h.srv.secretFor("session", cookie.Value)
		signed := websocket.Dialer{Subprotocols: []string{"corral", "corral.secret." + secret}}
		tab, _, err := signed.Dial(ws, http.Header{"Cookie": {cookie.String()}, "Origin": {h.url}})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", h.url+"/logout", nil)
		req.Header.Set(secretHeader, secret)
		req.Header.Set("Cookie", cookie.String())
		req.Header.Set("Origin", h.url)
		if resp, err := noRedirect.Do(req); err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("logout: %v %v", err, resp)
		}
		tab.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err = tab.ReadMessage()
		tab.Close()
		if err == nil {
			t.Fatalf("round %d: the other tab's connection is still open", i)
		} else if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
			t.Fatalf("round %d: the other tab's connection is still open (read timed out)", i)
		}
	}
}

// TestMissingParamsChangeNothing: a call that leaves out a required
// parameter answers -32602 naming it, and touches nothing: file.write
// without content does not empty the file, file.edit without new_text
// does not delete the matched text.
func TestMissingParamsChangeNothing(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	rpcCall[any](t, alice, "file.write", m("path", "notes/a.txt", "content", "foo bar"))
	for _, c := range []struct {
		method string
		params map[string]any
		name   string
	}{
		{"file.write", m("path", "notes/a.txt"), "content"},
		{"file.write", m("path", "notes/a.txt", "content", nil), "content"},
		{"file.edit", m("path", "notes/a.txt", "old_text", "foo"), "new_text"},
		{"file.read", m(), "path"},
		{"file.move", m("from", "notes/a.txt"), "to"},
		{"file.grep", m(), "pattern"},
		{"result.save", m("title", "x", "format", "markdown"), "content"},
		{"result.save", m("title", "x", "content", " \n", "format", "markdown"), "content"},
	} {
		ce := callErr(t, alice, c.method, c.params)
		if ce.Code != -32602 || ce.Data.Kind != "invalid_params" || !strings.Contains(ce.Message, `"`+c.name+`"`) {
			t.Errorf("%s %v: %d %s %q", c.method, c.params, ce.Code, ce.Data.Kind, ce.Message)
		}
	}
	if got := rpcCall[map[string]any](t, alice, "file.read", m("path", "notes/a.txt"))["content"]; got != "foo bar" {
		t.Errorf("after the refused calls the file holds %q", got)
	}
	// An explicit empty value is a value.
	rpcCall[any](t, alice, "file.edit", m("path", "notes/a.txt", "old_text", "foo", "new_text", ""))
	if got := rpcCall[map[string]any](t, alice, "file.read", m("path", "notes/a.txt"))["content"]; got != " bar" {
		t.Errorf("edit with new_text \"\": %q", got)
	}
}

// TestAbsolutePathIntoOwnFolder: an agent that names its own file by its
// host path is refused (no question, nothing read) but told the path to
// use; a host path into another user's folder gets no such hint.
func TestAbsolutePathIntoOwnFolder(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	rpcCall[any](t, alice, "file.write", m("path", "notes/a.txt", "content", "mine"))
	rpcCall[any](t, h.dial(bobKey), "file.write", m("path", "b.txt", "content", "bob's"))
	for p, want := range map[string]string{
		filepath.Join(h.base, "alice", "notes", "a.txt"): `name it "notes/a.txt" instead`,
		filepath.Join(h.base, "share"):                   `name it "share" instead`,
		filepath.Join(h.base, "bob", "b.txt"):            "belongs to Corral, to another user's folder or to the system",
	} {
		ce := callErr(t, alice, "file.read", m("path", p))
		if ce.Data.Kind != "denied" || !strings.Contains(ce.Message, want) {
			t.Errorf("%s: %s %q, want %q", p, ce.Data.Kind, ce.Message, want)
		}
	}
}

// TestUnknownUserIDSaysSo: a context naming a user Corral does not know
// falls to the default scope (docs/protocol.md section 4); a client that may
// not act there is told the user does not exist, not just "default".
func TestUnknownUserIDSaysSo(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	ce := callErr(t, h.dial(aliceKey), "file.read", m("path", "a.txt", "context", m("user_id", "nobody")))
	if ce.Data.Kind != "forbidden" || !strings.Contains(ce.Message, `There is no user "nobody"`) {
		t.Errorf("%s %q", ce.Data.Kind, ce.Message)
	}
}

// TestAgentsConnectedCountsAgents: the tray's "N agents connected" counts
// agents, not connections: two connections of one agent are one agent, and
// the owner's own connection is none.
func TestAgentsConnectedCountsAgents(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	h.dial(aliceKey)
	h.dial(aliceKey)
	h.dial(bobKey)
	h.dial(ownerToken)
	poll.Eventually(t, callWithin, func() bool { return h.srv.Connections() >= 4 }, "the four connections")
	if n := h.srv.AgentsConnected(); n != 2 {
		t.Errorf("%d agents connected, want 2 (with %d connections)", n, h.srv.Connections())
	}
}
