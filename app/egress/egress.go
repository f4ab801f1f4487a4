// Package egress is the protocol half of Corral's egress proxy: it serves
// one connection a sandboxed command opened to its proxy address, speaking
// HTTP (CONNECT, and plain requests with absolute URLs) or SOCKS5 (CONNECT,
// with names), and asks a netgate.Dialer for every upstream connection.
//
// # What is guaranteed
//
//   - Nothing is dialled except through the Dialer, which decides; this
//     package only parses, and hands it a validated host (a name of at most
//     253 bytes without spaces or control characters, or an IP literal)
//     and a port in 1–65535.
//   - A refusal reaches the program: HTTP 403 (or 502 when the upstream
//     failed) with the Dialer's sentence as the body and in the
//     X-Corral-Refused header; SOCKS5 reply 2 ("not allowed by ruleset"),
//     or 4/5 for a failed connect.
//   - Bounded: the request head must arrive within Options.HeadTimeout and
//     fit Options.MaxHead; after that a connection lives as long as ctx,
//     which Corral ends with the command (whose timeout bounds it), closing
//     everything at once. No input panics Serve.
//   - Counted: bytes forwarded upstream are spent from the command's upload
//     budget before they are sent (the connection is closed when it runs
//     out), and every opened upstream is finished with its byte counts.
//     Downloads are copied with io.Copy between TCP connections, which
//     Linux splices in the kernel.
//
// # What is not guaranteed
//
//   - Plain HTTP: one request per client connection (the answer carries
//     Connection: close); clients open a new connection for the next one.
//   - The proxy does not look inside tunnels (TLS is end to end).
//   - SOCKS5 BIND and UDP ASSOCIATE are not supported (reply 7).
package egress

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"corral/core/errs"
	"corral/core/netgate"
)

// Options bound one served connection. Zero fields take their defaults.
type Options struct {
	HeadTimeout time.Duration // the request head (HTTP) or handshake (SOCKS5); default 30 s
	MaxHead     int           // bytes of request head; default 64 KiB
	Logger      *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.HeadTimeout <= 0 {
		o.HeadTimeout = 30 * time.Second
	}
	if o.MaxHead <= 0 {
		o.MaxHead = 64 << 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Serve serves one client connection until it ends or ctx ends; it
// closes client before returning.
func Serve(ctx context.Context, client net.Conn, d netgate.Dialer, o Options) {
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { client.Close() })
	defer stop()
	defer client.Close()
	defer func() {
		if v := recover(); v != nil {
			o.Logger.Error("egress: panic serving a connection", "err", v)
		}
	}()

	_ = client.SetReadDeadline(time.Now().Add(o.HeadTimeout))
	head := &headReader{r: client, left: int64(o.MaxHead)}
	br := bufio.NewReaderSize(head, 4096)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == 5 {
		serveSOCKS(ctx, client, br, head, d, o)
		return
	}
	serveHTTP(ctx, client, br, head, d, o)
}

// headReader lets at most left bytes through until the head has been read;
// then done lifts the limit, and the same buffered reader carries the rest.
type headReader struct {
	r    io.Reader
	left int64
	over bool
}

var errHeadTooLarge = errors.New("egress: request head too large")

func (h *headReader) Read(p []byte) (int, error) {
	if h.left < 0 { // done
		return h.r.Read(p)
	}
	if h.left == 0 {
		h.over = true
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > h.left {
		p = p[:h.left]
	}
	n, err := h.r.Read(p)
	h.left -= int64(n)
	return n, err
}

func (h *headReader) done() { h.left = -1 }

// ---------- HTTP ----------

func serveHTTP(ctx context.Context, client net.Conn, br *bufio.Reader, head *headReader, d netgate.Dialer, o Options) {
	req, err := http.ReadRequest(br)
	if err != nil {
		if head.over {
			httpError(client, http.StatusRequestHeaderFieldsTooLarge, "Corral's proxy refused the request: its head is too large.")
		} else if !errors.Is(err, io.EOF) && !isTimeout(err) {
			httpError(client, http.StatusBadRequest, "Corral's proxy could not read the request.")
		}
		return
	}
	head.done()
	if req.Method == http.MethodConnect {
		host, port, ok := splitHostPort(req.RequestURI, 0)
		if !ok {
			httpError(client, http.StatusBadRequest, "Corral's proxy needs CONNECT host:port.")
			return
		}
		up, err := d.Dial(ctx, host, port)
		if err != nil {
			refuseHTTP(client, err)
			return
		}
		if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			up.Finish(0, 0)
			return
		}
		// Bytes the client sent right after the head (a TLS ClientHello
		// sent eagerly) are in br: the tunnel reads on from there.
		tunnel(ctx, client, br, up)
		return
	}
	if req.URL == nil || !req.URL.IsAbs() {
		httpError(client, http.StatusBadRequest, "This is Corral's egress proxy: send requests to it with an absolute URL (http://host/path) or use CONNECT.")
		return
	}
	if req.URL.Scheme != "http" {
		httpError(client, http.StatusBadRequest, "Corral's proxy carries "+safe(req.URL.Scheme)+" URLs through CONNECT only; set HTTPS_PROXY as well as HTTP_PROXY.")
		return
	}
	host, port, ok := splitHostPort(req.URL.Host, 80)
	if !ok {
		httpError(client, http.StatusBadRequest, "Corral's proxy could not read the host of "+safe(req.URL.String())+".")
		return
	}
	up, err := d.Dial(ctx, host, port)
	if err != nil {
		refuseHTTP(client, err)
		return
	}
	forward(ctx, client, req, up)
}

// forward sends one plain HTTP request upstream in origin form and copies
// the answer back; the client connection then closes.
func forward(ctx context.Context, client net.Conn, req *http.Request, up *netgate.Conn) {
	var sent, got int64
	defer func() { up.Finish(sent, got) }()
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Proxy-Authenticate", "Connection", "Keep-Alive", "Te", "Trailer", "Upgrade"} {
		req.Header.Del(h)
	}
	req.Header.Set("Connection", "close")
	req.Close = true
	req.RequestURI = ""
	_ = client.SetReadDeadline(time.Time{})
	stop := context.AfterFunc(ctx, func() { up.Close() })
	defer stop()
	w := &budgetWriter{dst: up, conn: up}
	err := req.Write(w)
	sent = w.n
	if err != nil {
		return
	}
	_ = up.CloseWrite()
	got, _ = io.Copy(client, up)
}

