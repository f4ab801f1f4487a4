// Package egress speaks the protocol half of Corral's network egress proxy:
// one port that is at once an HTTP proxy (CONNECT tunnels and plain http://
// requests in absolute form) and a SOCKS5 proxy (no authentication, CONNECT
// only). [Serve] handles one connection a sandboxed command opened to the
// proxy; every upstream connection is opened by the [netgate.Dialer] it is
// given, which decides.
//
// Guarantees:
//
//   - Nothing is dialled except through the Dialer, and the Dialer is only
//     called with a host and port that passed these checks: the host is an
//     IP literal in canonical form (IPv6 unbracketed, no zone, IPv4-mapped
//     IPv6 given as IPv4) or a domain name of at most 253 bytes in lowercase
//     ASCII letters, digits, '-' and '_', in labels of 1–63 bytes, with the
//     trailing dot removed and a last label that is not a number ("127.1",
//     "0x7f.1" are refused, never resolved); the port is 1–65535 (80 when an
//     http:// URL names none). No wildcard, space, control character or
//     non-ASCII letter reaches the Dialer; internationalised names must come
//     as punycode (curl and Go send them so).
//   - The request head (HTTP head or SOCKS5 handshake) must arrive within
//     [Options.HeaderTimeout], measured from the start of the connection and
//     not refreshed by trickled bytes, and within [Options.MaxHeaderBytes];
//     otherwise the connection is closed (431 for a head that is too large).
//   - Refusals tell the program why. HTTP: 403 for a refusal of kind denied
//     or forbidden, 502 for any other Dial failure, 400 for a request that is
//     not a proxy request (an https:// URL without CONNECT, a request sent to
//     the proxy as if it were a web server, an invalid host or port); the
//     polite sentence is the plain-text body and the X-Corral-Refused header
//     (one line, control characters replaced by spaces), with
//     "Connection: close". SOCKS5: reply 0x02 for denied and forbidden, 0x05
//     when the upstream refused the connection, 0x04 for other failures and
//     invalid hosts, 0x07 for commands other than CONNECT, 0x08 for unknown
//     address types, method 0xFF when the client does not offer "no
//     authentication".
//   - Plain HTTP requests are forwarded in origin form as HTTP/1.1, with a
//     Host header made from the checked host and port, hop-by-hop headers
//     (Connection and the headers it names, Keep-Alive, TE, Trailer,
//     Transfer-Encoding, Upgrade) and every Proxy-* header removed, and
//     "Connection: close". The body is re-framed (Content-Length kept,
//     chunked re-chunked, trailers dropped). The response is relayed byte for
//     byte and the client connection closed after it: one request per
//     connection. After the proxy's own answers and relayed responses the
//     client connection is half-closed and drained for up to a second (and
//     64 KiB) before it is closed, so a client still sending is not reset
//     before it read the answer. An upstream that answers early and stops
//     reading (a 413 during a large upload) still gets its answer through.
//   - Bytes towards the upstream are counted and every chunk is paid for with
//     [netgate.Conn.Spend] before it is sent, the forwarded HTTP head
//     included. When Spend refuses, forwarding stops and both connections are
//     closed (a plain HTTP request refused before its head was sent gets a
//     403 instead).
//   - Bytes from the upstream to the client are copied with io.Copy between
//     the upstream *net.TCPConn and the client connection, which Linux
//     splices in the kernel when the client is a *net.TCPConn or a
//     *net.UnixConn.
//   - [netgate.Conn.Finish] is called exactly once for every connection Dial
//     returned, after both directions ended, with the bytes sent upstream and
//     the bytes sent back to the client from upstream (the proxy's own
//     "200 Connection established" and SOCKS replies are not counted).
//     Nothing is finished for a refused Dial.
//   - Tunnels half-close: end of input from one side becomes CloseWrite
//     towards the other, and the tunnel ends when both directions ended.
//   - When ctx ends, the client and upstream connections are closed at once
//     and Serve returns. Serve always closes the client connection.
//
// Not guaranteed:
//
//   - No idle timeout: a tunnel lasts as long as its two ends keep it open
//     or until ctx ends. The caller bounds a command's connections by
//     cancelling ctx when the command ends.
//   - A client that hangs up while Dial resolves or connects is not
//     noticed until Dial returns (Dial never waits for the owner: the
//     owner is asked before the command starts).
//   - HTTP keep-alive towards the client, HTTP/2, Upgrade (WebSocket over a
//     plain http:// request; over CONNECT it works), SOCKS4, SOCKS5 BIND,
//     UDP ASSOCIATE and authentication are not offered.
//   - The upload budget is charged in chunks of up to 32 KiB before they
//     are written; a write that fails after Spend is not refunded.
//   - The SOCKS5 success reply names 0.0.0.0:0 as the bound address, so the
//     host's own addresses are not shown to the sandbox.
package egress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"corral/core/errs"
	"corral/core/netgate"
)

