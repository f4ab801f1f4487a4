package testhost

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestHostServes(t *testing.T) {
	h := Start(t, Options{BigBytes: 1 << 20})
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + h.Addr.String() + "/hi")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), "hello from the test host: GET /hi") {
		t.Errorf("http: %q", body)
	}
	pool := x509.NewCertPool()
	pool.AddCert(h.Cert)
	c.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "pypi.test"}}
	resp, err = c.Get("https://" + h.Addr.String() + "/big")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n != 1<<20 {
		t.Errorf("https /big: %d bytes", n)
	}
	conn, err := net.DialTimeout("tcp", h.Addr.String()+":22", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	if line, _ := r.ReadString('\n'); line != "SSH-2.0-CorralTestHost\r\n" {
		t.Errorf("banner %q", line)
	}
	if h.Hits() != 3 {
		t.Errorf("hits %d", h.Hits())
	}
}
