package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/security"
	"github.com/chromedp/chromedp"

	"corral/app/client"
	"corral/app/testkit/chromium"
	"corral/core/testkit/linediff"
	"corral/core/testkit/poll"
)

// lockedLines collects a process's output lines as they come.
type lockedLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string{}, l.lines...)
}

// TestSettingsInBrowser is issue 26's check through the real binary in
// real Chromium, on a fresh install: the approval timeout changed on the
// Settings page is used by the next question without a restart; Turn on
// the LAN on the pairing screen opens the LAN side at once and a
// phone-width page pairs over HTTPS; with the LAN on, save_result_page's
// link is on the LAN address and a client there opens it; a setting that
// needs a restart shows Restart Corral, after which the same process
// starts again (printing the LAN address) and the open tab reconnects by
// itself; config.toml differs from the one first written only in the
// changed keys.
func TestSettingsInBrowser(t *testing.T) {
	t.Parallel()
	b := newChrome(t)
	bin := corralBinary(t)
	corralHome, home := t.TempDir(), t.TempDir()
	outside := filepath.Join(home, "taxes.txt")
	os.WriteFile(outside, []byte("tax data"), 0o644)
	// A fixed port: the restarted daemon listens where the tab reconnects.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	// The LAN side listens on a loopback address (as the server package's
	// LAN tests do): network tests talk only to loopback, never to the
	// machine's real network. lanAddress says "" where 127.0.0.2 cannot be
	// bound.
	lanIP := lanAddress()
	cmd := exec.Command(bin, "serve", "--headless", "--listen", addr)
	cmd.Env = append(os.Environ(), "CORRAL_HOME="+corralHome, "HOME="+home, "CORRAL_URL=", "CORRAL_KEY=", "CORRAL_LAN_ADDRESS="+lanIP)
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := &lockedLines{}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out.mu.Lock()
			out.lines = append(out.lines, sc.Text())
			out.mu.Unlock()
		}
	}()
	waitLine := func(re *regexp.Regexp, n int) []string {
		t.Helper()
		var hits []string
		poll.EventuallyNil(t, time.Minute, func() error {
			hits = nil
			for _, l := range out.all() {
				if m := re.FindStringSubmatch(l); m != nil {
					hits = append(hits, m[len(m)-1])
				}
			}
			if len(hits) < n {
				return fmt.Errorf("lines %q", out.all())
			}
			return nil
		}, "%d lines matching %s", n, re)
		return hits
	}
	login := waitLine(regexp.MustCompile(`^corral: dashboard (\S+)$`), 1)[0]
	url := "http://" + addr
	cfgPath := filepath.Join(corralHome, "config.toml")
	first, _ := os.ReadFile(cfgPath)
	agentKey := string(regexp.MustCompile(`(?m)^key = "([^"]+)"`).FindSubmatch(first)[1])
	ownerTok, _ := os.ReadFile(filepath.Join(corralHome, "owner.token"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	owner, err := client.Dial(ctx, url, strings.TrimSpace(string(ownerTok)))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	agent, err := client.Dial(ctx, url, agentKey)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()

	b.do(chromedp.Navigate(login))
	b.wait(`document.querySelector('#conn')?.dataset.state === 'open'`)
	b.click(`a.tab[data-tab="settings"]`)
	b.wait(`document.body.dataset.settingsReady && document.querySelector('#set-sandbox-approval-timeout')?.value === '2m'`)

	// The approval timeout: the next question uses it, no restart.
	setField := func(sel, value string) {
		evalJS[chromedp.Void](b, `(() => { const el = document.querySelector(`+chromium.Quote(sel)+`); el.value = `+chromium.Quote(value)+`; el.dispatchEvent(new Event('change', {bubbles: true})); })()`)
	}
	setField("#set-sandbox-approval-timeout", "3m")
	b.wait(`document.querySelector('#set-sandbox-approval-timeout').value === '3m' && !document.querySelector('#set-sandbox-approval-timeout').hasAttribute('aria-busy')`)
	asked := make(chan error, 1)
	go func() {
		_, err := agent.Call(ctx, "file.read", map[string]any{"path": outside})
		asked <- err
	}()
	var pending struct {
		Pending []struct {
			ID          string    `json:"id"`
			RequestedAt time.Time `json:"requested_at"`
			ExpiresAt   time.Time `json:"expires_at"`
		}
	}
	poll.EventuallyNil(t, time.Minute, func() error {
		if err := owner.CallInto(ctx, "approval.list", nil, &pending); err != nil || len(pending.Pending) == 0 {
			return fmt.Errorf("approval.list: %d pending, %v", len(pending.Pending), err)
		}
		return nil
	}, "the agent's question to reach the owner")
	if got := pending.Pending[0].ExpiresAt.Sub(pending.Pending[0].RequestedAt); got != 3*time.Minute {
		t.Errorf("the next question waits %v, want 3m", got)
	}
	if _, err := owner.Call(ctx, "approval.respond", map[string]any{"id": pending.Pending[0].ID, "decision": "deny_once"}); err != nil {
		t.Fatal(err)
	}
	<-asked

	// An invalid value: start-up's message.
	setField("#set-exec-max-running", "0")
	b.wait(`!document.querySelector('[data-key="exec.max_running"] .settings-error').hidden`)
	if msg := evalJS[string](b, `document.querySelector('[data-key="exec.max_running"] .settings-error').textContent`); !regexp.MustCompile(`^` + regexp.QuoteMeta(cfgPath) + `:\d+: exec\.max_running: must be positive$`).MatchString(msg) {
		t.Errorf("refusal %q", msg)
	}

	// Pairing from a fresh install: Turn on the LAN, then the code.
	if lanIP == "" {
		t.Log("cannot listen on 127.0.0.2 here: the LAN part is left out")
	} else {
		b.click(`a.tab[data-tab="devices"]`)
		b.click("#pair-start")
		b.wait(`!document.querySelector('#pair-lan-on').hidden`)
		b.click("#pair-lan-on")
		b.wait(`document.querySelector('#pair-qr svg path.qr-dark') && document.querySelector('#pair-url').value.startsWith('https://')`)
		link := evalJS[string](b, `document.querySelector('#pair-url').value`)
		lanBase := "https://" + net.JoinHostPort(lanIP, strings.Split(addr, ":")[1])
		if !strings.HasPrefix(link, lanBase+"/pair?code=") {
			t.Fatalf("pairing link %q, want one on %s", link, lanBase)
		}
		// With the LAN on, a result page's link is on the LAN address,
		// and a client there opens it.
		var res struct {
			URL     string `json:"url"`
			ViewURL string `json:"view_url"`
		}
		if err := agent.CallInto(ctx, "result.save", map[string]any{"title": "Weekly", "content": "# Weekly\n\nAll quiet.\n", "format": "markdown"}, &res); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(res.URL, lanBase+"/files/out?") {
			t.Errorf("result.save url %q, want the LAN address %s", res.URL, lanBase)
		}
		lanClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		if resp, err := lanClient.Get(res.URL); err != nil {
			t.Errorf("GET the result on the LAN: %v", err)
		} else {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), "All quiet.") {
				t.Errorf("the result on the LAN: %d %q", resp.StatusCode, body)
			}
		}
		// A phone-width page pairs over HTTPS (its own origin: the LAN
		// address), then comes back to the computer's dashboard.
		if _, err := chromedp.Call(b.ctx, security.SetIgnoreCertificateErrors, security.SetIgnoreCertificateErrorsParams{Ignore: true}); err != nil {
			t.Fatal(err)
		}
		b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch))
		b.do(chromedp.Navigate(link))
		b.typeIn("#name", "Kitchen phone")
		b.click(`#pair button[type=submit]`)
		b.wait(`location.origin === ` + chromium.Quote(lanBase) + ` && location.hash === '#approvals' && document.querySelector('#conn')?.dataset.state === 'open'`)
		b.shot("settings-phone-paired-over-lan")
		b.do(chromedp.EmulateViewport(1280, 900))
		login2, err := owner.Call(ctx, "session.login", nil)
		if err != nil {
			t.Fatal(err)
		}
		u := regexp.MustCompile(`"url":\s*"([^"]+)"`).FindSubmatch(login2)
		if u == nil {
			t.Fatalf("session.login: %s", login2)
		}
		b.do(chromedp.Navigate(string(u[1]) + "#settings"))
		b.wait(`document.querySelector('#conn')?.dataset.state === 'open' && document.body.dataset.settingsReady`)
	}

	// A setting that needs a restart: Restart Corral; the same process
	// starts again, and the tab reconnects by itself.
	setField("#set-exec-timeout", "5m")
	b.wait(`!document.querySelector('#settings-restart').hidden && !document.querySelector('#settings-restart-btn').hidden`)
	b.shot("settings-restart-button")
	b.click("#settings-restart-btn")
	waitLine(regexp.MustCompile(`^corral: listening on (http://\S+)$`), 2)
	b.wait(`document.querySelector('#conn').dataset.state === 'open' && document.querySelector('#settings-restart').hidden && document.querySelector('#set-exec-timeout').value === '5m'`)
	if cmd.ProcessState != nil {
		t.Fatal("the process ended instead of starting again")
	}
	if lanIP != "" {
		if lines := waitLine(regexp.MustCompile(`^corral: on your network \(paired phones, links\): (\S+)$`), 1); !strings.Contains(lines[0], lanIP) {
			t.Errorf("start-up LAN line %q", lines[0])
		}
	}

	// config.toml: the first file with only the changed keys.
	after, _ := os.ReadFile(cfgPath)
	want := map[string]bool{`approval_timeout = "3m"`: true, `timeout = "5m"`: true}
	if lanIP != "" {
		want["lan = true"] = true
	}
	removed, added := linediff.Changed(string(first), string(after))
	if len(removed) != 0 || len(added) != len(want) {
		t.Errorf("config.toml: removed %q, added %q", removed, added)
	}
	for _, l := range added {
		if !want[l] {
			t.Errorf("config.toml gained %q", l)
		}
	}
}

// lanAddress is the loopback address the daemon's LAN side uses in tests
// (CORRAL_LAN_ADDRESS), or "" where it cannot be bound.
func lanAddress() string {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		return ""
	}
	ln.Close()
	return "127.0.0.2"
}
