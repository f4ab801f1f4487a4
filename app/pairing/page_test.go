package pairing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"corral/app/pairing/pairingtest"
	"corral/app/testkit/httpcheck"
	"corral/core/testkit/fakeclock"
)

// The pairing page and POST /pair against map-backed fakes: the one-time
// codes are the real in-memory ones on a clock the test turns; the device
// store is a map. No database, no sockets. The end-to-end tests
// (app/server pairing_test.go, pairlogin_test.go, lantls_test.go,
// login_state_test.go) run the same Service inside the real server, with
// its Origin check and second secrets.

// fakeStore is the shared map of paired devices; by this name it embeds
// as a field named fakeStore (as Devices it would hide its method Devices).
type fakeStore = pairingtest.Devices

// auditLines collects what pairing records, one "who op target" a line.
type auditLines []string

func (l *auditLines) record(ctx context.Context, who, op, target, detail string) error {
	*l = append(*l, who+" "+op+" "+target)
	return nil
}

// testSecret stands for the server's second secrets: distinct per kind
// and credential.
func testSecret(kind, credential string) string { return "secret/" + kind + "/" + credential }

// testOrigin stands for the server's Origin check (app/server auth.go
// sameOrigin, tested there): none, the request's own HTTPS origin, or the
// public URL's.
func testOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	return o == "" || o == "https://"+r.Host || o == "https://corral.example"
}

// pairRig is pairing over fakes, with what it wrote down and hung up.
type pairRig struct {
	h       *Service
	devices fakeStore
	clock   *fakeclock.Clock
	audit   *auditLines
	hungUp  *[]string
}

// newPairRig is a rig whose Config the changes adjust.
func newPairRig(changes ...func(*Config)) pairRig {
	r := pairRig{devices: fakeStore{}, clock: fakeclock.New(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)), audit: &auditLines{}, hungUp: &[]string{}}
	c := Config{
		Store: r.devices, Now: r.clock.Now, Log: slog.New(slog.DiscardHandler), Record: r.audit.record,
		Secret: testSecret, SameOrigin: testOrigin,
		LAN:        func() (string, string) { return "https://192.0.2.1:8443", "AB:CD" },
		QR:         func(text string) ([]string, error) { return []string{"10", "01"}, nil },
		HangUp:     func(id string) { *r.hungUp = append(*r.hungUp, id) },
		Stylesheet: func() string { return "body{}" },
	}
	for _, change := range changes {
		change(&c)
	}
	r.h = New(c)
	return r
}

// code is a fresh code, as the computer would show it.
func (r pairRig) code() string {
	c, _ := r.h.NewCode(r.clock.Now())
	return c
}

// pairRequest is the pairing page's POST from a phone at 192.0.2.7.
func pairRequest(body string) *http.Request {
	req := httptest.NewRequest("POST", "https://192.0.2.1:8443/pair", strings.NewReader(body))
	req.RemoteAddr = "192.0.2.7:50000"
	req.Header.Set("Origin", "https://192.0.2.1:8443")
	req.Header.Set("Content-Type", "application/json")
	return req
}

func pairBody(code, name string) string {
	b, _ := json.Marshal(map[string]string{"code": code, "name": name})
	return string(b)
}

const codeGone = "This pairing code was already used or has expired. Start pairing again on the computer."