// tunnel copies both ways until both directions end. from is the client's
// buffered reader (it may hold bytes sent right after the head).
func tunnel(ctx context.Context, client net.Conn, from io.Reader, up *netgate.Conn) {
	_ = client.SetReadDeadline(time.Time{})
	stop := context.AfterFunc(ctx, func() { up.Close() })
	defer stop()
	var sent int64
	var wg sync.WaitGroup
	wg.Go(func() {
		// Upstream: each chunk is paid for from the budget first.
		w := &budgetWriter{dst: up, conn: up}
		_, _ = io.Copy(w, from)
		sent = w.n
		if w.err != nil {
			client.Close() // out of budget (or upstream gone): end the connection
			up.Close()
		}
		_ = up.CloseWrite()
	})
	// Downstream: TCP to TCP, spliced by the kernel.
	got, _ := io.Copy(client, up)
	if tc, ok := client.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
	wg.Wait()
	up.Finish(sent, got)
}

// budgetWriter spends the command's upload budget for every write.
type budgetWriter struct {
	dst  io.Writer
	conn *netgate.Conn
	n    int64
	err  error
}

var errBudget = errors.New("egress: upload budget spent")

func (w *budgetWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if !w.conn.Spend(int64(len(p))) {
		w.err = errBudget
		return 0, w.err
	}
	n, err := w.dst.Write(p)
	w.n += int64(n)
	if err != nil {
		w.err = err
	}
	return n, err
}

func refuseHTTP(client net.Conn, err error) {
	e := errs.As(err)
	code := http.StatusForbidden
	if e.Kind != errs.Denied {
		code = http.StatusBadGateway
	}
	httpError(client, code, e.Msg)
}

func httpError(w io.Writer, code int, msg string) {
	msg = safe(msg)
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Corral-Refused: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		code, http.StatusText(code), msg, len(msg)+1, msg)
}

// safe makes s one printable line.
func safe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			b.WriteByte('?')
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if len(out) > 1000 {
		out = out[:1000]
	}
	return strings.ToValidUTF8(out, "?")
}

// splitHostPort reads "host:port", "[v6]:port" or, with def > 0, a host
// alone; the host is checked, not resolved.
func splitHostPort(hp string, def int) (string, int, bool) {
	host, portStr, err := net.SplitHostPort(hp)
	port := def
	if err != nil {
		if def == 0 || strings.Contains(hp, "]:") {
			return "", 0, false
		}
		host = strings.TrimSuffix(strings.TrimPrefix(hp, "["), "]")
	} else {
		p, err := strconv.Atoi(portStr)
		if err != nil {
			return "", 0, false
		}
		port = p
	}
	if !validHost(host) || port < 1 || port > 65535 {
		return "", 0, false
	}
	return host, port, true
}

func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return !strings.Contains(h, "%")
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("/\\?#@[]%:", c) >= 0 {
			return false
		}
	}
	return true
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// ---------- SOCKS5 (RFC 1928) ----------

const (
	socksOK          = 0
	socksFailure     = 1
	socksNotAllowed  = 2
	socksUnreachable = 4
	socksRefused     = 5
	socksNoCommand   = 7
	socksNoAddrType  = 8
)

func serveSOCKS(ctx context.Context, client net.Conn, br *bufio.Reader, head *headReader, d netgate.Dialer, o Options) {
	var hello [2]byte
	if _, err := io.ReadFull(br, hello[:]); err != nil {
		return
	}
	methods := make([]byte, hello[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	if !strings.ContainsRune(string(methods), 0) {
		client.Write([]byte{5, 0xff})
		return
	}
	if _, err := client.Write([]byte{5, 0}); err != nil {
		return
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil {
		return
	}
	if req[0] != 5 {
		return
	}
	var host string
	switch req[3] {
	case 1:
		var a [4]byte
		if _, err := io.ReadFull(br, a[:]); err != nil {
			return
		}
		host = netip.AddrFrom4(a).String()
	case 4:
		var a [16]byte
		if _, err := io.ReadFull(br, a[:]); err != nil {
			return
		}
		host = netip.AddrFrom16(a).String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil {
			return
		}
		host = string(name)
	default:
		socksReply(client, socksNoAddrType)
		return
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return
	}
	port := int(binary.BigEndian.Uint16(pb[:]))
	if req[1] != 1 { // only CONNECT
		socksReply(client, socksNoCommand)
		return
	}
	if !validHost(host) || port < 1 {
		socksReply(client, socksNotAllowed)
		return
	}
	up, err := d.Dial(ctx, host, port)
	if err != nil {
		code := byte(socksNotAllowed)
		if e := errs.As(err); e.Kind != errs.Denied {
			code = socksUnreachable
			if strings.Contains(e.Msg, "refused") {
				code = socksRefused
			}
		}
		socksReply(client, code)
		return
	}
	if err := socksReply(client, socksOK); err != nil {
		up.Finish(0, 0)
		return
	}
	head.done()
	tunnel(ctx, client, br, up)
}

// socksReply answers with code and an all-zero bound address.
func socksReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
	return err
}
