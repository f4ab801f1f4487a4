package egress

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corral/core/errs"
	"corral/core/netgate"
)

// wait bounds every wait in these tests; nothing sleeps.
const wait = 10 * time.Second

// fakeGate is a Dialer deciding by a map: routes send an allowed host:port
// to a real loopback listener, anything else is refused as the gate would.
type fakeGate struct {
	t      testing.TB
	routes map[string]string // "host:port" (as net.JoinHostPort) → loopback address
	fail   map[string]error  // "host:port" → the error Dial answers
	budget *atomic.Int64

	mu    sync.Mutex
	dials []string

	finished chan finish
}

type finish struct {
	target   string
	up, down int64
}

func newGate(t testing.TB, routes map[string]string) *fakeGate {
	return &fakeGate{t: t, routes: routes, fail: map[string]error{}, finished: make(chan finish, 64)}
}

func (g *fakeGate) Dial(ctx context.Context, host string, port int) (*netgate.Conn, error) {
	target := net.JoinHostPort(host, strconv.Itoa(port))
	g.mu.Lock()
	g.dials = append(g.dials, target)
	g.mu.Unlock()
	if err, ok := g.fail[target]; ok {
		return nil, err
	}
	addr, ok := g.routes[target]
	if !ok {
		return nil, errs.New(errs.Denied, "", "Corral refused %s: it is not in this command's allowed_domains.", target)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not connect to %s.", target)
	}
	return &netgate.Conn{
		TCPConn: c.(*net.TCPConn),
		Budget:  g.budget,
		OnFinish: func(up, down int64) {
			select {
			case g.finished <- finish{target, up, down}:
			default: // benchmarks finish more than tests read
			}
		},
	}, nil
}

// dialed returns the targets Dial was asked for.
func (g *fakeGate) dialed() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.dials...)
}

// nextFinish waits for the next Finish.
func (g *fakeGate) nextFinish() finish {
	g.t.Helper()
	select {
	case f := <-g.finished:
		return f
	case <-time.After(wait):
		g.t.Fatal("Finish was not called")
		return finish{}
	}
}

// noFinish fails if a Finish was recorded.
func (g *fakeGate) noFinish() {
	g.t.Helper()
	select {
	case f := <-g.finished:
		g.t.Errorf("Finish called for %v; want no connection", f)
	default:
	}
}

// proxy is a running egress proxy on a loopback port.
type proxy struct {
	addr   string
	cancel context.CancelFunc
	served chan struct{} // receives once per Serve that returned
}

// startProxy accepts on 127.0.0.1 and hands every connection to Serve.
func startProxy(t testing.TB, d netgate.Dialer, opts Options) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &proxy{addr: ln.Addr().String(), cancel: cancel, served: make(chan struct{}, 1024)}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				Serve(ctx, c, d, opts)
				p.served <- struct{}{}
			})
		}
	})
	t.Cleanup(func() {
		cancel()
		_ = ln.Close()
		wg.Wait()
	})
	return p
}

// waitServed waits until one Serve returned.
func (p *proxy) waitServed(t testing.TB) {
	t.Helper()
	select {
	case <-p.served:
	case <-time.After(wait):
		t.Fatal("Serve did not return")
	}
}

func (p *proxy) dial(t testing.TB) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(wait))
	return c.(*net.TCPConn)
}

// listen starts a loopback TCP server running serve for each connection.
func listen(t testing.TB, serve func(c *net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(wait))
				serve(c.(*net.TCPConn))
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// echo copies its input back and half-closes at its end.
func echo(c *net.TCPConn) {
	_, _ = io.Copy(c, c)
	_ = c.CloseWrite()
}

// closedPort returns a loopback address nobody listens on.
func closedPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// rawRequest sends raw bytes to the proxy and reads one HTTP response.
func rawRequest(t testing.TB, p *proxy, raw string) (*http.Response, string) {
	t.Helper()
	c := p.dial(t)
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the proxy's answer to %q: %v", raw, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// socksConnect performs a SOCKS5 no-auth handshake and CONNECT for the
// address given as ATYP plus its bytes; it returns the reply code.
func socksConnect(t testing.TB, c net.Conn, atyp byte, addr []byte, port int) byte {
	t.Helper()
	if _, err := c.Write([]byte{5, 1, 0}); err != nil {
		t.Fatal(err)
	}
	var m [2]byte
	if _, err := io.ReadFull(c, m[:]); err != nil || m != [2]byte{5, 0} {
		t.Fatalf("method reply %v, %v; want [5 0]", m, err)
	}
	req := []byte{5, 1, 0, atyp}
	if atyp == socksATYPDomain {
		req = append(req, byte(len(addr)))
	}
	req = append(req, addr...)
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	return socksReadReply(t, c)
}

func socksReadReply(t testing.TB, c net.Conn) byte {
	t.Helper()
	var r [4]byte
	if _, err := io.ReadFull(c, r[:]); err != nil {
		t.Fatalf("socks reply: %v", err)
	}
	if r[0] != 5 {
		t.Fatalf("socks reply version %d", r[0])
	}
	var rest int
	switch r[3] {
	case socksATYPIPv4:
		rest = 4 + 2
	case socksATYPIPv6:
		rest = 16 + 2
	default:
		t.Fatalf("socks reply address type %d", r[3])
	}
	if _, err := io.ReadFull(c, make([]byte, rest)); err != nil {
		t.Fatalf("socks reply address: %v", err)
	}
	return r[1]
}

// closedByPeer waits until the peer closed c (EOF or reset), failing if it
// stays open past the test deadline.
func closedByPeer(t testing.TB, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the proxy kept the connection open")
	}
}

func hasAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
