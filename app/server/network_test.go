package server

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"corral/app/client"
	"corral/app/testhost"
	"corral/app/wire"
	"corral/core/audit"
)

// netWorld is a server whose commands' connections resolve names ending in
// .test to a test host in its own network namespace, and evil.test /
// lan.test to loopback and a LAN address.
type netWorld struct {
	h     *harness
	host  *testhost.Host
	alice *client.Client
	own   ownerView
	dir   string
}

func newNetWorld(t testing.TB, extra string) *netWorld {
	t.Helper()
	host := testhost.Start(t, testhost.Options{BigBytes: 10 << 20})
	dir := t.TempDir()
	w := &netWorld{host: host, dir: dir}
	w.start(t, extra)
	// The test host's certificate, where the agent's programs can use it.
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: host.Cert.Raw})
	home := filepath.Join(w.h.base, "alice")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "ca.pem"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *netWorld) start(t testing.TB, extra string) {
	t.Helper()
	r := testhost.Resolver{Host: w.host, Extra: map[string][]netip.Addr{
		"evil.test": {netip.MustParseAddr("127.0.0.1")},
		"lan.test":  {netip.MustParseAddr("192.168.1.20")},
		"self.test": {w.host.Gateway},
		"localhost": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
		// The pip bundle's names, served by the test host.
		"pypi.org":               {w.host.Addr},
		"files.pythonhosted.org": {w.host.Addr},
	}}
	w.h = startWith(t, setup{dir: w.dir, extra: extra, resolver: r})
	w.alice = w.h.dial(aliceKey)
	w.own = w.h.owner(t)
}

// run starts command.run and returns its result when it ends.
func (w *netWorld) run(params map[string]any) chan wire.RunResult {
	ch := make(chan wire.RunResult, 1)
	go func() {
		var r wire.RunResult
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := w.alice.CallInto(ctx, "command.run", params, &r); err != nil {
			r.Stderr = "call failed: " + err.Error()
			r.ExitCode = -1
		}
		ch <- r
	}()
	return ch
}

// answer answers the one question a command's declared domains get
// before it starts; domains lists them as the question joins them.
func (w *netWorld) answer(t *testing.T, domains, decision string) wire.Approval {
	t.Helper()
	a := w.own.requested()
	if a.Access != "network" || a.Domain != domains || strings.Join(a.Domains, ", ") != domains || a.OneTimeOnly || !strings.Contains(a.Description, "wants to connect to "+domains) {
		t.Fatalf("question %+v; want one about %s", a, domains)
	}
	rpcCall[any](t, w.own.c, "approval.respond", m("id", a.ID, "decision", decision))
	return a
}

func wantOut(t *testing.T, r wire.RunResult, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(r.Stdout, p) {
			t.Errorf("stdout lacks %q: %+v", p, r)
		}
	}
}

// socksTCP is a raw TCP client speaking SOCKS5 to the proxy, as ssh's
// ProxyCommand or any TCP program would: it prints the service's banner.
const socksTCP = `python3 -c '
import socket
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"\x05\x01\x00"); assert s.recv(2) == b"\x05\x00"
h = b"git.test"
s.sendall(b"\x05\x01\x00\x03" + bytes([len(h)]) + h + (22).to_bytes(2, "big"))
rep = s.recv(10); print("socks reply", rep[1])
if rep[1] == 0: print(s.recv(64).decode().strip())
'`

