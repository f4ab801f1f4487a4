// Package chromium drives a real headless Chromium for the browser tests
// of the dashboard (app/server) and of the whole program (app): Path
// finds it, Start starts one, Shared keeps one per test binary that tests
// open tabs in, Wait polls a JavaScript condition across navigations and
// Shot saves a screenshot. A test without -short that finds no Chromium
// fails, saying to run packaging/deps.sh; under -short it is skipped.
//
// It is for tests only, against servers on loopback. It does not sandbox
// Chromium (tests run as root, where Chromium's own sandbox cannot
// start), and it does not isolate tabs beyond what their BrowserContext
// gives.
package chromium

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path returns the path of the installed Chromium. Without one the test
// fails, or under -short is skipped; under -short it is skipped anyway,
// since starting Chromium takes seconds.
func Path(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("drives headless Chromium, which takes seconds; skipped under -short")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("Chromium is not installed: run packaging/deps.sh (browser tests may skip only under -short)")
	return ""
}

// Start starts a headless Chromium at execPath with a window of 1280×800
// (opts may change it, or give it a profile folder with
// chromedp.UserDataDir; without one the allocator makes a temporary
// profile and removes it). ctx is its first tab; the browser lives until
// stop.
func Start(execPath string, opts ...chromedp.ExecAllocatorOption) (ctx context.Context, stop func(), err error) {
	all := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1280, 800),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(all, opts...)...)
	ctx, cancel := chromedp.NewContext(alloc)
	stop = func() { cancel(); cancelAlloc() }
	// The first Run binds the browser's life to ctx, which only stop ends.
	if err := chromedp.Do(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	return ctx, stop, nil
}

// shared is the one headless Chromium that the browser tests of a test
// binary share: starting one costs most of a second and much CPU, a tab
// in a BrowserContext of its own costs little. It starts with the first
// test that needs it, again after a crash, and stops in StopShared.
var shared struct {
	mu   sync.Mutex
	ctx  context.Context // the browser's first tab; nil before the first start
	stop func()
}

// Shared returns the running shared Chromium, starting it if there is
// none yet or the last one died. Call StopShared from TestMain after
// m.Run.
func Shared(t testing.TB, execPath string) context.Context {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.ctx != nil && shared.ctx.Err() == nil {
		return shared.ctx
	}
	if shared.stop != nil {
		t.Log("the shared Chromium has stopped; starting another")
		shared.stop()
		shared.ctx, shared.stop = nil, nil
	}
	ctx, stop, err := Start(execPath)
	if err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	shared.ctx, shared.stop = ctx, stop
	return ctx
}

// StopShared stops the shared Chromium, if one runs.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.stop != nil {
		shared.stop()
		shared.ctx, shared.stop = nil, nil
	}
}

// Wait polls the JavaScript condition cond in tab until it is true or
// within passes, across navigations (a navigation ends one poll, and the
// new page is polled), and returns the last error: nil once cond holds.
// The caller says what the page showed.
func Wait(tab context.Context, cond string, within time.Duration) error {
	deadline := time.Now().Add(within)
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithDeadline(tab, deadline.Add(2*time.Second))
		_, err = chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		if err == nil {
			return nil
		}
		if msg := err.Error(); !strings.Contains(msg, "navigated") && !strings.Contains(msg, "context was destroyed") && !strings.Contains(msg, "Cannot find context") {
			return err
		}
		time.Sleep(50 * time.Millisecond) // a navigation ended the poll: poll the new page
	}
	return err
}

// Shot saves tab's viewport as name.png in each of dirs and in
// $CORRAL_SHOTS when set, making the folders. A screenshot that cannot
// be taken or saved is logged, not a failure.
func Shot(t testing.TB, tab context.Context, name string, dirs ...string) {
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	if d := os.Getenv("CORRAL_SHOTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		os.MkdirAll(d, 0o755)
		if err := os.WriteFile(filepath.Join(d, name+".png"), buf, 0o644); err != nil {
			t.Logf("screenshot %s: %v", name, err)
		}
	}
}

// Do runs actions in tab within 30 s. When they fail, it calls failed
// (to take a screenshot, say) and fails t. The tab must be open already:
// a tab's first action binds its life to the context it runs in, here
// one that ends with Do, so open a tab with chromedp.Do(tab, …) itself.
func Do(t testing.TB, tab context.Context, failed func(), actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		failed()
		t.Fatalf("browser: %v", err)
	}
}

// Eval evaluates the JavaScript expression expr in tab (awaiting a
// promise) within 30 s and decodes its value. When it fails, it calls
// failed and fails t.
func Eval[T any](t testing.TB, tab context.Context, failed func(), expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		failed()
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// Quote returns s as a JavaScript string literal.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
