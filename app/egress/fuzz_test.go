package egress

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"corral/core/errs"
	"corral/core/netgate"
)

// checkingGate fails the test when Dial gets a host or port that the
// package doc promises never to hand over, and counts connections.
type checkingGate struct {
	t        *testing.T
	upstream string // where "allowed.test" and 10.0.0.1 lead
	opened   atomic.Int64
	finished atomic.Int64
}

func (g *checkingGate) Dial(ctx context.Context, host string, port int) (*netgate.Conn, error) {
	if !validForDial(host) || port < 1 || port > 65535 {
		g.t.Errorf("Dial(%q, %d): invalid host or port reached the Dialer", host, port)
	}
	if host != "allowed.test" && host != "10.0.0.1" {
		return nil, errs.New(errs.Denied, "", "Corral refused %s.", net.JoinHostPort(host, strconv.Itoa(port)))
	}
	c, err := net.Dial("tcp", g.upstream)
	if err != nil {
		return nil, errs.Wrap(err, errs.IO, "", "Corral could not connect.")
	}
	g.opened.Add(1)
	return &netgate.Conn{TCPConn: c.(*net.TCPConn), OnFinish: func(up, down int64) { g.finished.Add(1) }}, nil
}

// validForDial restates the promise independently of cleanHost.
func validForDial(h string) bool {
	if h == "" || len(h) > 253 || !utf8.ValidString(h) || strings.HasSuffix(h, ".") || strings.HasPrefix(h, "[") {
		return false
	}
	for _, r := range h {
		if r <= ' ' || r >= 0x7f || r == '*' || r == '%' || r == '@' || r == '/' || ('A' <= r && r <= 'Z') {
			return false
		}
	}
	again, ok := cleanHost(h)
	return ok && again == h
}

func FuzzServe(f *testing.F) {
	for _, seed := range []string{
		"GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		"GET http://ALLOWED.test.:80/x?y HTTP/1.0\r\nConnection: X-A, close\r\nX-A: 1\r\n\r\n",
		"POST http://allowed.test/ HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
		"POST http://allowed.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"CONNECT allowed.test:443 HTTP/1.1\r\n\r\nclient hello",
		"CONNECT [::1]:443 HTTP/1.1\r\n\r\n",
		"CONNECT denied.test:443 HTTP/1.1\r\n\r\n",
		"GET https://allowed.test/ HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: 127.0.0.1:3128\r\n\r\n",
		"\x05\x01\x00\x05\x01\x00\x03\x0callowed.test\x00\x16ssh",
		"\x05\x01\x00\x05\x01\x00\x01\x0a\x00\x00\x01\x00\x50GET / HTTP/1.0\r\n\r\n",
		"\x05\x01\x00\x05\x01\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x0a\x00\x00\x01\x00\x50",
		"\x05\x02\x01\x02",
		"\x05\x01\x00\x05\x02\x00\x03\x00\x00\x00",
		"\x04\x01\x00\x50\x7f\x00\x00\x01\x00",
		"\x16\x03\x01\x00\x05hello",
	} {
		f.Add([]byte(seed))
	}
	up := listen(f, func(c *net.TCPConn) {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		_ = c.CloseWrite()
		_, _ = io.Copy(io.Discard, c)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	defer ln.Close()

	f.Fuzz(func(t *testing.T, data []byte) {
		g := &checkingGate{t: t, upstream: up}
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			Serve(context.Background(), server, g, Options{HeaderTimeout: 2 * time.Second})
		}()
		_ = client.SetDeadline(time.Now().Add(wait))
		go func() {
			_, _ = client.Write(data)
			_ = client.(*net.TCPConn).CloseWrite()
		}()
		_, _ = io.Copy(io.Discard, client)
		select {
		case <-done:
		case <-time.After(wait):
			t.Fatalf("Serve did not return for %q", data)
		}
		if o, fin := g.opened.Load(), g.finished.Load(); o != fin {
			t.Errorf("%d connections opened, %d finished", o, fin)
		}
	})
}