// Defaults of [Options].
const (
	DefaultHeaderTimeout  = 30 * time.Second
	DefaultMaxHeaderBytes = 64 << 10

	// minHeaderBytes holds the longest SOCKS5 handshake (519 bytes).
	minHeaderBytes = 1 << 10
	// linger is how long a plain HTTP client may keep sending after its
	// response has been relayed, so closing does not reset the response.
	linger = time.Second
	// chunk is the size of one upload read (and one Spend).
	chunk = 32 << 10
)

// Options tune [Serve]. The zero value is ready to use.
type Options struct {
	// HeaderTimeout bounds the time from the start of the connection until
	// the request head (or SOCKS5 handshake) has been read, and each answer
	// the proxy itself writes. Zero means DefaultHeaderTimeout.
	HeaderTimeout time.Duration
	// MaxHeaderBytes bounds the request head. Zero means
	// DefaultMaxHeaderBytes; values under 1 KiB are raised to 1 KiB.
	MaxHeaderBytes int
	// Logger receives one line per connection that ends in a refusal or a
	// protocol error, at debug level, and budget stops at info level. Nil
	// discards.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = DefaultHeaderTimeout
	}
	if o.MaxHeaderBytes == 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.MaxHeaderBytes < minHeaderBytes {
		o.MaxHeaderBytes = minHeaderBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// errBudget stops an upload the budget does not cover.
var errBudget = errors.New("upload budget used up")

// upstreamGone wraps a failed write upstream. The upstream may still have
// an answer on its way (an early 413, a last message before it closed), so
// the download direction is left to end by itself.
type upstreamGone struct{ error }

func (e upstreamGone) Unwrap() error { return e.error }

// stopUpload ends the upload direction after err: a budget stop or a
// failed client read closes both sides; a failed upstream write leaves the
// download direction running.
func (s *session) stopUpload(err error, sent int64) {
	switch {
	case errors.Is(err, errBudget):
		s.log.Info("egress: upload budget used up; connection closed", "sent", sent)
		s.abort()
	case errors.As(err, new(upstreamGone)):
	default:
		s.abort()
	}
}

// Serve serves one connection a command opened to the egress proxy until
// it ends or ctx ends, then closes it. It never panics on client input and
// returns promptly once ctx is done.
func Serve(ctx context.Context, client net.Conn, d netgate.Dialer, opts Options) {
	opts = opts.withDefaults()
	s := &session{ctx: ctx, client: client, d: d, opts: opts, log: opts.Logger}
	stop := context.AfterFunc(ctx, s.abort)
	defer func() {
		stop()
		s.abort()
	}()

	s.lim = &headLimit{r: client, n: opts.MaxHeaderBytes, on: true}
	s.br = bufio.NewReaderSize(s.lim, 4096)
	_ = client.SetDeadline(time.Now().Add(opts.HeaderTimeout))
	first, err := s.br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		s.serveSOCKS()
	} else {
		s.serveHTTP()
	}
}

// session is one client connection.
type session struct {
	ctx    context.Context
	client net.Conn
	d      netgate.Dialer
	opts   Options
	log    *slog.Logger
	lim    *headLimit
	br     *bufio.Reader // client input; holds what was read past the head

	mu      sync.Mutex
	aborted bool
	up      *netgate.Conn
}

