package pairing

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"strings"
	"time"

	"corral/app/config"
)

// The LAN side is served over HTTPS with a self-signed certificate Corral
// makes once (ECDSA P-256, ten years) and keeps, key and certificate in
// one PEM file of mode 0600, beside secret.key. A phone cannot know the
// certificate in advance, so the first visit shows the browser's
// certificate warning; the owner compares the SHA-256 fingerprint the
// browser shows with the one on the computer's pairing screen (and in the
// QR code's link), and only then goes on. After that nobody on the Wi-Fi
// can read the pairing code or the device cookie, nor answer approvals.
//
// Not guaranteed: a phone that clicks through the warning without
// comparing is as exposed as before; the certificate names the LAN
// addresses and the host name it was made for, and is not remade when
// they change (browsers warn for a self-signed certificate either way).

// LANCert loads the LAN side's certificate kept at path, or makes and
// keeps one for ip and this computer's host name; an empty path makes one
// that lives in memory only. It also answers the certificate's
// fingerprint, as browsers show it.
func LANCert(path string, ip net.IP, now time.Time) (tls.Certificate, string, error) {
	host, _ := os.Hostname()
	cert, err := lanCert(path, []net.IP{ip}, host, now)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("the LAN certificate: %w", err)
	}
	return cert, fingerprint(cert), nil
}

// TLSListener serves ln over TLS 1.2 or later with cert.
func TLSListener(ln net.Listener, cert tls.Certificate) net.Listener {
	return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
}

// lanCert loads the certificate at path, or makes and stores one for ips
// and host. An empty path makes one that lives in memory only.
func lanCert(path string, ips []net.IP, host string, now time.Time) (tls.Certificate, error) {
	if path != "" {
		b, err := os.ReadFile(path)
		if err == nil {
			return parseLANCert(b)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return tls.Certificate{}, err
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Corral on " + host, Organization: []string{"Corral"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IPAddresses:           ips,
	}
	if host != "" {
		tmpl.DNSNames = []string{host}
		if !strings.Contains(host, ".") {
			tmpl.DNSNames = append(tmpl.DNSNames, host+".local")
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, err
	}
	out := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})...)
	if path != "" {
		// Written whole under a temporary name, then linked into place:
		// the file is either absent or complete, even if Corral dies
		// half-way, and a start that comes second reads the first's.
		err := config.WriteAtomic(path, out, 0o600, false)
		if errors.Is(err, fs.ErrExist) {
			return lanCert(path, ips, host, now) // another start wrote it first
		}
		if err != nil {
			return tls.Certificate{}, err
		}
	}
	return parseLANCert(out)
}

func parseLANCert(b []byte) (tls.Certificate, error) {
	cert, err := tls.X509KeyPair(b, b)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("the LAN certificate file: %w", err)
	}
	return cert, nil // Go 1.23+: cert.Leaf is set
}

// fingerprint is the SHA-256 of a certificate as browsers show it:
// upper-case hex pairs joined by colons.
func fingerprint(cert tls.Certificate) string {
	sum := sha256.Sum256(cert.Certificate[0])
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	parts := make([]string, 0, len(sum))
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}
