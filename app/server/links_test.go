package server

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/app/share"
)

func get(t *testing.T, rawURL string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func checkSecurityHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	for k, v := range map[string]string{"Content-Security-Policy": share.CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q (status %d)", k, got, v, resp.StatusCode)
		}
	}
}

func TestResultSaveAndServe(t *testing.T) {
	t.Parallel()
	h := start(t, "[links]\nsave_result_max_kb = 4\n")
	alice := h.dial(aliceKey)
	md := "# Weekly summary\n\n<script>alert(1)</script>\n\n- one\n- two\n"
	res := rpcCall[map[string]string](t, alice, "result.save", m("title", "Weekly", "content", md, "format", "markdown"))
	if res["content"] != md || !strings.HasPrefix(res["path"], "output/report_") || !strings.HasSuffix(res["path"], ".md") {
		t.Fatalf("result.save: %v", res)
	}
	if !strings.HasPrefix(res["url"], h.url+"/files/out?path=output/report_") {
		t.Fatalf("url: %s", res["url"])
	}
	resp, body := get(t, res["url"])
	if resp.StatusCode != 200 || body != md || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") || resp.Header.Get("Last-Modified") == "" {
		t.Fatalf("GET report: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	checkSecurityHeaders(t, resp)
	resp, body = get(t, res["url"], "Range", "bytes=2-7")
	if resp.StatusCode != 206 || body != "Weekly" {
		t.Errorf("range: %d %q", resp.StatusCode, body)
	}
	if res["view_url"] != res["url"]+"&view=1" {
		t.Errorf("view_url: %q", res["view_url"])
	}
	resp, body = get(t, res["view_url"])
	if resp.StatusCode != 200 || !strings.Contains(body, "<h1>Weekly summary</h1>") || strings.Contains(body, "<script>") || !strings.Contains(body, "<li>two</li>") {
		t.Errorf("view=1: %d %s", resp.StatusCode, body)
	}
	checkSecurityHeaders(t, resp)

	frag := rpcCall[map[string]any](t, alice, "result.save", m("title", "Table <b>", "content", "<table><tr><td>1</td></tr></table>", "format", "html"))
	if _, has := frag["content"]; has {
		t.Errorf("html result returned content: %v", frag)
	}
	resp, body = get(t, frag["url"].(string))
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(body, "<title>Table &lt;b&gt;</title>") || !strings.Contains(body, "<td>1</td>") || !strings.Contains(body, "prefers-color-scheme: dark") {
		t.Errorf("html fragment page: %d %s", resp.StatusCode, body)
	}
	checkSecurityHeaders(t, resp)
	full := "<!DOCTYPE html><html><head><title>Mine</title></head><body>x</body></html>"
	doc := rpcCall[map[string]any](t, alice, "result.save", m("title", "ignored", "content", full, "format", "html"))
	if _, body = get(t, doc["url"].(string)); body != full {
		t.Errorf("full document changed: %q", body)
	}
	if ce := callErr(t, alice, "result.save", m("title", "big", "content", strings.Repeat("x", 5000), "format", "markdown")); ce.Data.Kind != "too_large" {
		t.Errorf("oversized report: %+v", ce)
	}
}

func TestLinkTampering(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, bob := h.dial(aliceKey), h.dial(bobKey)
	rpcCall[any](t, alice, "file.write", m("path", "output/a.txt", "content", "alice's file"))
	rpcCall[any](t, alice, "file.write", m("path", "output/b.txt", "content", "another"))
	rpcCall[any](t, bob, "file.write", m("path", "output/a.txt", "content", "bob's file"))
	link := rpcCall[map[string]string](t, alice, "link.create", m("path", "output/a.txt"))["url"]
	bobLink := rpcCall[map[string]string](t, bob, "link.create", m("path", "output/a.txt"))["url"]
	short := rpcCall[map[string]string](t, alice, "link.create", m("path", "output/a.txt", "expires_in", 60))["url"]
	if resp, body := get(t, link); resp.StatusCode != 200 || body != "alice's file" {
		t.Fatalf("good link: %d %q", resp.StatusCode, body)
	}
	u, _ := url.Parse(link)
	q := u.Query()
	tok := q.Get("token")
	bobTok := func() string { bu, _ := url.Parse(bobLink); return bu.Query().Get("token") }()
	base := h.url + "/files/out?"
	flip := func(s string, i int) string { b := []byte(s); b[i] ^= 1; return string(b) }
	bad := map[string]string{
		"changed path":        base + "path=output/b.txt&token=" + tok,
		"changed path char":   base + "path=output/a.txu&token=" + tok,
		"changed token char":  base + "path=output/a.txt&token=" + flip(tok, len(tok)/2),
		"token last char":     base + "path=output/a.txt&token=" + flip(tok, len(tok)-1),
		"truncated token":     base + "path=output/a.txt&token=" + tok[:len(tok)-3],
		"bob's token":         base + "path=output/b.txt&token=" + bobTok,
		"other scope path":    base + "path=../bob/output/a.txt&token=" + tok,
		"non-canonical path":  base + "path=output//a.txt&token=" + tok,
		"dot path":            base + "path=./output/a.txt&token=" + tok,
		"duplicate path":      base + "path=output/a.txt&path=output/b.txt&token=" + tok,
		"duplicate token":     base + "path=output/a.txt&token=" + tok + "&token=" + tok,
		"no token":            base + "path=output/a.txt",
		"token in other name": base + "path=output/a.txt&t=" + tok,
		"empty":               base,
	}
	for name, u := range bad {
		resp, body := get(t, u)
		if resp.StatusCode != 403 {
			t.Errorf("%s: status %d %q", name, resp.StatusCode, body)
		}
		if strings.Contains(body, "file") && strings.Contains(body, "alice") {
			t.Errorf("%s: body leaks %q", name, body)
		}
		checkSecurityHeaders(t, resp)
	}
	if _, body := get(t, base+"path=output/a.txt&token="+bobTok); body != "bob's file" {
		t.Errorf("bob's token opened %q", body)
	}
	// Expired: a 60 s link checked 61 s later (fake clock; with a real
	// second the requests above took longer than the link lived under
	// load).
	if resp, _ := get(t, short); resp.StatusCode != 200 {
		t.Fatalf("short link before expiry: %d", resp.StatusCode)
	}
	h.clock.Shift(61 * time.Second)
	if resp, _ := get(t, short); resp.StatusCode != 403 {
		t.Errorf("expired link: %d", resp.StatusCode)
	}
	h.clock.Shift(0)
	// Missing file: 404.
	rpcCall[any](t, alice, "file.delete", m("path", "output/a.txt"))
	if resp, body := get(t, link); resp.StatusCode != 404 || strings.Contains(body, h.base) {
		t.Errorf("missing file: %d %q", resp.StatusCode, body)
	} else {
		checkSecurityHeaders(t, resp)
	}
	// Rotation stops every earlier link.
	if resp, _ := get(t, bobLink); resp.StatusCode != 200 {
		t.Fatalf("bob's link before rotation: %d", resp.StatusCode)
	}
	owner := h.dial(ownerToken)
	rpcCall[any](t, owner, "links.rotate", nil)
	if resp, _ := get(t, bobLink); resp.StatusCode != 403 {
		t.Errorf("link after rotation: %d", resp.StatusCode)
	}
	fresh := rpcCall[map[string]string](t, bob, "link.create", m("path", "output/a.txt"))["url"]
	if resp, _ := get(t, fresh); resp.StatusCode != 200 {
		t.Errorf("new link after rotation: %d", resp.StatusCode)
	}
	if ce := callErr(t, alice, "link.create", m("path", "output/a.txt", "expires_in", "100000h")); ce.Code != -32602 {
		t.Errorf("expiry beyond max: %+v", ce)
	}
	if ce := callErr(t, alice, "link.create", m("path", "/etc/passwd")); ce.Data.Kind != "denied" {
		t.Errorf("link outside: %+v", ce)
	}
}

func TestFolderListing(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	evil := "<img src=x onerror=alert(1)>.txt"
	rpcCall[any](t, alice, "file.write", m("path", "output/"+evil, "content", "evil name"))
	rpcCall[any](t, alice, "file.write", m("path", "output/sub/deep.txt", "content", "deep"))
	link := rpcCall[map[string]string](t, alice, "link.create", m("path", "output"))["url"]
	resp, body := get(t, link)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("listing: %d %s", resp.StatusCode, body)
	}
	checkSecurityHeaders(t, resp)
	if strings.Contains(body, "<img") || !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;.txt") {
		t.Errorf("listing does not escape the name: %s", body)
	}
	// Every entry's link works; the sub folder lists its child.
	hrefs := hrefsIn(body)
	if len(hrefs) != 2 {
		t.Fatalf("links in listing: %v", hrefs)
	}
	found := map[string]bool{}
	for _, href := range hrefs {
		resp, b := get(t, h.url+href)
		if resp.StatusCode != 200 {
			t.Errorf("child %s: %d", href, resp.StatusCode)
		}
		found[b] = true
		if strings.Contains(href, "path=output/sub&") {
			sub := hrefsIn(b)
			if len(sub) != 1 { // deep.txt (the sub folder's own token reaches no higher)
				t.Fatalf("sub listing links: %v\n%s", sub, b)
			}
			for _, s := range sub {
				if r, b2 := get(t, h.url+s); r.StatusCode != 200 || (strings.Contains(s, "deep.txt") && b2 != "deep") {
					t.Errorf("sub link %s: %d %q", s, r.StatusCode, b2)
				}
			}
		}
	}
	if !found["evil name"] {
		t.Error("the file with the odd name did not open")
	}
	// A folder token covers descendants directly, but not siblings.
	u, _ := url.Parse(link)
	tok := u.Query().Get("token")
	if resp, b := get(t, h.url+"/files/out?path=output/sub/deep.txt&token="+tok); resp.StatusCode != 200 || b != "deep" {
		t.Errorf("descendant through folder token: %d", resp.StatusCode)
	}
	// Opened through the output folder's token, the sub folder's listing
	// has a breadcrumb back up to output.
	_, b := get(t, h.url+"/files/out?path=output/sub&token="+tok)
	if crumbs := hrefsIn(b); len(crumbs) != 2 || !strings.Contains(crumbs[0], "path=output&") {
		t.Errorf("breadcrumbs: %v", crumbs)
	}
	rpcCall[any](t, alice, "file.write", m("path", "outputs/x.txt", "content", "sibling"))
	if resp, _ := get(t, h.url+"/files/out?path=outputs/x.txt&token="+tok); resp.StatusCode != 403 {
		t.Errorf("sibling prefix through folder token: %d", resp.StatusCode)
	}
}

