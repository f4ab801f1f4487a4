package egress

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"

	"corral/core/errs"
	"corral/core/netgate"
)

// The proxy's own sentences.
const (
	msgNotProxy   = "This is Corral's egress proxy: send requests through it as a proxy (HTTP_PROXY, HTTPS_PROXY or ALL_PROXY), not to it as a web server."
	msgUseConnect = "Corral's egress proxy carries https only through CONNECT tunnels: use it as an HTTPS proxy instead of sending it an https:// URL."
	msgScheme     = "Corral's egress proxy forwards only http:// requests and CONNECT tunnels."
	msgBadHost    = "Corral's egress proxy cannot connect there: the host in the request is not a valid domain name or IP address, or its port is not a number from 1 to 65535."
	msgBadRequest = "Corral's egress proxy could not read this request as HTTP/1.1."
	msgTooLarge   = "Corral's egress proxy refused this request: its head is larger than the proxy accepts."
	msgBudget     = "Corral refused this request: the command has used up the data it may send out."
	msgSendFailed = "Corral's egress proxy could not send the request to the server: the connection failed."
	msgNoAnswer   = "Corral's egress proxy got no answer from the server: it closed the connection without a response."
)

// serveHTTP handles a connection that does not start like SOCKS5.
func (s *session) serveHTTP() {
	req, err := http.ReadRequest(s.br)
	if err != nil {
		switch {
		case s.lim.n <= 0:
			s.refuse(http.StatusRequestHeaderFieldsTooLarge, msgTooLarge)
		case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			s.log.Debug("egress: no complete request head", "err", err)
		default:
			s.refuse(http.StatusBadRequest, msgBadRequest)
		}
		return
	}
	s.endHead()
	if req.Method == http.MethodConnect {
		s.serveConnect(req)
		return
	}
	s.forward(req)
}

// serveConnect opens a CONNECT tunnel.
func (s *session) serveConnect(req *http.Request) {
	host, port, ok := splitHostPort(req.RequestURI, 0)
	if !ok {
		s.refuse(http.StatusBadRequest, msgBadHost)
		return
	}
	up, err := s.dial(host, port)
	if err != nil {
		s.refuseDial(err)
		return
	}
	if err := s.writeClient([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		s.abort()
		up.Finish(0, 0)
		return
	}
	s.tunnel(up)
}

// forward sends a plain http:// request upstream in origin form and relays
// the response.
func (s *session) forward(req *http.Request) {
	u := req.URL
	switch {
	case !u.IsAbs() && u.Host == "":
		s.refuse(http.StatusBadRequest, msgNotProxy)
		return
	case u.Scheme == "https":
		s.refuse(http.StatusBadRequest, msgUseConnect)
		return
	case u.Scheme != "http":
		s.refuse(http.StatusBadRequest, msgScheme)
		return
	}
	host, port, ok := splitHostPort(u.Host, 80)
	if !ok {
		s.refuse(http.StatusBadRequest, msgBadHost)
		return
	}
	head := originHead(req, hostPort(host, port, 80))
	up, err := s.dial(host, port)
	if err != nil {
		s.refuseDial(err)
		return
	}
	if !up.Spend(int64(len(head))) {
		s.log.Info("egress: upload budget used up; request refused", "host", host, "port", port)
		s.refuse(http.StatusForbidden, msgBudget)
		up.Finish(0, 0)
		return
	}
	n, err := up.TCPConn.Write(head)
	upN := int64(n)
	if err != nil {
		s.refuse(http.StatusBadGateway, msgSendFailed)
		up.Finish(upN, 0)
		return
	}

	done := make(chan struct{})
	var bodyN int64
	go func() {
		defer close(done)
		var err error
		bodyN, err = s.sendBody(up, req)
		if err != nil {
			s.stopUpload(err, upN+bodyN)
		}
	}()
	down, err := io.Copy(s.client, up.TCPConn)
	if down == 0 && s.ctx.Err() == nil {
		s.answer(http.StatusBadGateway, msgNoAnswer)
	}
	// The response is complete (the upstream was asked to close after
	// it): stop the upload and close gently.
	_ = s.client.SetReadDeadline(time.Now().Add(linger))
	_ = up.TCPConn.Close()
	<-done
	s.lingerClose()
	up.Finish(upN+bodyN, down)
}

// sendBody forwards the request body, re-framed as it came.
func (s *session) sendBody(up *netgate.Conn, req *http.Request) (int64, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return 0, nil
	}
	if !chunked(req) {
		return s.upload(up, req.Body)
	}
	// Chunked: one chunk per read, then the last chunk without trailers.
	buf := make([]byte, chunk+16)
	var total int64
	for {
		n, rerr := req.Body.Read(buf[16 : len(buf)-2])
		if n > 0 {
			size := strconv.FormatInt(int64(n), 16) + "\r\n"
			start := 16 - len(size)
			copy(buf[start:], size)
			end := 16 + n + copy(buf[16+n:], "\r\n")
			w, err := send(up, buf[start:end])
			total += int64(w)
			if err != nil {
				return total, err
			}
		}
		if rerr == io.EOF {
			w, err := send(up, []byte("0\r\n\r\n"))
			return total + int64(w), err
		}
		if rerr != nil {
			return total, rerr
		}
	}
}

