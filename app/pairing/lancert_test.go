package pairing

import (
	"bytes"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestLANCertConcurrentStarts: starts racing to make the certificate all
// end up with the same one, and the file is never seen half-written.
func TestLANCertConcurrentStarts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lan-cert.pem")
	ips := []net.IP{net.ParseIP("192.0.2.10")}
	certs := make(chan tls.Certificate, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c, err := lanCert(path, ips, "host", time.Now())
			if err != nil {
				t.Error(err)
				return
			}
			certs <- c
		})
	}
	wg.Wait()
	close(certs)
	var first []byte
	for c := range certs {
		if first == nil {
			first = c.Certificate[0]
		} else if !bytes.Equal(first, c.Certificate[0]) {
			t.Fatal("two starts made two certificates")
		}
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("files left: %v", ents)
	}
}