func TestPairHandlerPairsAPhoneOnce(t *testing.T) {
	rig := newPairRig()
	code := rig.code()

	page := httpcheck.Answer(rig.h, httptest.NewRequest("GET", "https://192.0.2.1:8443/pair?code="+code, nil))
	// The fingerprint breaks only after a colon, never inside a byte.
	if body := httpcheck.Body(t, page); page.StatusCode != 200 || !strings.Contains(body, "Pair this phone with Corral") || !strings.Contains(body, "AB:<wbr>CD") {
		t.Errorf("the page for a fresh code: %d %s", page.StatusCode, body)
	}
	if h := page.Header; h.Get("Content-Security-Policy") != "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'" ||
		h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "same-origin" {
		t.Errorf("the page's headers: %v", h)
	}

	res := httpcheck.Answer(rig.h, pairRequest(pairBody(code, "  Kitchen phone ")))
	var got struct{ ID, Name, Token, Secret string }
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != 200 {
		t.Fatalf("pairing: %d, %v", res.StatusCode, err)
	}
	if d, ok := rig.devices[got.Token]; !ok || d.ID != got.ID || d.Name != "Kitchen phone" || !d.Paired.Equal(rig.clock.Now()) {
		t.Errorf("the store holds %v, want %s named Kitchen phone paired now", rig.devices, got.ID)
	}
	if got.Secret != testSecret("device", got.Token) {
		t.Error("the answer's secret is not the device token's second secret")
	}
	c := httpcheck.CookieSet(t, res, Cookie)
	if c.Value != got.Token || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.MaxAge != 365*24*3600 {
		t.Errorf("device cookie %+v", c)
	}
	if res.Header.Get("Cache-Control") != "no-store" {
		t.Error("the token's answer may be cached")
	}
	if want := "device:Kitchen phone device.pair " + got.ID; len(*rig.audit) != 1 || (*rig.audit)[0] != want {
		t.Errorf("audit %v, want %q", *rig.audit, want)
	}

	// The same code, again: refused, and nothing more is paired.
	httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, pairRequest(pairBody(code, "Thief"))), http.StatusForbidden, codeGone)
	if len(rig.devices) != 1 || len(*rig.audit) != 1 {
		t.Errorf("a used code paired again: %v, audit %v", rig.devices, *rig.audit)
	}
	page = httpcheck.Answer(rig.h, httptest.NewRequest("GET", "/pair?code="+code, nil))
	if body := httpcheck.Body(t, page); !strings.Contains(body, "This pairing code no longer works") {
		t.Errorf("the page for a used code does not say so: %s", body)
	}
}

func TestPairHandlerRefusesWrongAndExpiredCodes(t *testing.T) {
	rig := newPairRig()
	code := rig.code()
	for _, wrong := range []string{"", "nonsense", code + "x", strings.ToUpper(code), code[:len(code)-1]} {
		httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, pairRequest(pairBody(wrong, "phone"))), http.StatusForbidden, codeGone)
	}
	rig.clock.Advance(pairCodeTTL) // five minutes on, the code is over
	page := httpcheck.Answer(rig.h, httptest.NewRequest("GET", "/pair?code="+code, nil))
	if body := httpcheck.Body(t, page); !strings.Contains(body, "This pairing code no longer works") {
		t.Errorf("the page for an expired code: %s", body)
	}
	httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, pairRequest(pairBody(code, "phone"))), http.StatusForbidden, codeGone)
	if len(rig.devices) != 0 || len(*rig.audit) != 0 {
		t.Errorf("wrong or expired codes paired %v, audit %v", rig.devices, *rig.audit)
	}
}

func TestPairHandlerLimitsTries(t *testing.T) {
	rig := newPairRig()
	code := rig.code()
	for range pairPerIP {
		httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, pairRequest(pairBody("guess", "phone"))), http.StatusForbidden, codeGone)
	}
	// The sixth try in a minute is not even looked at: the right code
	// is not spent by it.
	res := httpcheck.Answer(rig.h, pairRequest(pairBody(code, "phone")))
	httpcheck.WantRefusal(t, res, http.StatusTooManyRequests, "Too many pairing attempts; wait a minute and try again.")
	if res.Header.Get("Retry-After") != "60" || len(rig.devices) != 0 {
		t.Errorf("Retry-After %q, devices %v", res.Header.Get("Retry-After"), rig.devices)
	}
	// Another address has tries of its own, up to the overall limit.
	other := pairRequest(pairBody("guess", "phone"))
	other.RemoteAddr = "192.0.2.8:50000"
	httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, other), http.StatusForbidden, codeGone)

	rig.clock.Advance(pairWindow)
	if res := httpcheck.Answer(rig.h, pairRequest(pairBody(code, "phone"))); res.StatusCode != 200 {
		t.Errorf("a minute later the right code got %d", res.StatusCode)
	}

	// Guesses from many addresses stop at pairGlobal a minute.
	rig.clock.Advance(pairWindow)
	refused := 0
	for i := range 2 * pairGlobal {
		req := pairRequest(pairBody("guess", "phone"))
		req.RemoteAddr = fmt.Sprintf("198.51.100.%d:1", i)
		if httpcheck.Answer(rig.h, req).StatusCode == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused != pairGlobal {
		t.Errorf("%d of %d guesses from many addresses were limited, want %d", refused, 2*pairGlobal, pairGlobal)
	}
}

