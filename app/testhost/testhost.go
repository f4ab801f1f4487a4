// Package testhost starts, for tests, a host that stands for the outside
// world: a network namespace of its own, reached from this machine over a
// veth pair, serving HTTP on port 80, HTTPS with a self-signed certificate
// on 443 and an SSH-like TCP service on 22 (it sends a banner and echoes
// lines). Its traffic never leaves this machine: the namespace has no
// other interface and no route beyond the pair.
//
// Guarantees: the host's traffic stays on this machine; Start removes the
// namespace, the pair and the servers when the test ends (t.Cleanup); the
// pair is added and removed only while no test, in any test process,
// holds Quiet (browser tests do: Chromium drops its loads in flight when
// an address comes or goes).
//
// Not guaranteed: it is for tests only: the certificate is self-signed
// and the services answer anyone who reaches them. Creating namespaces
// and links needs root (CAP_NET_ADMIN); Start fails the test otherwise,
// and skips it under -short.
package testhost

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Host is a running test host.
type Host struct {
	// Addr is the host's address; Gateway is this machine's end of the
	// pair (an address of this machine: a command must not reach it).
	Addr, Gateway netip.Addr
	// Cert is the HTTPS certificate, for clients that pin it.
	Cert *x509.Certificate
	// Payload is what GET /big serves: its size is set by Options.
	Payload []byte

	hits atomic.Int64
}

// Hits counts the connections the host accepted, on any port.
func (h *Host) Hits() int64 { return h.hits.Load() }

// Options configure Start.
type Options struct {
	BigBytes int // size of GET /big; 0: 10 MiB
	// Neighbour puts the host on this machine's own network (one prefix
	// shared by both ends of the pair), as a device on the owner's LAN
	// with a public address would be (home IPv6 networks): a command must
	// not reach it. Otherwise the host is one routed hop away, as the
	// internet is.
	Neighbour bool
}

var seq atomic.Int64

// Start creates the namespace, the pair and the services, and removes
// them when the test ends. Each call makes its own host with its own
// addresses (in 203.0.113.0/24, a documentation range no real host uses).
func Start(t testing.TB, o Options) *Host {
	t.Helper()
	if os.Geteuid() != 0 {
		if testing.Short() {
			t.Skip("creating a network namespace needs root; skipped under -short")
		}
		t.Fatal("testhost: creating a network namespace needs root (CI runs as root)")
	}
	n := claimSlot(t)
	name := fmt.Sprintf("corral-th-%d-%d", os.Getpid(), n)
	outer, inner := fmt.Sprintf("cth%da", n), fmt.Sprintf("cth%db", n)
	gw := netip.AddrFrom4([4]byte{203, 0, 113, byte(n*4 + 1)})
	addr := netip.AddrFrom4([4]byte{203, 0, 113, byte(n*4 + 2)})
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	// The pair comes and goes while no browser test runs (Quiet).
	t.Cleanup(func() {
		changing(t, func() {
			_ = exec.Command("ip", "link", "del", outer).Run()
			_ = exec.Command("ip", "netns", "del", name).Run()
		})
	})
	changing(t, func() { makePair(t, ip, o.Neighbour, name, outer, inner, gw, addr) })

	h := &Host{Addr: addr, Gateway: gw}
	size := o.BigBytes
	if size == 0 {
		size = 10 << 20
	}
	h.Payload = make([]byte, size)
	for i := range h.Payload {
		h.Payload[i] = byte('a' + i%26)
	}
	lns, err := listenIn("/run/netns/"+name, addr, 80, 443, 22)
	if err != nil {
		t.Fatal(err)
	}
	cert, key := selfSigned(t, addr)
	h.Cert = cert
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(h.Payload) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from the test host: %s %s host=%s\n", r.Method, r.URL.Path, r.Host)
	})
	counted := func(ln net.Listener) net.Listener { return &countingListener{Listener: ln, n: &h.hits} }
	plain := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	tlsSrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key}},
	}}
	var wg sync.WaitGroup
	wg.Go(func() { _ = plain.Serve(counted(lns[0])) })
	wg.Go(func() { _ = tlsSrv.ServeTLS(counted(lns[1]), "", "") })
	wg.Go(func() { serveBanner(counted(lns[2])) })
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = plain.Shutdown(ctx)
		_ = tlsSrv.Shutdown(ctx)
		lns[2].Close()
		wg.Wait()
	})
	return h
}