func hrefsIn(body string) []string {
	var out []string
	for _, part := range strings.Split(body, `href="`)[1:] {
		href := part[:strings.IndexByte(part, '"')]
		out = append(out, strings.ReplaceAll(href, "&amp;", "&"))
	}
	return out
}

// Links open what they were made for and nothing more.
func TestLinksOpenNoMoreThanMadeFor(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice, bob := h.dial(aliceKey), h.dial(bobKey)
	rpcCall[any](t, bob, "file.write", m("path", "share/bob-only.txt", "content", "bob shared secret"))
	rpcCall[any](t, alice, "file.write", m("path", "private/secret.txt", "content", "not in output"))
	rpcCall[any](t, alice, "file.write", m("path", "output/ok.txt", "content", "fine"))
	rpcCall[any](t, alice, "file.write", m("path", "x", "content", "a file"))
	rootLink := rpcCall[map[string]string](t, alice, "link.create", m("path", "."))["url"]
	outLink := rpcCall[map[string]string](t, alice, "link.create", m("path", "output"))["url"]
	fileLink := rpcCall[map[string]string](t, alice, "link.create", m("path", "x"))["url"]
	token := func(u string) string { p, _ := url.Parse(u); return p.Query().Get("token") }
	base := h.url + "/files/out?"

	// (a) A link to the scope's root does not open the shared folder.
	if resp, body := get(t, base+"path=share/bob-only.txt&token="+token(rootLink)); resp.StatusCode != 403 || strings.Contains(body, "secret") {
		t.Errorf("root link into share: %d %q", resp.StatusCode, body)
	}
	if resp, _ := get(t, base+"path=output/ok.txt&token="+token(rootLink)); resp.StatusCode != 200 {
		t.Errorf("root link into output: %d", resp.StatusCode)
	}
	// (b) A file link whose path became a folder does not list it.
	rpcCall[any](t, alice, "file.delete", m("path", "x"))
	rpcCall[any](t, alice, "file.write", m("path", "x/inner.txt", "content", "inner"))
	if resp, body := get(t, fileLink); resp.StatusCode == 200 {
		t.Errorf("file link listed a folder: %q", body)
	}
	// (c) A folder link follows no symlink, even one staying in the scope.
	if err := os.Symlink("../private/secret.txt", filepath.Join(h.base, "alice", "output", "s")); err != nil {
		t.Fatal(err)
	}
	if resp, body := get(t, base+"path=output/s&token="+token(outLink)); resp.StatusCode != 403 || strings.Contains(body, "not in output") {
		t.Errorf("symlink through a folder link: %d %q", resp.StatusCode, body)
	}
	// (d) A real folder named "share" in the scope's root (a command can
	// replace the share symlink with one) is listed without a link: the
	// path "share" means the shared folder, which the root link does not
	// cover, so a link signed for it would open everyone's shared files.
	if err := os.MkdirAll(filepath.Join(h.base, "alice", "share"), 0o700); err != nil {
		t.Fatal(err)
	}
	resp, listing := get(t, rootLink)
	if resp.StatusCode != 200 || !strings.Contains(listing, ">share/<") || !strings.Contains(listing, "path=output&amp;token=") {
		t.Fatalf("root listing: %d %s", resp.StatusCode, listing)
	}
	if strings.Contains(listing, "path=share&amp;") {
		t.Errorf("the root listing signed a link for share/:\n%s", listing)
	}
}