func chunked(req *http.Request) bool {
	return len(req.TransferEncoding) > 0 && req.TransferEncoding[0] == "chunked"
}

// hopHeaders are removed before a request is forwarded; so are the headers
// Connection names and every Proxy-* header.
var hopHeaders = []string{
	"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "Host", "Content-Length",
}

// originHead is the request head sent upstream.
func originHead(req *http.Request, host string) []byte {
	h := req.Header.Clone()
	for _, v := range h["Connection"] {
		for _, name := range strings.Split(v, ",") {
			h.Del(textproto.TrimString(name))
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
	for k := range h {
		if strings.HasPrefix(k, "Proxy-") {
			delete(h, k)
		}
	}
	var b bytes.Buffer
	b.WriteString(req.Method)
	b.WriteByte(' ')
	b.WriteString(req.URL.RequestURI())
	b.WriteString(" HTTP/1.1\r\nHost: ")
	b.WriteString(host)
	b.WriteString("\r\n")
	_ = h.Write(&b)
	switch {
	case chunked(req):
		b.WriteString("Transfer-Encoding: chunked\r\n")
	case req.ContentLength > 0 || len(req.Header["Content-Length"]) > 0:
		b.WriteString("Content-Length: " + strconv.FormatInt(req.ContentLength, 10) + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	return b.Bytes()
}

// refuseDial answers a Dial failure.
func (s *session) refuseDial(err error) {
	if s.ctx.Err() != nil {
		return
	}
	e := errs.As(err)
	code := http.StatusBadGateway
	if e.Kind == errs.Denied || e.Kind == errs.Forbidden {
		code = http.StatusForbidden
	}
	s.refuse(code, e.Msg)
}

// refuse writes one of the proxy's own answers and closes the connection.
func (s *session) refuse(code int, sentence string) {
	s.answer(code, sentence)
	s.lingerClose()
}

// answer writes one of the proxy's own answers.
func (s *session) answer(code int, sentence string) {
	line := oneLine(sentence)
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(code) + " " + http.StatusText(code) + "\r\n")
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(len(line)+1) + "\r\n")
	b.WriteString("Connection: close\r\n")
	b.WriteString("X-Corral-Refused: " + line + "\r\n\r\n")
	b.WriteString(line + "\n")
	if err := s.writeClient(b.Bytes()); err != nil {
		s.log.Debug("egress: answer not delivered", "err", err)
	}
}

// oneLine makes s safe for a header value: valid UTF-8, control characters
// (C0, DEL, C1) as spaces, no leading or trailing space.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if s == "" {
		s = "Corral's egress proxy refused this connection."
	}
	return s
}
