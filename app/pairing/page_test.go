package pairing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"corral/store"
)

// The pairing page and POST /pair against map-backed fakes: the one-time
// codes are the real in-memory ones on a clock the test turns; the device
// store is a map. No database, no sockets. The end-to-end tests
// (app/server pairing_test.go, pairlogin_test.go, lantls_test.go,
// login_state_test.go) run the same Service inside the real server, with
// its Origin check and second secrets.

// fakeStore is paired devices over a map by token.
type fakeStore map[string]store.Device

func (f fakeStore) AddDevice(ctx context.Context, d store.Device, token string) error {
	f[token] = d
	return nil
}

func (f fakeStore) DeviceByToken(ctx context.Context, token string) (store.Device, bool, error) {
	d, ok := f[token]
	return d, ok, nil
}

func (f fakeStore) TouchDevice(ctx context.Context, id string, t time.Time) error {
	for tok, d := range f {
		if d.ID == id {
			d.LastSeen = t
			f[tok] = d
		}
	}
	return nil
}

func (f fakeStore) Devices(ctx context.Context) ([]store.Device, error) {
	out := []store.Device{}
	for _, d := range f {
		out = append(out, d)
	}
	return out, nil
}

func (f fakeStore) RemoveDevice(ctx context.Context, id string) (bool, error) {
	for tok, d := range f {
		if d.ID == id {
			delete(f, tok)
			return true, nil
		}
	}
	return false, nil
}

// turnableClock is a clock that moves only when the test says.
type turnableClock struct{ t time.Time }

func (c *turnableClock) now() time.Time { return c.t }

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