// TestFilesOutPlainAndConditional: a small file answered from memory
// carries what http.ServeContent would send (a request with a
// precondition takes that path), conditional requests work, and a file
// larger than the small-file limit streams whole.
func TestFilesOutPlainAndConditional(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	files := map[string]string{
		"output/a.txt":    "plain text\n",
		"output/b.md":     "# Title\n",
		"output/page":     "<!doctype html><p>sniffed</p>",
		"output/empty.js": "",
		"output/big.txt":  strings.Repeat("0123456789abcdef", (share.SmallFile+100)/16),
	}
	// Written on disk: the big one would not fit in one frame.
	os.MkdirAll(filepath.Join(h.base, "alice", "output"), 0o700)
	for p, content := range files {
		if err := os.WriteFile(filepath.Join(h.base, "alice", filepath.FromSlash(p)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		link := rpcCall[map[string]string](t, alice, "link.create", m("path", p))["url"]
		fast, body := get(t, link)
		slow, slowBody := get(t, link, "If-None-Match", `"no-such-etag"`)
		if fast.StatusCode != 200 || slow.StatusCode != 200 || body != content || slowBody != content {
			t.Errorf("%s: %d/%d, %d and %d bytes, want %d", p, fast.StatusCode, slow.StatusCode, len(body), len(slowBody), len(content))
		}
		for _, k := range []string{"Content-Type", "Content-Length", "Last-Modified", "Accept-Ranges", "Content-Security-Policy", "X-Content-Type-Options"} {
			if fast.Header.Get(k) != slow.Header.Get(k) {
				t.Errorf("%s: %s %q from memory, %q from ServeContent", p, k, fast.Header.Get(k), slow.Header.Get(k))
			}
		}
		if resp, body := get(t, link, "If-Modified-Since", fast.Header.Get("Last-Modified")); resp.StatusCode != 304 || body != "" {
			t.Errorf("%s: If-Modified-Since: %d %q", p, resp.StatusCode, body)
		}
	}
}

// TestLinkCreateOnlyWhatItCanServe: link.create refuses what the link
// could never serve (a hard-linked file, a symlink) with a sentence that
// says why, and a folder listing offers no link for a symlink in it.
func TestLinkCreateOnlyWhatItCanServe(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	rpcCall[any](t, alice, "file.write", m("path", "output/a.txt", "content", "a"))
	out := filepath.Join(h.base, "alice", "output")
	if err := os.Link(filepath.Join(out, "a.txt"), filepath.Join(out, "twice.txt")); err != nil {
		t.Fatal(err)
	}
	rpcCall[any](t, alice, "file.write", m("path", "output/b.txt", "content", "b"))
	if err := os.Symlink("b.txt", filepath.Join(out, "s.txt")); err != nil {
		t.Fatal(err)
	}
	for p, says := range map[string]string{"output/twice.txt": "hard link", "output/s.txt": "symbolic link"} {
		ce := callErr(t, alice, "link.create", m("path", p))
		if ce.Data.Kind != "denied" || !strings.Contains(ce.Message, says) {
			t.Errorf("link.create %s: %s %q", p, ce.Data.Kind, ce.Message)
		}
	}
	listing := rpcCall[map[string]string](t, alice, "link.create", m("path", "output"))["url"]
	resp, body := get(t, listing)
	if resp.StatusCode != 200 || !strings.Contains(body, "path=output/b.txt&amp;") || !strings.Contains(body, ">s.txt<") || strings.Contains(body, "path=output/s.txt") {
		t.Errorf("listing with a symlink: %d %s", resp.StatusCode, body)
	}
	ce := callErr(t, alice, "link.create", m("path", "output/b.txt", "expires_in", "9000h"))
	if ce.Message != "Links can last at most 365 days." {
		t.Errorf("too long: %q", ce.Message)
	}
}

// Reports are named after their title, never overwrite one another, and an
// HTML fragment that opens with the title as its heading shows it once.
func TestResultSaveNamesAndHeading(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	frag := "<h1>Quarterly Summary</h1><p>Sales rose.</p>"
	first := rpcCall[map[string]string](t, alice, "result.save", m("title", "Quarterly Summary", "content", frag, "format", "html"))
	second := rpcCall[map[string]string](t, alice, "result.save", m("title", "Quarterly Summary", "content", "<p>Second.</p>", "format", "html"))
	day := time.Now().UTC().Format("2006-01-02")
	if want := "output/report_" + day + "-quarterly-summary.html"; first["path"] != want {
		t.Errorf("first report: %q, want %q", first["path"], want)
	}
	if want := "output/report_" + day + "-quarterly-summary-2.html"; second["path"] != want {
		t.Errorf("second report: %q, want %q", second["path"], want)
	}
	_, body := get(t, first["url"])
	if n := strings.Count(strings.ToLower(body), "<h1"); n != 1 || !strings.Contains(body, "Sales rose.") {
		t.Errorf("first report has %d headings: %s", n, body)
	}
	_, body = get(t, second["url"])
	if n := strings.Count(body, "<h1>Quarterly Summary</h1>"); n != 1 || !strings.Contains(body, "Second.") {
		t.Errorf("second report has %d headings: %s", n, body)
	}
	sneaky := rpcCall[map[string]string](t, alice, "result.save", m("title", "../../secret.key", "content", "x", "format", "markdown"))
	if want := "output/report_" + day + "-secret-key.md"; sneaky["path"] != want {
		t.Errorf("path-like title: %q, want %q", sneaky["path"], want)
	}
}

// A browser opening a Markdown link sees it rendered, with a link to the
// raw file; ?raw=1 and programs (no text/html in Accept) get the bytes.
func TestMarkdownRenderedByDefault(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	alice := h.dial(aliceKey)
	md := "# Notes\n\n<script>alert(1)</script>\n\n- one\n"
	u := rpcCall[map[string]string](t, alice, "result.save", m("title", "Notes", "content", md))["url"]
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	resp, body := get(t, u, "Accept", browser)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(body, "<h1>Notes</h1>") || strings.Contains(body, "<script>") || resp.Header.Get("Vary") != "Accept" {
		t.Fatalf("browser GET: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	checkSecurityHeaders(t, resp)
	i := strings.Index(body, `<a href="?`)
	if i < 0 {
		t.Fatalf("no raw link: %s", body)
	}
	rawRef := html.UnescapeString(body[i+len(`<a href="`) : i+strings.Index(body[i:], `">`)])
	resp, body = get(t, h.url+"/files/out"+rawRef, "Accept", browser)
	if resp.StatusCode != 200 || body != md || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") {
		t.Errorf("raw link %s: %d %q", rawRef, resp.StatusCode, body)
	}
	checkSecurityHeaders(t, resp)
	if resp, body = get(t, u); body != md {
		t.Errorf("program GET: %d %q", resp.StatusCode, body)
	}
	if resp, body = get(t, u+"&raw=1&raw=1", "Accept", browser); resp.StatusCode != 403 {
		t.Errorf("duplicate raw: %d %q", resp.StatusCode, body)
	}
}