// makePair makes the namespace name and the pair outer–inner, inner in
// the namespace with addr and outer here with gw.
func makePair(t testing.TB, ip func(...string), neighbour bool, name, outer, inner string, gw, addr netip.Addr) {
	t.Helper()
	_ = exec.Command("ip", "netns", "del", name).Run()
	_ = exec.Command("ip", "link", "del", outer).Run()
	ip("netns", "add", name)
	ip("link", "add", outer, "type", "veth", "peer", "name", inner)
	// No IPv6 link-local address on this side: the kernel would add it
	// a moment after "up", outside the change Quiet waits for.
	ip("link", "set", outer, "addrgenmode", "none")
	ip("link", "set", inner, "netns", name)
	if neighbour {
		// One /30 for both ends: the host is on this machine's network.
		ip("addr", "add", gw.String()+"/30", "dev", outer)
		ip("link", "set", outer, "up")
		ip("-n", name, "addr", "add", addr.String()+"/30", "dev", inner)
		ip("-n", name, "link", "set", inner, "up")
	} else {
		// Each end has its address alone (/32) and a route to the other:
		// the host is reached through the pair, not on this machine's
		// network, as an internet host is.
		ip("addr", "add", gw.String()+"/32", "dev", outer)
		ip("link", "set", outer, "up")
		ip("route", "add", addr.String()+"/32", "dev", outer)
		ip("-n", name, "addr", "add", addr.String()+"/32", "dev", inner)
		ip("-n", name, "link", "set", inner, "up")
		ip("-n", name, "route", "add", gw.String()+"/32", "dev", inner)
	}
	ip("-n", name, "link", "set", "lo", "up")
}

// claimSlot picks one of 60 host slots (a slot is a link name and two
// addresses) for this test's lifetime. go test runs test binaries side by
// side, so a slot is held by an flock on a file of its own, which the
// kernel drops when a process ends, even by a crash: what a slot's
// links and namespace left behind can be removed once its lock is held.
func claimSlot(t testing.TB) int64 {
	t.Helper()
	for range 60 {
		n := (seq.Add(1)+int64(os.Getpid()))%60 + 1
		f, err := os.OpenFile(slotFile(n), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			continue
		}
		t.Cleanup(func() { f.Close() }) // runs after the slot's links are removed
		return n
	}
	t.Fatal("testhost: all 60 test host slots are in use")
	return 0
}

func slotFile(n int64) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("corral-testhost-%d.lock", n))
}

// listenIn opens listeners inside the namespace at nsPath: a thread joins
// it, makes the sockets (which stay in that namespace) and then ends
// without ever serving another goroutine.
func listenIn(nsPath string, addr netip.Addr, ports ...int) ([]net.Listener, error) {
	type result struct {
		lns []net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		f, err := os.Open(nsPath)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("setns %s: %w", nsPath, err)}
			return
		}
		var r result
		for _, p := range ports {
			ln, err := net.Listen("tcp", netip.AddrPortFrom(addr, uint16(p)).String())
			if err != nil {
				r.err = err
				break
			}
			r.lns = append(r.lns, ln)
		}
		ch <- r
	}()
	r := <-ch
	if r.err != nil {
		for _, ln := range r.lns {
			ln.Close()
		}
	}
	return r.lns, r.err
}

func serveBanner(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			fmt.Fprintf(c, "SSH-2.0-CorralTestHost\r\n")
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				fmt.Fprintf(c, "echo: %s\n", sc.Text())
			}
		}()
	}
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func selfSigned(t testing.TB, addr netip.Addr) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "corral test host"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"pypi.test", "files.test", "git.test", "api.test"}, IPAddresses: []net.IP{addr.AsSlice()},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

// Resolver answers names ending in ".test" with the host's address and
// nothing else: the tests' DNS. Extra maps more names to addresses (for
// names that must resolve to loopback or the LAN).
type Resolver struct {
	Host  *Host
	Extra map[string][]netip.Addr
}

// LookupNetIP implements netgate.Resolver.
func (r Resolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := r.Extra[host]; ok {
		return a, nil
	}
	if r.Host != nil && strings.HasSuffix(host, ".test") {
		return []netip.Addr{r.Host.Addr}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}
