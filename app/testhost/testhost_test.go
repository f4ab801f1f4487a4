package testhost

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// TestStartLeavesOtherHostsAlone: go test runs packages' test binaries
// side by side, and more than one starts hosts. A host never removes the
// link of a host another live process made, nor takes its addresses.
func TestStartLeavesOtherHostsAlone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, as Start does")
	}
	// The slot the next Start would pick, held by another process (its
	// lock taken through a file description of its own).
	n := (seq.Load()+1+int64(os.Getpid()))%60 + 1
	f, err := os.OpenFile(slotFile(n), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Skipf("slot %d is in use by another test process: %v", n, err)
	}
	outer := fmt.Sprintf("cth%da", n)
	changing(t, func() {
		if out, err := exec.Command("ip", "link", "add", outer, "type", "veth", "peer", "name", fmt.Sprintf("cth%db", n)).CombinedOutput(); err != nil {
			t.Fatalf("ip link add: %v: %s", err, out)
		}
	})
	defer changing(t, func() { exec.Command("ip", "link", "del", outer).Run() })
	h := Start(t, Options{BigBytes: 1})
	if h.Addr == netip.AddrFrom4([4]byte{203, 0, 113, byte(n*4 + 2)}) {
		t.Errorf("the host took the other process's slot %d (address %s)", n, h.Addr)
	}
	if err := exec.Command("ip", "link", "show", outer).Run(); err != nil {
		t.Errorf("the other process's link %s was removed", outer)
	}
}

// A change to the interfaces waits while a test holds Quiet (Chromium
// drops a page's loads when one happens), and runs once it ends.
func TestChangesWaitForQuiet(t *testing.T) {
	changed, failed := make(chan struct{}), make(chan error, 1)
	t.Run("quiet", func(q *testing.T) {
		Quiet(q)
		go func() { failed <- whileQuiet(func() { close(changed) }) }()
		select {
		case <-changed:
			q.Fatal("the interfaces changed while a test held Quiet")
		case <-time.After(300 * time.Millisecond): // a window for the change to (wrongly) run in
		}
	})
	select {
	case <-changed:
	case err := <-failed:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("the change did not run once Quiet ended")
	}
}
