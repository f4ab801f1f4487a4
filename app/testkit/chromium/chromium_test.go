package chromium

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A tab of the shared Chromium waits for a condition across a
// navigation, evaluates an expression and saves a screenshot.
func TestSharedTab(t *testing.T) {
	tab, cancel := chromedp.NewContext(Shared(t, Path(t)), chromedp.WithNewBrowserContext())
	defer cancel()
	defer StopShared()
	failed := func() { t.Log("failed") }
	page := `<p id=x></p><script>setTimeout(() => { document.getElementById('x').textContent = ` + Quote(`it's "here"`) + ` }, 200)</script>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(page)) }))
	defer srv.Close()
	// The tab's first action opens it, and binds its life to the context
	// it runs in: tab itself, not one of Do's timed children.
	if err := chromedp.Do(tab, chromedp.EmulateViewport(800, 600)); err != nil {
		t.Fatal(err)
	}
	Do(t, tab, failed, chromedp.Navigate(srv.URL))
	if err := Wait(tab, `document.getElementById('x').textContent !== ''`, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := Eval[string](t, tab, failed, `document.getElementById('x').textContent`); got != `it's "here"` {
		t.Errorf("text %q", got)
	}
	dir := t.TempDir()
	Shot(t, tab, "page", dir)
	if fi, err := os.Stat(filepath.Join(dir, "page.png")); err != nil || fi.Size() == 0 {
		t.Errorf("screenshot: %v", err)
	}
	if err := Wait(tab, `false`, 100*time.Millisecond); err == nil {
		t.Error("a condition that never holds: no error")
	}
}