// abort closes the client and the upstream connection, if any.
func (s *session) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aborted {
		return
	}
	s.aborted = true
	_ = s.client.Close()
	if s.up != nil {
		_ = s.up.TCPConn.Close()
	}
}

// endHead lifts the head's size limit and deadline.
func (s *session) endHead() {
	s.lim.on = false
	_ = s.client.SetDeadline(time.Time{})
}

// dial asks the Dialer. On success the connection is the session's
// upstream and the caller must Finish it; on failure nothing is left open.
func (s *session) dial(host string, port int) (*netgate.Conn, error) {
	c, err := s.d.Dial(s.ctx, host, port)
	if err == nil && (c == nil || c.TCPConn == nil) {
		if c != nil {
			c.Finish(0, 0)
		}
		err = errs.New(errs.IO, "", "Corral could not open a connection to %s.", hostPort(host, port, 0))
	}
	if err != nil {
		if c != nil && c.TCPConn != nil {
			_ = c.TCPConn.Close()
		}
		s.log.Debug("egress: dial refused", "host", host, "port", port, "err", err)
		return nil, err
	}
	s.mu.Lock()
	aborted := s.aborted
	if !aborted {
		s.up = c
	}
	s.mu.Unlock()
	if aborted {
		c.Finish(0, 0)
		return nil, s.ctx.Err()
	}
	return c, nil
}

// writeClient writes an answer of the proxy's own under a write deadline.
func (s *session) writeClient(b []byte) error {
	_ = s.client.SetWriteDeadline(time.Now().Add(s.opts.HeaderTimeout))
	_, err := s.client.Write(b)
	_ = s.client.SetWriteDeadline(time.Time{})
	return err
}

// tunnel relays both directions between the client and up until both
// ended, then finishes up.
func (s *session) tunnel(up *netgate.Conn) {
	var upN int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		upN, err = s.upload(up, s.br)
		if err == nil {
			_ = up.CloseWrite()
			return
		}
		s.stopUpload(err, upN)
	}()
	down, err := io.Copy(s.client, up.TCPConn)
	if err == nil {
		closeWrite(s.client)
	} else {
		s.abort()
	}
	<-done
	s.abort()
	up.Finish(upN, down)
}

// upload copies r to up, paying for every chunk before it is sent. It
// returns the bytes sent and nil at the end of r.
func (s *session) upload(up *netgate.Conn, r io.Reader) (int64, error) {
	buf := make([]byte, chunk)
	var total int64
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			w, werr := send(up, buf[:n])
			total += int64(w)
			if werr != nil {
				return total, werr
			}
		}
		if rerr == io.EOF {
			return total, nil
		}
		if rerr != nil {
			return total, rerr
		}
	}
}

// send pays for p and writes it upstream.
func send(up *netgate.Conn, p []byte) (int, error) {
	if !up.Spend(int64(len(p))) {
		return 0, errBudget
	}
	n, err := up.TCPConn.Write(p)
	if err != nil {
		err = upstreamGone{err}
	}
	return n, err
}

// lingerClose ends the client connection after an answer of the proxy's
// own or a relayed HTTP response: it half-closes, then reads what the
// client still sends for up to linger (and 64 KiB), so that closing with
// unread input does not reset the connection before the client read the
// answer.
func (s *session) lingerClose() {
	s.lim.on = false
	closeWrite(s.client)
	_ = s.client.SetReadDeadline(time.Now().Add(linger))
	_, _ = io.Copy(io.Discard, io.LimitReader(s.br, DefaultMaxHeaderBytes))
	s.abort()
}

// closeWrite half-closes c when it can, else closes it.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// headLimit bounds what the head may read from the client while on.
type headLimit struct {
	r  io.Reader
	n  int
	on bool
}

var errHeadTooLarge = errors.New("request head too large")

func (l *headLimit) Read(p []byte) (int, error) {
	if !l.on {
		return l.r.Read(p)
	}
	if l.n <= 0 {
		return 0, errHeadTooLarge
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= n
	return n, err
}
