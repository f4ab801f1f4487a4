package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/netgate"
)

// upstreamHandler is the web server behind the proxy.
func upstreamHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from upstream")
	})
	mux.HandleFunc("/seen", func(w http.ResponseWriter, r *http.Request) {
		// What arrived, so tests can check what the proxy forwarded.
		body, _ := io.ReadAll(r.Body)
		json.NewEncoder(w).Encode(map[string]any{
			"uri": r.RequestURI, "host": r.Host, "header": r.Header,
			"body": string(body), "close": r.Close, "te": r.TransferEncoding,
		})
	})
	return mux
}

type seen struct {
	URI    string
	Host   string
	Header http.Header
	Body   string
	Close  bool
	TE     []string
}

func proxyClient(p *proxy, tlsConf *tls.Config) *http.Client {
	u := &url.URL{Scheme: "http", Host: p.addr}
	return &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: tlsConf},
		Timeout:   wait,
	}
}

func TestGoClientPlainHTTP(t *testing.T) {
	web := httptest.NewServer(upstreamHandler())
	defer web.Close()
	g := newGate(t, map[string]string{"web.test:80": web.Listener.Addr().String()})
	p := startProxy(t, g, Options{})

	req, _ := http.NewRequest("POST", "http://WEB.test./seen?q=1", strings.NewReader("a body"))
	req.Header.Set("Proxy-Authorization", "Basic c2VjcmV0")
	req.Header.Set("X-Keep", "yes")
	req.Header.Set("Connection", "X-Drop")
	req.Header.Set("X-Drop", "named by Connection")
	resp, err := proxyClient(p, nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var s seen
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s.URI != "/seen?q=1" || s.Host != "web.test" || s.Body != "a body" || !s.Close {
		t.Errorf("upstream saw uri %q host %q body %q close %v; want origin form, web.test, the body, Connection: close", s.URI, s.Host, s.Body, s.Close)
	}
	for k := range s.Header {
		if strings.HasPrefix(k, "Proxy-") || k == "X-Drop" {
			t.Errorf("upstream got header %s", k)
		}
	}
	if s.Header.Get("X-Keep") != "yes" {
		t.Errorf("end-to-end header X-Keep lost: %v", s.Header)
	}
	if got := g.dialed(); len(got) != 1 || got[0] != "web.test:80" {
		t.Errorf("dialed %v; want [web.test:80]", got)
	}
	if f := g.nextFinish(); f.up == 0 || f.down == 0 {
		t.Errorf("Finish(%d, %d); want bytes both ways", f.up, f.down)
	}
}

func TestGoClientChunkedUpload(t *testing.T) {
	web := httptest.NewServer(upstreamHandler())
	defer web.Close()
	g := newGate(t, map[string]string{"web.test:8080": web.Listener.Addr().String()})
	p := startProxy(t, g, Options{})

	body := strings.Repeat("0123456789", 10_000)
	// An io.Reader of unknown length makes Go send chunked.
	req, _ := http.NewRequest("PUT", "http://web.test:8080/seen", io.MultiReader(strings.NewReader(body)))
	resp, err := proxyClient(p, nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s seen
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.Body != body || len(s.TE) != 1 || s.TE[0] != "chunked" || s.Host != "web.test:8080" {
		t.Errorf("upstream got %d body bytes, TE %v, host %q; want %d chunked, web.test:8080", len(s.Body), s.TE, s.Host, len(body))
	}
}

func TestGoClientHTTPSConnect(t *testing.T) {
	web := httptest.NewTLSServer(upstreamHandler())
	defer web.Close()
	g := newGate(t, map[string]string{"example.com:443": web.Listener.Addr().String()})
	p := startProxy(t, g, Options{})

	pool := x509.NewCertPool()
	pool.AddCert(web.Certificate())
	client := proxyClient(p, &tls.Config{RootCAs: pool})
	resp, err := client.Get("https://example.com/hello")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// The tunnel is kept alive for the next request; closing it ends it.
	client.CloseIdleConnections()
	if string(body) != "hello from upstream" {
		t.Errorf("body %q", body)
	}
	if f := g.nextFinish(); f.target != "example.com:443" || f.up == 0 || f.down == 0 {
		t.Errorf("Finish %+v", f)
	}
}

// curl runs the real curl with a clean environment (no proxy variables,
// no ~/.curlrc) and returns its stdout, stderr and exit code.
func curl(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is not installed (packaging/deps.sh installs it)")
	}
	cmd := exec.Command("curl", append([]string{"-q", "-sS", "--max-time", "10"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestCurl(t *testing.T) {
	web := httptest.NewServer(upstreamHandler())
	defer web.Close()
	tlsWeb := httptest.NewTLSServer(upstreamHandler())
	defer tlsWeb.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsWeb.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	g := newGate(t, map[string]string{
		"web.test:80":     web.Listener.Addr().String(),
		"example.com:443": tlsWeb.Listener.Addr().String(),
	})
	p := startProxy(t, g, Options{})
	px := "http://" + p.addr
	refused := "Corral refused denied.test:80: it is not in this command's allowed_domains."

	t.Run("plain", func(t *testing.T) {
		out, stderr, code := curl(t, "-x", px, "http://web.test/hello")
		if code != 0 || out != "hello from upstream" {
			t.Errorf("curl exit %d, out %q, stderr %q", code, out, stderr)
		}
	})
	t.Run("connect", func(t *testing.T) {
		out, stderr, code := curl(t, "-x", px, "--cacert", ca, "https://example.com/hello")
		if code != 0 || out != "hello from upstream" {
			t.Errorf("curl exit %d, out %q, stderr %q", code, out, stderr)
		}
	})
	t.Run("socks5-hostname", func(t *testing.T) {
		out, stderr, code := curl(t, "--socks5-hostname", p.addr, "http://web.test/hello")
		if code != 0 || out != "hello from upstream" {
			t.Errorf("curl exit %d, out %q, stderr %q", code, out, stderr)
		}
		out, stderr, code = curl(t, "-x", "socks5h://"+p.addr, "--cacert", ca, "https://example.com/hello")
		if code != 0 || out != "hello from upstream" {
			t.Errorf("curl https over socks5h: exit %d, out %q, stderr %q", code, out, stderr)
		}
	})
	t.Run("refused plain", func(t *testing.T) {
		out, stderr, code := curl(t, "-x", px, "-D", "-", "http://denied.test/")
		if code != 0 || !hasAll(out, "HTTP/1.1 403", "X-Corral-Refused: "+refused+"\r\n", "\r\n\r\n"+refused+"\n") {
			t.Errorf("curl exit %d, out %q, stderr %q; want 403 with the sentence in header and body", code, out, stderr)
		}
	})
	t.Run("refused connect", func(t *testing.T) {
		_, stderr, code := curl(t, "-v", "-x", px, "https://denied.test:80/")
		if code == 0 || !hasAll(stderr, "403", "X-Corral-Refused: "+refused) {
			t.Errorf("curl exit %d, stderr %q; want a failure showing the 403 and its sentence", code, stderr)
		}
	})
	t.Run("refused socks", func(t *testing.T) {
		_, stderr, code := curl(t, "--socks5-hostname", p.addr, "http://denied.test/")
		if code != 97 || !strings.Contains(stderr, "(2)") {
			t.Errorf("curl exit %d, stderr %q; want 97 (SOCKS error) with reply code 2", code, stderr)
		}
	})
	g.noFinishFor(t, "denied.test:80")
}

// noFinishFor drains recorded finishes and fails on one for target.
func (g *fakeGate) noFinishFor(t *testing.T, target string) {
	t.Helper()
	for {
		select {
		case f := <-g.finished:
			if f.target == target {
				t.Errorf("Finish called for refused %s", target)
			}
		default:
			return
		}
	}
}

func TestHTTPRefusals(t *testing.T) {
	down := closedPort(t)
	g := newGate(t, map[string]string{"down.test:80": down})
	g.fail["evil.test:80"] = errs.New(errs.Denied, "", "Corral refused evil.test:80.\r\nSet-Cookie: a=b\x00\x1b[31m")
	g.fail["slow.test:443"] = errs.New(errs.Timeout, "", "Corral could not reach slow.test:443 in time.")
	p := startProxy(t, g, Options{})

	cases := []struct {
		name, raw string
		code      int
		sentence  string // a part of the X-Corral-Refused header and body
	}{
		{"origin form", "GET / HTTP/1.1\r\nHost: 127.0.0.1:3128\r\n\r\n", 400, "This is Corral's egress proxy"},
		{"https without connect", "GET https://web.test/ HTTP/1.1\r\nHost: web.test\r\n\r\n", 400, "CONNECT"},
		{"ftp", "GET ftp://web.test/ HTTP/1.1\r\nHost: web.test\r\n\r\n", 400, "only http://"},
		{"denied", "GET http://denied.test/x HTTP/1.1\r\nHost: denied.test\r\n\r\n", 403, "Corral refused denied.test:80: it is not in this command's allowed_domains."},
		{"denied connect", "CONNECT denied.test:443 HTTP/1.1\r\nHost: denied.test:443\r\n\r\n", 403, "Corral refused denied.test:443"},
		{"upstream down", "GET http://down.test/ HTTP/1.1\r\nHost: down.test\r\n\r\n", 502, "Corral could not connect to down.test:80."},
		{"timeout", "CONNECT slow.test:443 HTTP/1.1\r\n\r\n", 502, "in time"},
		{"unsafe sentence", "GET http://evil.test/ HTTP/1.1\r\n\r\n", 403, "Corral refused evil.test:80.  Set-Cookie: a=b  [31m"},
		{"connect without port", "CONNECT web.test HTTP/1.1\r\n\r\n", 400, "not a valid domain name"},
		{"connect port 0", "CONNECT web.test:0 HTTP/1.1\r\n\r\n", 400, "not a valid domain name"},
		{"connect numeric name", "CONNECT 127.1:80 HTTP/1.1\r\n\r\n", 400, "not a valid domain name"},
		{"wildcard host", "GET http://*.web.test/ HTTP/1.1\r\n\r\n", 400, "not a valid domain name"},
		{"zone", "GET http://[fe80::1%25eth0]/ HTTP/1.1\r\n\r\n", 400, "not a valid domain name"},
		{"not http", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400, "could not read"},
		{"head too large", "GET http://web.test/ HTTP/1.1\r\nX: " + strings.Repeat("a", 70<<10) + "\r\n\r\n", 431, "larger"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := rawRequest(t, p, c.raw)
			h := resp.Header.Get("X-Corral-Refused")
			if resp.StatusCode != c.code || !strings.Contains(h, c.sentence) || body != h+"\n" || !resp.Close {
				t.Errorf("got %d, X-Corral-Refused %q, body %q, close %v; want %d with %q in both, Connection: close",
					resp.StatusCode, h, body, resp.Close, c.code, c.sentence)
			}
			if len(resp.Header["Set-Cookie"]) > 0 {
				t.Errorf("a refusal sentence injected a header: %v", resp.Header)
			}
		})
	}
	for _, target := range g.dialed() {
		if strings.HasPrefix(target, "web.test") || strings.Contains(target, "127") || strings.Contains(target, "*") || strings.Contains(target, "fe80") {
			t.Errorf("Dial was called for invalid %q", target)
		}
	}
	g.noFinish()
}

func TestIPv6LiteralReachesDialUnbracketed(t *testing.T) {
	g := newGate(t, nil)
	p := startProxy(t, g, Options{})
	rawRequest(t, p, "CONNECT [2001:DB8::1]:443 HTTP/1.1\r\n\r\n")
	rawRequest(t, p, "GET http://[::ffff:10.0.0.1]/ HTTP/1.1\r\n\r\n")
	got := g.dialed()
	if len(got) != 2 || got[0] != "[2001:db8::1]:443" || got[1] != "10.0.0.1:80" {
		t.Errorf("dialed %v; want host 2001:db8::1 port 443, then 10.0.0.1 port 80", got)
	}
}

// TestConnectCounts checks the tunnel's byte counts exactly, the bytes a
// client sends together with its CONNECT head, and half-close: the
// upstream answers only after the client's end of input.
func TestConnectCounts(t *testing.T) {
	answer := strings.Repeat("r", 300_001)
	var got atomic.Int64
	up := listen(t, func(c *net.TCPConn) {
		n, _ := io.Copy(io.Discard, c)
		got.Store(n)
		io.WriteString(c, answer)
	})
	g := newGate(t, map[string]string{"tcp.test:22": up})
	p := startProxy(t, g, Options{})

	c := p.dial(t)
	early := "SSH-2.0-early\r\n"
	io.WriteString(c, "CONNECT tcp.test:22 HTTP/1.1\r\nHost: tcp.test:22\r\n\r\n"+early)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT answer %v, %v", resp, err)
	}
	rest := strings.Repeat("u", 1<<20)
	io.WriteString(c, rest)
	c.CloseWrite()
	back, err := io.ReadAll(br)
	if err != nil || string(back) != answer {
		t.Fatalf("read %d bytes back (%v); want %d", len(back), err, len(answer))
	}
	want := int64(len(early) + len(rest))
	if got.Load() != want {
		t.Errorf("upstream got %d bytes; want %d", got.Load(), want)
	}
	if f := g.nextFinish(); f.up != want || f.down != int64(len(answer)) {
		t.Errorf("Finish(%d, %d); want (%d, %d)", f.up, f.down, want, len(answer))
	}
}

func TestPlainHTTPCounts(t *testing.T) {
	const answer = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
	heads := make(chan string, 1)
	up := listen(t, func(c *net.TCPConn) {
		br := bufio.NewReader(c)
		var head strings.Builder
		for !strings.HasSuffix(head.String(), "\r\n\r\n") {
			b, err := br.ReadByte()
			if err != nil {
				return
			}
			head.WriteByte(b)
		}
		heads <- head.String()
		io.WriteString(c, answer)
	})
	g := newGate(t, map[string]string{"web.test:80": up})
	p := startProxy(t, g, Options{})

	resp, body := rawRequest(t, p, "GET http://web.test/a%20b?x=1 HTTP/1.1\r\nHost: other.test\r\nProxy-Connection: keep-alive\r\nUser-Agent: t\r\n\r\n")
	if resp.StatusCode != 200 || body != "hello" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	head := <-heads
	if want := "GET /a%20b?x=1 HTTP/1.1\r\nHost: web.test\r\nUser-Agent: t\r\nConnection: close\r\n\r\n"; head != want {
		t.Errorf("upstream got head\n%q\nwant\n%q", head, want)
	}
	if f := g.nextFinish(); f.up != int64(len(head)) || f.down != int64(len(answer)) {
		t.Errorf("Finish(%d, %d); want (%d, %d)", f.up, f.down, len(head), len(answer))
	}
}

func TestUploadBudget(t *testing.T) {
	const budget = 100 << 10
	var got atomic.Int64
	up := listen(t, func(c *net.TCPConn) {
		n, _ := io.Copy(io.Discard, c)
		got.Store(n)
	})
	web := httptest.NewServer(upstreamHandler())
	defer web.Close()
	g := newGate(t, map[string]string{"sink.test:9": up, "web.test:80": web.Listener.Addr().String()})

	t.Run("tunnel", func(t *testing.T) {
		g.budget = new(atomic.Int64)
		g.budget.Store(budget)
		p := startProxy(t, g, Options{})
		c := p.dial(t)
		if code := socksConnect(t, c, socksATYPDomain, []byte("sink.test"), 9); code != 0 {
			t.Fatalf("socks reply %d", code)
		}
		// Write 10 MiB; the proxy must stop and close long before.
		go func() {
			big := make([]byte, 1<<20)
			for range 10 {
				if _, err := c.Write(big); err != nil {
					return
				}
			}
			t.Error("the proxy accepted 10 MiB with a 100 KiB budget")
		}()
		closedByPeer(t, c)
		f := g.nextFinish()
		if f.up > budget || f.up < budget-chunk {
			t.Errorf("Finish up %d; want within one chunk under the budget %d", f.up, budget)
		}
		p.waitServed(t)
		if got.Load() > budget {
			t.Errorf("upstream got %d bytes; budget %d", got.Load(), budget)
		}
	})
	t.Run("plain post", func(t *testing.T) {
		g.budget = new(atomic.Int64)
		g.budget.Store(budget)
		p := startProxy(t, g, Options{})
		req, _ := http.NewRequest("POST", "http://web.test/seen", bytes.NewReader(make([]byte, 1<<20)))
		resp, err := proxyClient(p, nil).Do(req)
		if err == nil {
			var s seen
			json.NewDecoder(resp.Body).Decode(&s)
			resp.Body.Close()
			if len(s.Body) > budget {
				t.Errorf("upstream got a %d byte body past the budget", len(s.Body))
			}
		}
		if f := g.nextFinish(); f.up > budget {
			t.Errorf("Finish up %d; budget %d", f.up, budget)
		}
	})
	t.Run("head over budget", func(t *testing.T) {
		g.budget = new(atomic.Int64)
		g.budget.Store(10)
		p := startProxy(t, g, Options{})
		resp, body := rawRequest(t, p, "GET http://web.test/hello HTTP/1.1\r\n\r\n")
		if resp.StatusCode != 403 || !strings.Contains(body, "used up") {
			t.Errorf("got %d %q; want 403 saying the budget is used up", resp.StatusCode, body)
		}
		if f := g.nextFinish(); f.up != 0 {
			t.Errorf("Finish up %d; want 0", f.up)
		}
		if g.budget.Load() != 10 {
			t.Errorf("budget %d; want untouched 10", g.budget.Load())
		}
	})
}

// TestSlowloris: a head that never completes is dropped at HeaderTimeout,
// also when its bytes trickle in (the deadline is not refreshed by reads).
func TestSlowloris(t *testing.T) {
	g := newGate(t, nil)
	for _, name := range []string{"stalled", "trickle", "socks stalled"} {
		t.Run(name, func(t *testing.T) {
			p := startProxy(t, g, Options{HeaderTimeout: 300 * time.Millisecond})
			// Started before the dial: the proxy's deadline is set when it
			// accepts, which can come before dial returns here.
			start := time.Now()
			c := p.dial(t)
			switch name {
			case "stalled":
				io.WriteString(c, "GET http://web.test/ HTTP/1.1\r\nHost: web")
			case "socks stalled":
				c.Write([]byte{5, 1})
			case "trickle":
				go func() {
					tick := time.NewTicker(20 * time.Millisecond)
					defer tick.Stop()
					io.WriteString(c, "GET http://web.test/ HTTP/1.1\r\n")
					for range tick.C {
						if _, err := io.WriteString(c, "X-A: b\r\n"); err != nil {
							return
						}
					}
				}()
			}
			closedByPeer(t, c)
			p.waitServed(t)
			if d := time.Since(start); d < 300*time.Millisecond {
				t.Errorf("closed after %v, before the timeout", d)
			}
		})
	}
	if len(g.dialed()) != 0 {
		t.Errorf("dialed %v for unfinished heads", g.dialed())
	}
}

func TestCancelClosesTunnel(t *testing.T) {
	up := listen(t, echo)
	g := newGate(t, map[string]string{"echo.test:7": up})
	p := startProxy(t, g, Options{})
	c := p.dial(t)
	if code := socksConnect(t, c, socksATYPDomain, []byte("echo.test"), 7); code != 0 {
		t.Fatalf("socks reply %d", code)
	}
	io.WriteString(c, "ping")
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo %q, %v", buf, err)
	}
	p.cancel()
	closedByPeer(t, c)
	p.waitServed(t)
	if f := g.nextFinish(); f.up != 4 || f.down != 4 {
		t.Errorf("Finish(%d, %d); want (4, 4)", f.up, f.down)
	}
}

func TestCancelDuringDial(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	blocked := make(chan struct{})
	d := dialFunc(func(ctx context.Context, host string, port int) error {
		close(blocked)
		<-ctx.Done()
		return ctx.Err()
	})
	client, server := net.Pipe()
	done := make(chan struct{})
	go func() {
		Serve(ctx, server, d, Options{})
		close(done)
	}()
	go io.WriteString(client, "CONNECT asked.test:443 HTTP/1.1\r\n\r\n")
	<-blocked
	cancel()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("Serve did not return after ctx ended during Dial")
	}
	client.Close()
}

// dialFunc is a Dialer that never connects.
type dialFunc func(ctx context.Context, host string, port int) error

func (f dialFunc) Dial(ctx context.Context, host string, port int) (*netgate.Conn, error) {
	return nil, f(ctx, host, port)
}

func TestSOCKS(t *testing.T) {
	up := listen(t, echo)
	g := newGate(t, map[string]string{
		"echo.test:7":      up,
		"10.1.2.3:7":       up,
		"[2001:db8::7]:7":  up,
		"refusing.test:22": closedPort(t),
	})
	p := startProxy(t, g, Options{})

	t.Run("echo by name, ip4, ip6, mapped", func(t *testing.T) {
		for _, a := range []struct {
			atyp byte
			addr []byte
		}{
			{socksATYPDomain, []byte("Echo.Test.")},
			{socksATYPIPv4, []byte{10, 1, 2, 3}},
			{socksATYPIPv6, net.ParseIP("2001:db8::7")},
			{socksATYPIPv6, net.ParseIP("::ffff:10.1.2.3")},
		} {
			c := p.dial(t)
			if code := socksConnect(t, c, a.atyp, a.addr, 7); code != 0 {
				t.Fatalf("reply %d for %q", code, a.addr)
			}
			msg := fmt.Sprintf("data for %q", a.addr)
			io.WriteString(c, msg)
			c.CloseWrite()
			back, err := io.ReadAll(c)
			if err != nil || string(back) != msg {
				t.Errorf("echo %q, %v", back, err)
			}
			if f := g.nextFinish(); f.up != int64(len(msg)) || f.down != int64(len(msg)) {
				t.Errorf("Finish(%d, %d); want %d both ways", f.up, f.down, len(msg))
			}
		}
	})
	t.Run("replies", func(t *testing.T) {
		cases := []struct {
			name string
			req  []byte // after the method exchange
			code byte
		}{
			{"denied", append([]byte{5, 1, 0, 3, 11}, "denied.test\x00\x50"...), socksNotAllowed},
			{"refused upstream", append([]byte{5, 1, 0, 3, 13}, "refusing.test\x00\x16"...), socksConnRefused},
			{"bind", append([]byte{5, 2, 0, 3, 9}, "echo.test\x00\x07"...), socksCmdNotSupported},
			{"udp", append([]byte{5, 3, 0, 1}, 10, 1, 2, 3, 0, 7), socksCmdNotSupported},
			{"bad atyp", []byte{5, 1, 0, 9, 1, 2, 3, 4, 0, 7}, socksATYPNotSupported},
			{"space in name", append([]byte{5, 1, 0, 3, 6}, "a b.cd\x00\x50"...), socksHostUnreachable},
			{"empty name", []byte{5, 1, 0, 3, 0, 0, 80}, socksHostUnreachable},
			{"port 0", append([]byte{5, 1, 0, 3, 9}, "echo.test\x00\x00"...), socksHostUnreachable},
			{"numeric name", append([]byte{5, 1, 0, 3, 5}, "127.1\x00\x07"...), socksHostUnreachable},
		}
		for _, c := range cases {
			conn := p.dial(t)
			conn.Write([]byte{5, 1, 0})
			var m [2]byte
			io.ReadFull(conn, m[:])
			conn.Write(c.req)
			if got := socksReadReply(t, conn); got != c.code {
				t.Errorf("%s: reply %d; want %d", c.name, got, c.code)
			}
			closedByPeer(t, conn)
		}
		for _, d := range g.dialed() {
			if strings.HasPrefix(d, "a b") || strings.Contains(d, ":0") || strings.HasPrefix(d, "127") || d == ":80" {
				t.Errorf("Dial called for invalid %q", d)
			}
		}
		g.noFinishFor(t, "denied.test:80")
	})
	t.Run("no acceptable method", func(t *testing.T) {
		c := p.dial(t)
		c.Write([]byte{5, 2, 1, 2}) // GSSAPI, user/password
		var m [2]byte
		if _, err := io.ReadFull(c, m[:]); err != nil || m != [2]byte{5, 0xFF} {
			t.Errorf("method reply %v, %v; want [5 255]", m, err)
		}
		closedByPeer(t, c)
	})
}

// TestEarlyResponse: a server that answers before reading a large upload
// (a 413, say) is heard by the client, which is still sending.
func TestEarlyResponse(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too big", http.StatusRequestEntityTooLarge)
	}))
	defer web.Close()
	g := newGate(t, map[string]string{"web.test:80": web.Listener.Addr().String()})
	p := startProxy(t, g, Options{})

	c := p.dial(t)
	const size = 8 << 20
	go func() {
		io.WriteString(c, "POST http://web.test/up HTTP/1.1\r\nContent-Length: "+fmt.Sprint(size)+"\r\n\r\n")
		c.Write(make([]byte, size))
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("got %v, %v; want the server's 413", resp, err)
	}
	if f := g.nextFinish(); f.up >= size {
		t.Errorf("Finish up %d; the upload should have stopped with the response", f.up)
	}
}

// TestUpstreamSilent: a server that closes without answering becomes a
// 502 that says so, not an empty reply.
func TestUpstreamSilent(t *testing.T) {
	up := listen(t, func(c *net.TCPConn) {
		bufio.NewReader(c).ReadString('\n')
	})
	g := newGate(t, map[string]string{"mute.test:80": up})
	p := startProxy(t, g, Options{})
	resp, body := rawRequest(t, p, "GET http://mute.test/ HTTP/1.1\r\n\r\n")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "without a response") {
		t.Errorf("got %d %q; want 502 saying the server closed without a response", resp.StatusCode, body)
	}
	if f := g.nextFinish(); f.up == 0 || f.down != 0 {
		t.Errorf("Finish(%d, %d); want the head up, nothing down", f.up, f.down)
	}
}
