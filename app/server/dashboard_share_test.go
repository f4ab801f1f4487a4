package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What changed shows an agent's part of the version store; when its
// share is full, the owner can let go of its versions there (two clicks),
// and the agent can change files again.
func TestDashboardForgetVersions(t *testing.T) {
	t.Parallel()
	chromiumPath(t)                                // skip early under -short
	h := start(t, "[versions]\nmax_size_mb = 4\n") // shares of 1 MiB
	alice := h.dial(aliceKey)
	dir := filepath.Join(h.base, "alice")
	rpcCall[any](t, alice, "file.write", m("path", "hello.txt", "content", "hi"))
	refused := false
	for i := range 5 {
		name := fmt.Sprintf("churn%d.txt", i)
		os.WriteFile(filepath.Join(dir, name), textOf(name, 300<<10), 0o644)
		if ce := callErrOrNil(t, alice, "file.write", m("path", name, "content", "x")); ce != nil {
			refused = true
			break
		}
	}
	if !refused {
		t.Fatal("alice's churn was never refused")
	}

	b := newBrowser(t)
	b.login(h)
	b.openTab("changes")
	b.choose("#wc-agent", "alice-agent")
	b.wait(`/alice-agent's versions take .* of its 1\.0 MB share; 1 change refused because it was full\./.test(document.querySelector('#versions-usage').textContent)`)
	b.wait(`!document.querySelector('#versions-forget').hidden`)
	b.click("#wc-forget")
	b.wait(`document.querySelector('#wc-forget').textContent.includes('can then no longer be undone')`)
	if u := h.box.Versions().Usage(); u.Bytes < 900<<10 {
		t.Fatalf("one click let go already: %+v", u)
	}
	b.click("#wc-forget")
	b.wait(`/alice-agent's versions take 0 B/.test(document.querySelector('#versions-usage').textContent) && document.querySelector('#versions-forget').hidden`)
	os.WriteFile(filepath.Join(dir, "again.txt"), textOf("again", 300<<10), 0o644)
	rpcCall[any](t, alice, "file.write", m("path", "again.txt", "content", "x"))
	b.noPageErrors()
	if text := js[string](b, `document.querySelector('#view-changes').innerText`); strings.Contains(text, "undefined") {
		t.Errorf("the view says undefined:\n%s", text)
	}
}
