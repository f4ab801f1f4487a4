package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/security"
	"github.com/chromedp/chromedp"

	"corral/core/testkit/linediff"
	"corral/core/testkit/needs"
	"corral/core/testkit/poll"
)

// waitFile polls path until it holds want, within 20 s.
func waitFile(t *testing.T, path, want string) string {
	t.Helper()
	var b []byte
	poll.EventuallyNil(t, callWithin, func() error {
		if b, _ = os.ReadFile(path); !strings.Contains(string(b), want) {
			return fmt.Errorf("it holds:\n%s", b)
		}
		return nil
	}, "%s to hold %q", path, want)
	return string(b)
}

// TestDashboardSettings is issue 26's check of the Settings page: the
// approval timeout changed there is written as one line of config.toml,
// comments kept, and the next question uses it without a restart; an
// invalid value is refused with start-up's line-and-key message; a
// setting that needs a restart shows Restart Corral, and after the
// restart the open tab reconnects by itself.
func TestDashboardSettings(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside", "tax.pdf")
	os.MkdirAll(filepath.Dir(outside), 0o755)
	os.WriteFile(outside, []byte("tax data"), 0o644)
	h := startWith(t, setup{dir: dir})
	if err := os.WriteFile(h.files.Config, []byte(ownerConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.login(h)
	b.openTab("settings")
	b.wait(`document.body.dataset.settingsReady && document.querySelector('#set-sandbox-approval-timeout')?.value === '2m'`)
	if title := js[string](b, `document.title`); title != "Corral — Settings" {
		t.Errorf("title %q", title)
	}
	for _, wd := range []int64{1280, 1440} {
		b.do(chromedp.EmulateViewport(wd, 900))
		if w := js[int64](b, `document.documentElement.scrollWidth`); w > wd {
			t.Errorf("settings page is %dpx wide at %dpx", w, wd)
		}
		b.shot("settings-" + strconv.FormatInt(wd, 10))
	}
	b.phone()
	if w := js[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("settings page is %dpx wide at 390px", w)
	}
	b.shot("settings-390")
	b.labelled()
	b.desktop()

	// The approval timeout: saved as one line, in effect for the next question.
	b.choose("#set-sandbox-approval-timeout", "9m")
	// Saved once the page has the answer (the row is drawn again, not
	// busy): the file is written before the value is put in effect.
	b.wait(`!document.querySelector('#set-sandbox-approval-timeout[aria-busy]') && document.querySelector('#set-sandbox-approval-timeout')?.value === '9m'`)
	text := waitFile(t, h.files.Config, `approval_timeout = "9m"`)
	if removed, added := linediff.Changed(ownerConfig, text); len(removed) != 0 || strings.Join(added, "|") != `approval_timeout = "9m"` {
		t.Errorf("config.toml: removed %q, added %q", removed, added)
	}
	own := h.owner(t)
	done := async(h.dial(aliceKey), "file.read", m("path", outside))
	a := own.requested()
	if got := a.ExpiresAt.Sub(a.RequestedAt); got != 9*time.Minute {
		t.Errorf("the next question waits %v, want 9m", got)
	}
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "deny_once"))
	<-done

	// An invalid value: start-up's message, the file untouched.
	b.choose("#set-sandbox-approval-timeout", "0s")
	b.wait(`!document.querySelector('[data-key="sandbox.approval_timeout"] .settings-error').hidden`)
	msg := js[string](b, `document.querySelector('[data-key="sandbox.approval_timeout"] .settings-error').textContent`)
	line := strings.Count(ownerConfig[:strings.Index(ownerConfig, "# approval_timeout")], "\n") + 2
	if want := h.files.Config + ":" + strconv.Itoa(line) + ": sandbox.approval_timeout: must be at least 1s"; msg != want {
		t.Errorf("refusal %q, want %q", msg, want)
	}
	b.shot("settings-invalid")
	if after, _ := os.ReadFile(h.files.Config); string(after) != text {
		t.Errorf("an invalid value changed config.toml:\n%s", after)
	}
	// Two changes back to back: the answer to the first re-renders the
	// list; the refusal of the second must still show (it was set on the
	// replaced row, off the page, in a whole-suite run).
	b.choose("#set-sandbox-approval-timeout", "8m")
	b.choose("#set-sandbox-approval-timeout", "0s")
	b.wait(`!document.querySelector('[data-key="sandbox.approval_timeout"] .settings-error').hidden && document.querySelector('#set-sandbox-approval-timeout').value === '0s'`)
	waitFile(t, h.files.Config, `approval_timeout = "8m"`)
	b.choose("#set-sandbox-approval-timeout", "9m")
	waitFile(t, h.files.Config, `approval_timeout = "9m"`)
	b.wait(`document.querySelector('[data-key="sandbox.approval_timeout"] .settings-error').hidden`)

	// A setting that needs a restart: Restart Corral, then the tab
	// reconnects by itself to the Corral that started again.
	asked := make(chan struct{})
	h.srv.SetRestart(func() { close(asked) })
	b.choose("#set-exec-timeout", "5m")
	b.wait(`!document.querySelector('#settings-restart').hidden && !document.querySelector('#settings-restart-btn').hidden`)
	if got := js[string](b, `document.querySelector('#settings-restart-text').textContent`); !strings.Contains(got, "Longest a command may run") {
		t.Errorf("restart notice %q", got)
	}
	b.shot("settings-restart")
	b.click("#settings-restart-btn")
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("Restart Corral did not ask for a restart")
	}
	h2 := restart(t, h)
	b.wait(`document.querySelector('#conn').dataset.state === 'open' && !document.body.dataset.signedOut`)
	poll.Eventually(t, callWithin, func() bool { return h2.srv.Connections() > 0 }, "the tab to reconnect to the restarted Corral")
	b.noPageErrors()
}