func TestNetworkThroughTheGate(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t, "")
	t.Run("allowed domain: curl, python https and raw TCP over SOCKS5", func(t *testing.T) {
		cmd := `curl -sS http://pypi.test/simple; ` +
			`python3 -c 'import ssl, urllib.request; print(urllib.request.urlopen("https://pypi.test/pip", context=ssl.create_default_context(cafile="ca.pem")).read().decode())'; ` +
			socksTCP
		done := w.run(m("command", cmd, "allowed_domains", []string{"pypi.test", "git.test"}, "reason", "install a package"))
		w.answer(t, "git.test, pypi.test", "allow_once")
		r := <-done
		wantOut(t, r, "hello from the test host: GET /simple host=pypi.test", "hello from the test host: GET /pip", "socks reply 0", "SSH-2.0-CorralTestHost")
		if r.Network == nil || r.Network.Connections != 3 || len(r.Network.Refused) != 0 {
			t.Errorf("network summary %+v", r.Network)
		}
		evs := rpcCall[struct{ Events []wire.Event }](t, w.own.c, "audit.query", m("op", "network.connect"))
		if len(evs.Events) != 3 || evs.Events[0].Decision != audit.Allow || evs.Events[0].Bytes == 0 || !strings.Contains(evs.Events[0].Detail, "the owner's answer; for command") {
			t.Errorf("connection events %+v", evs.Events)
		}
	})
	t.Run("unlisted domain: refused without asking, explained", func(t *testing.T) {
		done := w.run(m("command", `curl -sS -o /dev/null -w "%{http_code}\n" http://other.test/ 2>&1; curl -sS -p https://other.test/ 2>&1 | head -c 200; echo`, "allowed_domains", []string{"pypi.test"}))
		w.answer(t, "pypi.test", "allow_once") // the declared one, before it starts
		r := <-done
		wantOut(t, r, "403")
		if r.Network == nil || len(r.Network.Refused) != 2 || !strings.Contains(r.Network.Refused[0].Reason, "not in this command's allowed_domains") ||
			!strings.Contains(r.Stderr, "corral: Corral refused other.test:") {
			t.Errorf("refusal: %+v", r)
		}
		if p := rpcCall[struct{ Pending []any }](t, w.own.c, "approval.list", nil); len(p.Pending) != 0 {
			t.Errorf("the owner was asked: %v", p.Pending)
		}
	})
	t.Run("denied domain", func(t *testing.T) {
		done := w.run(m("command", `curl -s http://v1.api.test/x; echo " exit=$?"`, "allowed_domains", []string{"*.api.test"}))
		w.answer(t, "*.api.test", "deny_once")
		r := <-done
		wantOut(t, r, "Corral refused v1.api.test:80: the owner denied it.")
		if strings.Contains(r.Stdout, "hello from the test host") {
			t.Errorf("a denied domain was reached: %+v", r)
		}
	})
	t.Run("names and addresses of this machine and the LAN are refused, even with network: true", func(t *testing.T) {
		before := w.host.Hits()
		port := strings.TrimPrefix(w.h.url[strings.LastIndex(w.h.url, ":"):], ":")
		cmd := fmt.Sprintf(`for u in http://evil.test/ http://lan.test/ http://self.test/ http://127.0.0.1:%s/healthz http://localhost:%s/healthz http://[::1]:%s/ http://%s/; do curl -s -o /dev/null -w "%%{http_code} " $u; done; echo`,
			port, port, port, w.host.Gateway)
		done := w.run(m("command", cmd, "network", true))
		a := w.own.requested()
		if a.Access != "network" || !a.OneTimeOnly {
			t.Fatalf("network: true asks once up front: %+v", a)
		}
		rpcCall[any](t, w.own.c, "approval.respond", m("id", a.ID, "decision", "allow_once"))
		r := <-done
		if strings.TrimSpace(r.Stdout) != "403 403 403 403 403 403 403" {
			t.Errorf("codes %q; want every one refused: %+v", r.Stdout, r.Network)
		}
		if w.host.Hits() != before {
			t.Errorf("the test host was reached")
		}
		for _, f := range r.Network.Refused {
			if !strings.Contains(f.Reason, "which commands may not reach") {
				t.Errorf("refusal %+v", f)
			}
		}
	})
	t.Run("bad lists are refused before anything runs", func(t *testing.T) {
		for _, p := range []map[string]any{
			m("command", "true", "package_managers", []string{"brew"}),
			m("command", "true", "allowed_domains", []string{"exa mple.com"}),
		} {
			if ce := callErr(t, w.alice, "command.run", p); ce.Data.Kind != "invalid_params" || ce.Message == "" {
				t.Errorf("%v: %+v", p, ce)
			}
		}
	})
	// Last: the restarted server lives only as long as this subtest.
	t.Run("allow always persists across a restart", func(t *testing.T) {
		done := w.run(m("command", `curl -s http://files.test/a`, "package_managers", []string{"pip"}, "allowed_domains", []string{"files.test"}))
		w.answer(t, "*.pypi.org, *.pythonhosted.org, files.pythonhosted.org, files.test, pypi.org", "allow_always")
		wantOut(t, <-done, "GET /a")
		w.h.stop()
		w.start(t, "")
		r := <-w.run(m("command", `curl -s http://files.test/b`, "allowed_domains", []string{"files.test"}))
		wantOut(t, r, "GET /b")
		if p := rpcCall[struct{ Pending []any }](t, w.own.c, "approval.list", nil); len(p.Pending) != 0 {
			t.Errorf("asked again after allow_always: %v", p.Pending)
		}
		rules := rpcCall[struct {
			Rules []struct{ Access, Target string }
		}](t, w.own.c, "rule.list", nil)
		// One rule per domain the one question named.
		var targets []string
		for _, r := range rules.Rules {
			if r.Access == "network" {
				targets = append(targets, r.Target)
			}
		}
		slices.Sort(targets)
		if strings.Join(targets, ", ") != "*.pypi.org, *.pythonhosted.org, files.pythonhosted.org, files.test, pypi.org" || len(rules.Rules) != 5 {
			t.Errorf("rules %+v", rules.Rules)
		}
	})
}

