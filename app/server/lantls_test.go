package server

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// startLAN opens the LAN side on 127.0.0.2 (loopback: the test hook treats
// it as the LAN, by the listener it came through) and serves it.
func startLAN(t *testing.T, h *harness, certFile string) net.Listener {
	t.Helper()
	h.srv.lanCertFile = certFile
	h.srv.lanIP = func() (net.IP, error) { return net.IPv4(127, 0, 0, 2), nil }
	ln, err := h.srv.ListenLAN()
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	go h.srv.http.Serve(ln) // the harness's shutdown closes ln
	return ln
}

// pinned is an HTTPS client that accepts exactly the certificate with
// fingerprint fp, as a phone does once the owner has compared it.
func pinned(fp string) *http.Client {
	want := strings.ReplaceAll(fp, ":", "")
	return &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, // self-signed: checked by fingerprint below
			VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
				sum := sha256.Sum256(raw[0])
				if !strings.EqualFold(hex.EncodeToString(sum[:]), want) {
					return errors.New("certificate fingerprint differs")
				}
				return nil
			},
		}},
	}
}

// With lan = true the LAN side speaks HTTPS only, with a certificate Corral
// made and kept; the pairing code, the pairing page and the QR code carry
// its fingerprint, and the device cookie is Secure. Loopback stays HTTP.
func TestLANServesHTTPS(t *testing.T) {
	t.Parallel()
	h := start(t, "[server]\nlan = true\n")
	certFile := filepath.Join(t.TempDir(), "lan-cert.pem")
	ln := startLAN(t, h, certFile)
	lanBase := "https://" + ln.Addr().String()
	owner := h.dial(ownerToken)

	p := rpcCall[struct {
		URL, Code, Fingerprint string
		QR                     []string
	}](t, owner, "pairing.start", nil)
	if !strings.HasPrefix(p.URL, lanBase+"/pair?code="+p.Code+"#sha256=") || len(p.Fingerprint) != 95 || !strings.HasSuffix(p.URL, "#sha256="+p.Fingerprint) {
		t.Fatalf("pairing.start: url %q fingerprint %q, want an https LAN URL carrying the fingerprint", p.URL, p.Fingerprint)
	}
	if rows, _ := qrRows(p.URL); fmt.Sprint(rows) != fmt.Sprint(p.QR) {
		t.Error("the QR code is not the code of the URL with its fingerprint")
	}

	// The certificate: kept 0600 beside the other files, ECDSA P-256,
	// naming the LAN address and the host, with that fingerprint.
	st, err := os.Stat(certFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("certificate file: %v %v", st, err)
	}
	client := pinned(p.Fingerprint)
	conn, err := tls.Dial("tcp", ln.Addr().String(), client.Transport.(*http.Transport).TLSClientConfig)
	if err != nil {
		t.Fatalf("TLS to the LAN side: %v", err)
	}
	leaf := conn.ConnectionState().PeerCertificates[0]
	conn.Close()
	key, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	host, _ := os.Hostname()
	if !ok || key.Curve != elliptic.P256() || len(leaf.IPAddresses) != 1 || !leaf.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 2)) || (host != "" && !strings.Contains(strings.Join(leaf.DNSNames, " "), host)) {
		t.Errorf("certificate: key %T, IPs %v, names %v", leaf.PublicKey, leaf.IPAddresses, leaf.DNSNames)
	}

	// Plain HTTP on the LAN side gets no pairing page.
	if resp, err := http.Get("http://" + ln.Addr().String() + "/pair?code=" + p.Code); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 || bytes.Contains(body, []byte("Pair this device")) {
			t.Errorf("plain HTTP on the LAN side answered %d %s", resp.StatusCode, body)
		}
	}

	// The pairing page over HTTPS shows the fingerprint.
	resp, err := client.Get(lanBase + "/pair?code=" + p.Code)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	shown := strings.ReplaceAll(string(body), "<wbr>", "") // the page may break it after each colon
	if resp.StatusCode != 200 || !strings.Contains(shown, p.Fingerprint) {
		t.Errorf("pairing page over HTTPS: %d, fingerprint shown: %v", resp.StatusCode, strings.Contains(shown, p.Fingerprint))
	}
	// Pairing over HTTPS: the device cookie is Secure.
	req, _ := http.NewRequest("POST", lanBase+"/pair", strings.NewReader(`{"code":"`+p.Code+`","name":"Kitchen phone"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", lanBase)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var dev map[string]string
	json.NewDecoder(resp.Body).Decode(&dev)
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != 200 || len(cookies) != 1 || !cookies[0].Secure || !cookies[0].HttpOnly {
		t.Fatalf("pair over HTTPS: %d %+v", resp.StatusCode, cookies)
	}
	// The device talks over wss:// on the LAN side; it is judged as LAN
	// (no owner session works there) and gets its device abilities.
	d := websocket.Dialer{TLSClientConfig: client.Transport.(*http.Transport).TLSClientConfig, Subprotocols: []string{"corral", "corral.secret." + dev["secret"]}, HandshakeTimeout: 5 * time.Second}
	ws, wresp, err := d.Dial("wss://"+ln.Addr().String()+"/ws", http.Header{"Cookie": {deviceCookie + "=" + dev["token"]}, "Origin": {lanBase}})
	if err != nil {
		t.Fatalf("wss as the device: %v %v", err, wresp)
	}
	ws.WriteJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "device.list"})
	var res struct{ Error *struct{ Code int } }
	ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := ws.ReadJSON(&res); err != nil || res.Error == nil {
		t.Errorf("device.list as a device: %+v %v", res, err)
	}
	ws.Close()
	// An owner bearer key is refused on the LAN side even from a loopback
	// address, since it came through the LAN listener.
	req, _ = http.NewRequest("GET", lanBase+"/ws", nil)
	req.Header.Set("Authorization", "Bearer "+ownerToken)
	if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("owner key on the LAN side: %v %v", resp, err)
	}

	// Loopback stays plain HTTP.
	if resp, body := get(t, h.url+"/healthz"); resp.StatusCode != 200 || !strings.Contains(body, "ok") {
		t.Errorf("loopback over HTTP: %d", resp.StatusCode)
	}

	// The certificate is made once: a later start reuses it.
	h2 := start(t, "[server]\nlan = true\n")
	startLAN(t, h2, certFile)
	if h2.srv.lanFP != p.Fingerprint {
		t.Errorf("second start: fingerprint %s, want the kept %s", h2.srv.lanFP, p.Fingerprint)
	}
}

// The LAN listener can be added while loopback requests are being
// served: the Host allowlist they read is replaced whole, never written
// in place (run with -race), and the LAN address is answered afterwards.
func TestLANAddedWhileServing(t *testing.T) {
	t.Parallel()
	h := start(t, "[server]\nlan = true\n")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := http.Get(h.url + "/healthz")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}
	}()
	ln := startLAN(t, h, filepath.Join(t.TempDir(), "lan-cert.pem"))
	close(stop)
	<-done
	resp, err := pinned(h.srv.lanFP).Get("https://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("LAN /healthz: %s, want 200 (its host must be allowed)", resp.Status)
	}
}
