package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/netgate"
)

// fakeDialer stands for core/netgate: names in routes lead to loopback
// servers, everything else is refused with a sentence.
type fakeDialer struct {
	routes   map[string]string // "host:port" → loopback address
	budget   *atomic.Int64
	mu       sync.Mutex
	dialed   []string
	finished [][2]int64
}

func (d *fakeDialer) Dial(ctx context.Context, host string, port int) (*netgate.Conn, error) {
	target := net.JoinHostPort(host, strconv.Itoa(port))
	d.mu.Lock()
	d.dialed = append(d.dialed, target)
	d.mu.Unlock()
	addr, ok := d.routes[target]
	if !ok {
		return nil, errs.New(errs.Denied, "", "Corral refused %s: it is not allowed in this test.", target)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not connect to %s.", target)
	}
	return &netgate.Conn{TCPConn: c.(*net.TCPConn), Budget: d.budget, OnFinish: func(up, down int64) {
		d.mu.Lock()
		d.finished = append(d.finished, [2]int64{up, down})
		d.mu.Unlock()
	}}, nil
}

func (d *fakeDialer) finishes() [][2]int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([][2]int64(nil), d.finished...)
}

// startProxy serves every connection to a loopback port with Serve.
func startProxy(t testing.TB, d netgate.Dialer, o Options) (addr string, cancel context.CancelFunc) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { Serve(ctx, c, d, o) })
		}
	}()
	t.Cleanup(func() { ln.Close(); cancel(); wg.Wait() })
	return ln.Addr().String(), cancel
}

func hostPort(u string) string {
	p, _ := url.Parse(u)
	return p.Host
}

func curl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("curl", append([]string{"-sS", "-m", "20"}, args...)...).CombinedOutput()
	return string(out), err
}

func TestProtocols(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s host=%s proxy-hdr=%q body=%q", r.Method, r.URL.RequestURI(), r.Host, r.Header.Get("Proxy-Authorization"), body)
	}))
	defer web.Close()
	tlsWeb := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secure hello") }))
	defer tlsWeb.Close()
	d := &fakeDialer{routes: map[string]string{
		"svc.test:80":     hostPort(web.URL),
		"secure.test:443": hostPort(tlsWeb.URL),
	}}
	proxy, _ := startProxy(t, d, Options{})

	out, err := curl(t, "-x", "http://"+proxy, "-H", "Proxy-Authorization: Basic eDp5", "-d", "payload", "http://svc.test/a?b=1")
	if err != nil || out != `POST /a?b=1 host=svc.test proxy-hdr="" body="payload"` {
		t.Errorf("plain http: %q %v", out, err)
	}
	out, err = curl(t, "-k", "-x", "http://"+proxy, "https://secure.test/")
	if err != nil || out != "secure hello" {
		t.Errorf("connect: %q %v", out, err)
	}
	out, err = curl(t, "--socks5-hostname", proxy, "http://svc.test/s")
	if err != nil || !strings.HasPrefix(out, "GET /s host=svc.test") {
		t.Errorf("socks5: %q %v", out, err)
	}
	// Go's client through CONNECT, the way pip-like programs go.
	c := &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(&url.URL{Scheme: "http", Host: proxy}),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	resp, err := c.Get("https://secure.test/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "secure hello" {
		t.Errorf("go client: %q", b)
	}
	c.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for len(d.finishes()) < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, f := range d.finishes() {
		if f[0] <= 0 || f[1] <= 0 {
			t.Errorf("connection finished with up %d, down %d", f[0], f[1])
		}
	}
	if n := len(d.finishes()); n != 4 {
		t.Errorf("%d connections finished, want 4", n)
	}
}

func TestRefusalsReachTheProgram(t *testing.T) {
	d := &fakeDialer{routes: map[string]string{}}
	proxy, _ := startProxy(t, d, Options{})
	out, _ := curl(t, "-i", "-x", "http://"+proxy, "http://no.test/x")
	if !strings.HasPrefix(out, "HTTP/1.1 403") || !strings.Contains(out, "X-Corral-Refused: Corral refused no.test:80: it is not allowed in this test.") ||
		!strings.HasSuffix(out, "Corral refused no.test:80: it is not allowed in this test.\n") {
		t.Errorf("plain http refusal: %q", out)
	}
	out, _ = curl(t, "-x", "http://"+proxy, "https://no.test/")
	if !strings.Contains(out, "403") {
		t.Errorf("connect refusal: %q", out)
	}
	// SOCKS5: reply 2, not allowed by ruleset.
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte{5, 1, 0})
	c.Write(append(append([]byte{5, 1, 0, 3, 7}, "no.test"...), 0, 22))
	reply := make([]byte, 12)
	n, _ := io.ReadAtLeast(c, reply, 12)
	if n < 12 || !bytes.Equal(reply[:2], []byte{5, 0}) || reply[3] != 2 {
		t.Errorf("socks refusal: % x", reply[:n])
	}
	// An origin-form request is not a proxy request; a bad CONNECT target
	// never reaches the dialer.
	out, _ = curl(t, "http://"+proxy+"/")
	if !strings.Contains(out, "This is Corral's egress proxy") {
		t.Errorf("origin form: %q", out)
	}
	raw(t, proxy, "CONNECT a b:1\r\n\r\n")
	raw(t, proxy, "CONNECT [::1%eth0]:80 HTTP/1.1\r\nHost: x\r\n\r\n")
	for _, dialed := range d.dialed {
		if dialed != "no.test:80" && dialed != "no.test:443" && dialed != "no.test:22" {
			t.Errorf("dialled %q", dialed)
		}
	}
	if len(d.finishes()) != 0 {
		t.Errorf("finished refused connections: %v", d.finishes())
	}
}