// TestNetworkCannotReachTheOwner is the attack of issue 13: a command with
// network allowed tries the host's loopback, Corral's own port and an
// abstract Unix socket (X11, D-Bus), directly and through the proxy. None
// of them may see a connection.
func TestNetworkCannotReachTheOwner(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	var hits atomic.Int64
	count := func(ln net.Listener) {
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				hits.Add(1)
				c.Close()
			}
		}()
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	count(tcp)
	abstract := fmt.Sprintf("corral-x11-%d", time.Now().UnixNano())
	ul, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	count(ul)
	port := tcp.Addr().(*net.TCPAddr).Port
	corral := strings.TrimPrefix(h.url, "http://")
	cmd := fmt.Sprintf(`bash -c 'echo x > /dev/tcp/127.0.0.1/%d' 2>/dev/null && echo REACHED-TCP; `+
		`bash -c 'echo x > /dev/tcp/%s' 2>/dev/null && echo REACHED-CORRAL; `+
		`curl -s -m 5 -o /dev/null -w "%%{http_code} " http://127.0.0.1:%d/; curl -s -m 5 -o /dev/null -w "%%{http_code} " http://%s/healthz; `+
		`curl -s -m 5 --socks5-hostname 127.0.0.1:3128 -o /dev/null -w "%%{http_code} " http://127.0.0.1:%d/; `+
		`perl -MSocket -e 'socket(S, PF_UNIX, SOCK_STREAM, 0) or die; connect(S, pack_sockaddr_un("\0%s")) and print "REACHED-UNIX\n"'; echo`,
		port, strings.Replace(corral, ":", "/", 1), port, corral, port, abstract)
	alice := h.dial(aliceKey)
	own := h.owner(t)
	done := make(chan wire.RunResult, 1)
	go func() {
		done <- rpcCall[wire.RunResult](t, alice, "command.run", m("command", cmd, "network", true))
	}()
	a := own.requested()
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_once"))
	r := <-done
	// 403 from the proxy twice; SOCKS5 has no HTTP code (000): refused.
	if strings.Contains(r.Stdout, "REACHED") || strings.TrimSpace(r.Stdout) != "403 403 000" {
		t.Errorf("from inside: %+v", r)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the host's listeners saw %d connections", n)
	}
	evs := rpcCall[struct{ Events []wire.Event }](t, own.c, "audit.query", m("op", "network.connect", "decision", "deny"))
	if len(evs.Events) != 3 {
		t.Errorf("refused connections in the audit log: %+v", evs.Events)
	}
}

// TestNetworkCannotReachLANNeighbour: a device on the owner's own network
// is out of reach even when its address is public, as every device's is
// on a home IPv6 network (and on some IPv4 ones). Found by attack13: with
// network: true answered allow_once, curl reached a listener on a host
// that shared the machine's interface prefix (3fff:13::2/64, 198.51.100.2/24).
func TestNetworkCannotReachLANNeighbour(t *testing.T) {
	t.Parallel()
	lan := testhost.Start(t, testhost.Options{Neighbour: true})
	h := startWith(t, setup{resolver: testhost.Resolver{Host: lan}})
	alice := h.dial(aliceKey)
	own := h.owner(t)
	cmd := fmt.Sprintf(`for u in http://%s/ http://printer.test/; do curl -s -m 5 -o /dev/null -w "%%{http_code} " $u; done; echo`, lan.Addr)
	done := make(chan wire.RunResult, 1)
	go func() {
		done <- rpcCall[wire.RunResult](t, alice, "command.run", m("command", cmd, "network", true))
	}()
	a := own.requested()
	rpcCall[any](t, own.c, "approval.respond", m("id", a.ID, "decision", "allow_once"))
	r := <-done
	if strings.TrimSpace(r.Stdout) != "403 403" {
		t.Errorf("codes %q; want both refused: %+v", r.Stdout, r.Network)
	}
	if n := lan.Hits(); n != 0 {
		t.Errorf("the LAN neighbour saw %d connections", n)
	}
	if r.Network != nil {
		for _, f := range r.Network.Refused {
			if !strings.Contains(f.Reason, "home network") {
				t.Errorf("refusal %+v", f)
			}
		}
	}
}