func TestPairHandlerRefusesCrossSitePosts(t *testing.T) {
	rig := newPairRig()
	code := rig.code()
	for _, origin := range []string{"https://evil.example", "null", "https://192.0.2.1:8444", "https://192.0.2.1", "https://corral.example.evil"} {
		req := pairRequest(pairBody(code, "phone"))
		req.Header.Set("Origin", origin)
		httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, req), http.StatusForbidden, "Cross-site request refused.")
	}
	// A refused request spends no code and no try: the page's own POST
	// (or one from public_url) still pairs.
	req := pairRequest(pairBody(code, "phone"))
	req.Header.Set("Origin", "https://corral.example")
	if res := httpcheck.Answer(rig.h, req); res.StatusCode != 200 || len(rig.devices) != 1 {
		t.Errorf("the public URL's own POST got %d, devices %v", res.StatusCode, rig.devices)
	}
}

func TestPairHandlerRefusesOddBodiesWithoutSpendingTheCode(t *testing.T) {
	rig := newPairRig()
	code := rig.code()
	for _, tc := range []struct{ body, sentence string }{
		{"not json", `Send {"code": …, "name": …} as JSON.`},
		{`{"code":"` + code + `","name":"` + strings.Repeat("x", 5000) + `"}`, `Send {"code": …, "name": …} as JSON.`}, // over 4 KiB
		{pairBody(code, ""), "Give the device a name of 1 to 40 characters."},
		{pairBody(code, strings.Repeat("é", 41)), "Give the device a name of 1 to 40 characters."},
		{pairBody(code, "evil\x1b[2Jphone"), "Give the device a name of 1 to 40 characters."},
	} {
		httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, pairRequest(tc.body)), http.StatusBadRequest, tc.sentence)
	}
	rig.clock.Advance(pairWindow) // odd bodies are tries too
	if res := httpcheck.Answer(rig.h, pairRequest(pairBody(code, strings.Repeat("é", 40)))); res.StatusCode != 200 {
		t.Errorf("after odd bodies the code got %d", res.StatusCode)
	}
}

func TestPairHandlerWithoutDatabase(t *testing.T) {
	rig := newPairRig(func(c *Config) { c.Store = nil })
	code := rig.code()
	page := httpcheck.Answer(rig.h, httptest.NewRequest("GET", "/pair?code="+code, nil))
	if body := httpcheck.Body(t, page); strings.Contains(body, "<form") {
		t.Errorf("without a database the page still offers pairing: %s", body)
	}
	httpcheck.WantRefusal(t, httpcheck.Answer(rig.h, pairRequest(pairBody(code, "phone"))), http.StatusForbidden, codeGone)
}

func TestPairHandlerUndoesAnUnauditedPairing(t *testing.T) {
	rig := newPairRig(func(c *Config) {
		c.Record = func(ctx context.Context, who, op, target, detail string) error { return errors.New("disk full") }
	})
	res := httpcheck.Answer(rig.h, pairRequest(pairBody(rig.code(), "phone")))
	httpcheck.WantRefusal(t, res, http.StatusInternalServerError, "Corral could not write its audit log; the device was not paired.")
	if len(rig.devices) != 0 || len(res.Cookies()) != 0 {
		t.Errorf("an unaudited pairing left devices %v, cookies %v", rig.devices, res.Cookies())
	}
}

func TestPairHandlerServesItsScriptAndStyle(t *testing.T) {
	rig := newPairRig()
	for path, want := range map[string][2]string{
		"/pair.js":  {"text/javascript; charset=utf-8", "no-store"},
		"/pair.css": {"text/css; charset=utf-8", "no-cache"},
	} {
		res := httpcheck.Answer(rig.h, httptest.NewRequest("GET", path, nil))
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != want[0] || res.Header.Get("Cache-Control") != want[1] || httpcheck.Body(t, res) == "" {
			t.Errorf("%s: %d %v", path, res.StatusCode, res.Header)
		}
	}
}