// raw sends s and returns the answer.
func raw(t *testing.T, proxy, s string) string {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, s)
	b, _ := io.ReadAll(c)
	return string(b)
}

func TestUploadBudget(t *testing.T) {
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	var received atomic.Int64
	go func() {
		for {
			c, err := sink.Accept()
			if err != nil {
				return
			}
			go func() { n, _ := io.Copy(io.Discard, c); received.Add(n); c.Close() }()
		}
	}()
	budget := &atomic.Int64{}
	budget.Store(100 << 10)
	d := &fakeDialer{routes: map[string]string{"sink.test:9": sink.Addr().String()}, budget: budget}
	proxy, _ := startProxy(t, d, Options{})
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT sink.test:9 HTTP/1.1\r\n\r\n")
	head := make([]byte, len("HTTP/1.1 200 Connection established\r\n\r\n"))
	if _, err := io.ReadFull(c, head); err != nil {
		t.Fatal(err)
	}
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	chunk := make([]byte, 32<<10)
	var sent int
	for sent < 10<<20 {
		n, err := c.Write(chunk)
		sent += n
		if err != nil {
			break
		}
	}
	if sent >= 10<<20 {
		t.Fatal("the proxy took 10 MiB past a 100 KiB budget")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(d.finishes()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if f := d.finishes(); len(f) != 1 || f[0][0] > 100<<10 {
		t.Errorf("finished %v", f)
	}
	if received.Load() > 100<<10 {
		t.Errorf("upstream received %d bytes", received.Load())
	}
}

func TestSlowHeadIsDropped(t *testing.T) {
	d := &fakeDialer{}
	proxy, _ := startProxy(t, d, Options{HeadTimeout: 200 * time.Millisecond})
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT slow.test:443 HTTP/1.1\r\nX-Slow: ")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Errorf("the proxy kept a slow head open: %v", err)
	}
	if len(d.dialed) != 0 {
		t.Errorf("dialled %v", d.dialed)
	}
}

func TestCancelClosesTunnel(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		c, err := up.Accept()
		if err == nil {
			io.Copy(io.Discard, c) // holds the tunnel open
			c.Close()
		}
	}()
	d := &fakeDialer{routes: map[string]string{"hold.test:1": up.Addr().String()}}
	proxy, cancel := startProxy(t, d, Options{})
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT hold.test:1 HTTP/1.1\r\n\r\n")
	head := make([]byte, 39)
	if _, err := io.ReadFull(c, head); err != nil {
		t.Fatal(err)
	}
	cancel()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Errorf("tunnel still open after cancel: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(d.finishes()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if len(d.finishes()) != 1 {
		t.Error("the cancelled tunnel was not finished")
	}
}

// checkDialer fails the fuzz run when Serve hands it anything invalid.
type checkDialer struct{ t *testing.T }

func (d checkDialer) Dial(ctx context.Context, host string, port int) (*netgate.Conn, error) {
	if !validHost(host) || port < 1 || port > 65535 {
		d.t.Errorf("Dial(%q, %d)", host, port)
	}
	return nil, errs.New(errs.Denied, "", "no")
}

func FuzzServe(f *testing.F) {
	for _, s := range []string{
		"CONNECT a.test:443 HTTP/1.1\r\n\r\n", "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n", "CONNECT [::1]:0 HTTP/1.1\r\n\r\n", "\x05\x01\x00\x05\x01\x00\x03\x06a.test\x00\x50",
		"\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x00", "\x05\x00", "\x05\x02\x01\x02",
		"GET http://[::1%25x]:80/ HTTP/1.1\r\n\r\n", "POST http://a.test:99999/ HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		server, client := net.Pipe()
		done := make(chan struct{})
		go func() {
			Serve(context.Background(), server, checkDialer{t}, Options{HeadTimeout: time.Second, MaxHead: 4096})
			close(done)
		}()
		go func() {
			client.SetDeadline(time.Now().Add(2 * time.Second))
			client.Write(in)
			io.Copy(io.Discard, client)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Serve did not return")
		}
		client.Close()
	})
}