// TestDashboardDomainQuestion: the owner sees which domain a command wants
// and for what command, may answer "always" (the domain becomes a rule on
// the Rules page, with its expiry and a Revoke button), and is never
// offered "for the whole folder".
func TestDashboardDomainQuestion(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early under -short
	h := start(t, "")
	alice := h.dial(aliceKey)
	b := newBrowser(t)
	b.login(h)
	b.hash("#approvals")
	b.wait(`document.body.dataset.approvalsReady`)
	done := make(chan wire.RunResult, 1)
	go func() {
		var r wire.RunResult
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		alice.CallInto(ctx, "command.run", m("command", "curl -s -o /dev/null -w '%{http_code}' https://pypi.org/simple/", "package_managers", []string{"pip"}, "reason", "install requests"), &r)
		done <- r
	}()
	// The card may be drawn again (the list reloads on reconnect): wait
	// for it whole, not for its first appearance.
	b.wait(`document.querySelectorAll('.approval.network').length === 1 && !!document.querySelector('.approval.network .headline code')`)
	// One question, before the command starts, about every domain of
	// the bundle.
	pipDomains := "*.pypi.org, *.pythonhosted.org, files.pythonhosted.org, pypi.org"
	head := js[string](b, `document.querySelector('.approval .headline')?.textContent || ''`)
	if head != "alice-agent wants to connect to "+pipDomains+" for: curl -s -o /dev/null -w '%{http_code}' https://pypi.org/simple/" {
		t.Errorf("headline %q", head)
	}
	if code := js[string](b, `document.querySelector('.approval .headline code')?.textContent || ''`); code != pipDomains {
		t.Errorf("the domains are not set off: %q", code)
	}
	got := js[[]string](b, `[...document.querySelectorAll('.approval .decisions button')].map(x => x.dataset.decision)`)
	if strings.Join(got, " ") != "allow_once allow_session allow_always deny_once deny_always" {
		t.Errorf("answers offered: %q", got)
	}
	if n := js[int](b, `document.querySelectorAll('.approval input[type=checkbox]').length`); n != 0 {
		t.Errorf("a domain question offers %d folder checkboxes", n)
	}
	b.shot("approval-domain-desktop")
	// Choose a week and answer "always" in one step on the card as it is
	// then (under load the list can be drawn again between two steps).
	b.wait(`(() => {
		const card = document.querySelector('.approval.network');
		const sel = card?.querySelector('select'), btn = card?.querySelector('button[data-decision="allow_always"]');
		if (!sel || !btn) return false;
		sel.value = '7d';
		sel.dispatchEvent(new Event('change', {bubbles: true}));
		btn.click();
		return true;
	})()`)
	r := <-done
	if r.Network == nil || len(r.Network.Refused) == 0 {
		// No DNS here: pypi.org cannot be resolved, so the connection is
		// refused after the owner's answer; what matters is the rule.
		t.Logf("result %+v", r)
	}
	b.openTab("rules")
	b.wait(`[...document.querySelectorAll('#view-rules .rule')].some(r => r.textContent.includes('pypi.org'))`)
	text := js[string](b, `[...document.querySelectorAll('#view-rules .rule')].find(r => r.textContent.includes('pypi.org')).textContent`)
	if !strings.Contains(text, "pypi.org") || !strings.Contains(text, "until") {
		t.Errorf("rule %q", text)
	}
	// One rule per domain, each with its Revoke button.
	b.wait(`document.querySelectorAll('#view-rules .rule').length === 4`)
	if n := js[int](b, `[...document.querySelectorAll('#view-rules .rule')].filter(r => /pypi\.org|pythonhosted\.org/.test(r.textContent) && r.querySelector('button')).length`); n != 4 {
		t.Errorf("%d domain rules with a Revoke button; want 4", n)
	}
	b.shot("rules-domain-desktop")
	b.noPageErrors()
}