// TestDashboardPairTurnsLANOn is issue 26's item 6: on a fresh install
// (LAN off), the pairing screen offers Turn on the LAN, which opens the
// LAN listener without a restart and shows the code; a phone-width page
// pairs over HTTPS on the LAN address; config.toml gains only lan = true.
func TestDashboardPairTurnsLANOn(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	h, _ := startSettings(t, "")
	h.srv.lanCertFile = filepath.Join(h.dir, "lan-cert.pem")
	h.srv.lanIP = func() (net.IP, error) { return net.IPv4(127, 0, 0, 2), nil }
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		needs.Can(t, "listen on 127.0.0.2", err)
	} else {
		ln.Close()
	}
	b := newBrowser(t)
	b.login(h)
	b.openTab("devices")
	b.click("#pair-start")
	b.wait(`!document.querySelector('#pair-problem').hidden && !document.querySelector('#pair-lan-on').hidden`)
	b.shot("devices-lan-off")
	b.click("#pair-lan-on")
	b.wait(`document.querySelector('#pair-qr svg path.qr-dark') && document.querySelector('#pair-url').value.startsWith('https://127.0.0.2:')`)
	link := js[string](b, `document.querySelector('#pair-url').value`)
	b.shot("devices-lan-on")
	text, _ := os.ReadFile(h.files.Config)
	if removed, added := linediff.Changed(ownerConfig, string(text)); len(removed) != 0 || strings.Join(added, "|") != "lan = true" {
		t.Errorf("config.toml: removed %q, added %q", removed, added)
	}

	b.noPageErrors()

	// The phone: the same tab at phone width, on the LAN address (another
	// origin: none of the owner's cookies), accepting Corral's own
	// certificate as the owner does after comparing its fingerprint.
	if _, err := chromedp.Call(b.ctx, security.SetIgnoreCertificateErrors, security.SetIgnoreCertificateErrorsParams{Ignore: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		chromedp.Call(b.ctx, security.SetIgnoreCertificateErrors, security.SetIgnoreCertificateErrorsParams{Ignore: false})
	})
	b.phone()
	b.do(chromedp.Navigate(link))
	pairInPage(t, b, "Kitchen phone")
	if origin := js[string](b, `location.origin`); !strings.HasPrefix(link, origin+"/") || !strings.HasPrefix(origin, "https://127.0.0.2:") {
		t.Errorf("the phone's dashboard is at %s, want the LAN address of %s", origin, link)
	}
	b.shot("phone-paired-over-lan")
	devs := rpcCall[struct{ Devices []struct{ Name string } }](t, h.dial(ownerToken), "device.list", nil)
	if len(devs.Devices) != 1 || devs.Devices[0].Name != "Kitchen phone" {
		t.Errorf("devices: %+v", devs.Devices)
	}
	// The phone sees the settings and cannot change them.
	b.hash("#settings")
	b.wait(`document.body.dataset.settingsReady && !document.querySelector('#settings-readonly').hidden && document.querySelector('#set-server-lan').disabled && document.querySelector('#set-server-lan').checked`)
	b.shot("settings-phone-readonly")
	b.noPageErrors()
}