// answer is what a browser would see of one request to h.
func answer(h http.Handler, r *http.Request) *http.Response {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func bodyOf(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantRefusal checks a refusal's status and its sentence.
func wantRefusal(t *testing.T, res *http.Response, code int, sentence string) {
	t.Helper()
	if body := bodyOf(t, res); res.StatusCode != code || !strings.Contains(body, sentence) {
		t.Errorf("got %d %q, want %d saying %q", res.StatusCode, body, code, sentence)
	}
}

// cookieSet is the cookie named name a response sets.
func cookieSet(t *testing.T, res *http.Response, name string) *http.Cookie {
	t.Helper()
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s cookie set; Set-Cookie: %q", name, res.Header.Values("Set-Cookie"))
	return nil
}

// pairRig is pairing over fakes, with what it wrote down and hung up.
type pairRig struct {
	h       *Service
	devices fakeStore
	clock   *turnableClock
	audit   *auditLines
	hungUp  *[]string
}

// newPairRig is a rig whose Config the changes adjust.
func newPairRig(changes ...func(*Config)) pairRig {
	r := pairRig{devices: fakeStore{}, clock: &turnableClock{time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}, audit: &auditLines{}, hungUp: &[]string{}}
	c := Config{
		Store: r.devices, Now: r.clock.now, Log: slog.New(slog.DiscardHandler), Record: r.audit.record,
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
	c, _ := r.h.NewCode(r.clock.now())
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

	page := answer(rig.h, httptest.NewRequest("GET", "https://192.0.2.1:8443/pair?code="+code, nil))
	// The fingerprint breaks only after a colon, never inside a byte.
	if body := bodyOf(t, page); page.StatusCode != 200 || !strings.Contains(body, "Pair this phone with Corral") || !strings.Contains(body, "AB:<wbr>CD") {
		t.Errorf("the page for a fresh code: %d %s", page.StatusCode, body)
	}
	if h := page.Header; h.Get("Content-Security-Policy") != "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'" ||
		h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "same-origin" {
		t.Errorf("the page's headers: %v", h)
	}

	res := answer(rig.h, pairRequest(pairBody(code, "  Kitchen phone ")))
	var got struct{ ID, Name, Token, Secret string }
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != 200 {
		t.Fatalf("pairing: %d, %v", res.StatusCode, err)
	}
	if d, ok := rig.devices[got.Token]; !ok || d.ID != got.ID || d.Name != "Kitchen phone" || !d.Paired.Equal(rig.clock.t) {
		t.Errorf("the store holds %v, want %s named Kitchen phone paired now", rig.devices, got.ID)
	}
	if got.Secret != testSecret("device", got.Token) {
		t.Error("the answer's secret is not the device token's second secret")
	}
	c := cookieSet(t, res, Cookie)
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
	wantRefusal(t, answer(rig.h, pairRequest(pairBody(code, "Thief"))), http.StatusForbidden, codeGone)
	if len(rig.devices) != 1 || len(*rig.audit) != 1 {
		t.Errorf("a used code paired again: %v, audit %v", rig.devices, *rig.audit)
	}
	page = answer(rig.h, httptest.NewRequest("GET", "/pair?code="+code, nil))
	if body := bodyOf(t, page); !strings.Contains(body, "This pairing code no longer works") {
		t.Errorf("the page for a used code does not say so: %s", body)
	}
}

func TestPairHandlerRefusesWrongAndExpiredCodes(t *testing.T) {
	rig := newPairRig()
	code := rig.code()
	for _, wrong := range []string{"", "nonsense", code + "x", strings.ToUpper(code), code[:len(code)-1]} {
		wantRefusal(t, answer(rig.h, pairRequest(pairBody(wrong, "phone"))), http.StatusForbidden, codeGone)
	}
	rig.clock.t = rig.clock.t.Add(pairCodeTTL) // five minutes on, the code is over
	page := answer(rig.h, httptest.NewRequest("GET", "/pair?code="+code, nil))
	if body := bodyOf(t, page); !strings.Contains(body, "This pairing code no longer works") {
		t.Errorf("the page for an expired code: %s", body)
	}
	wantRefusal(t, answer(rig.h, pairRequest(pairBody(code, "phone"))), http.StatusForbidden, codeGone)
	if len(rig.devices) != 0 || len(*rig.audit) != 0 {
		t.Errorf("wrong or expired codes paired %v, audit %v", rig.devices, *rig.audit)
	}
}

func TestPairHandlerLimitsTries(t *testing.T) {
	rig := newPairRig()
	code := rig.code()
	for range pairPerIP {
		wantRefusal(t, answer(rig.h, pairRequest(pairBody("guess", "phone"))), http.StatusForbidden, codeGone)
	}
	// The sixth try in a minute is not even looked at: the right code
	// is not spent by it.
	res := answer(rig.h, pairRequest(pairBody(code, "phone")))
	wantRefusal(t, res, http.StatusTooManyRequests, "Too many pairing attempts; wait a minute and try again.")
	if res.Header.Get("Retry-After") != "60" || len(rig.devices) != 0 {
		t.Errorf("Retry-After %q, devices %v", res.Header.Get("Retry-After"), rig.devices)
	}
	// Another address has tries of its own, up to the overall limit.
	other := pairRequest(pairBody("guess", "phone"))
	other.RemoteAddr = "192.0.2.8:50000"
	wantRefusal(t, answer(rig.h, other), http.StatusForbidden, codeGone)

	rig.clock.t = rig.clock.t.Add(pairWindow)
	if res := answer(rig.h, pairRequest(pairBody(code, "phone"))); res.StatusCode != 200 {
		t.Errorf("a minute later the right code got %d", res.StatusCode)
	}

	// Guesses from many addresses stop at pairGlobal a minute.
	rig.clock.t = rig.clock.t.Add(pairWindow)
	refused := 0
	for i := range 2 * pairGlobal {
		req := pairRequest(pairBody("guess", "phone"))
		req.RemoteAddr = fmt.Sprintf("198.51.100.%d:1", i)
		if answer(rig.h, req).StatusCode == http.StatusTooManyRequests {
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
		wantRefusal(t, answer(rig.h, req), http.StatusForbidden, "Cross-site request refused.")
	}
	// A refused request spends no code and no try: the page's own POST
	// (or one from public_url) still pairs.
	req := pairRequest(pairBody(code, "phone"))
	req.Header.Set("Origin", "https://corral.example")
	if res := answer(rig.h, req); res.StatusCode != 200 || len(rig.devices) != 1 {
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
		wantRefusal(t, answer(rig.h, pairRequest(tc.body)), http.StatusBadRequest, tc.sentence)
	}
	rig.clock.t = rig.clock.t.Add(pairWindow) // odd bodies are tries too
	if res := answer(rig.h, pairRequest(pairBody(code, strings.Repeat("é", 40)))); res.StatusCode != 200 {
		t.Errorf("after odd bodies the code got %d", res.StatusCode)
	}
}

func TestPairHandlerWithoutDatabase(t *testing.T) {
	rig := newPairRig(func(c *Config) { c.Store = nil })
	code := rig.code()
	page := answer(rig.h, httptest.NewRequest("GET", "/pair?code="+code, nil))
	if body := bodyOf(t, page); strings.Contains(body, "<form") {
		t.Errorf("without a database the page still offers pairing: %s", body)
	}
	wantRefusal(t, answer(rig.h, pairRequest(pairBody(code, "phone"))), http.StatusForbidden, codeGone)
}

func TestPairHandlerUndoesAnUnauditedPairing(t *testing.T) {
	rig := newPairRig(func(c *Config) {
		c.Record = func(ctx context.Context, who, op, target, detail string) error { return errors.New("disk full") }
	})
	res := answer(rig.h, pairRequest(pairBody(rig.code(), "phone")))
	wantRefusal(t, res, http.StatusInternalServerError, "Corral could not write its audit log; the device was not paired.")
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
		res := answer(rig.h, httptest.NewRequest("GET", path, nil))
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != want[0] || res.Header.Get("Cache-Control") != want[1] || bodyOf(t, res) == "" {
			t.Errorf("%s: %d %v", path, res.StatusCode, res.Header)
		}
	}
}
