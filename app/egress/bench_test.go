package egress

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
)

// BenchmarkEgressDownload downloads 10 MiB from a loopback web server
// directly and through Serve in the same run; the goal is proxy ≥ 0.8×
// direct. "proxy" is a plain http:// request (one connection per request,
// as the proxy closes after each response); "socks5" goes through a SOCKS5
// tunnel, as CONNECT does. "bare-relay" is the floor for any proxy: a TCP
// relay with nothing but io.Copy both ways, used as if it were the server.
func BenchmarkEgressDownload(b *testing.B) {
	const size = 10 << 20
	payload := make([]byte, size)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		_, _ = w.Write(payload)
	}))
	defer web.Close()
	g := newGate(b, map[string]string{"bench.test:80": web.Listener.Addr().String()})
	p := startProxy(b, g, Options{})

	run := func(b *testing.B, tr *http.Transport, target string) {
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr}
		b.SetBytes(size)
		for b.Loop() {
			resp, err := client.Get(target)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n != size {
				b.Fatalf("got %d bytes, %v", n, err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		run(b, &http.Transport{}, web.URL)
	})
	b.Run("proxy", func(b *testing.B) {
		run(b, &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: p.addr})}, "http://bench.test/")
	})
	b.Run("socks5", func(b *testing.B) {
		run(b, &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "socks5", Host: p.addr})}, "http://bench.test/")
	})
	relay := listen(b, func(c *net.TCPConn) {
		up, err := net.Dial("tcp", web.Listener.Addr().String())
		if err != nil {
			return
		}
		defer up.Close()
		go func() {
			_, _ = io.Copy(up, c)
			_ = up.(*net.TCPConn).CloseWrite()
		}()
		_, _ = io.Copy(c, up)
	})
	b.Run("bare-relay", func(b *testing.B) {
		run(b, &http.Transport{}, "http://"+relay+"/")
	})
}
