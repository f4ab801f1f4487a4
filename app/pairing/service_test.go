package pairing

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"corral/app/testkit/httpcheck"
	"corral/core/errs"
	"corral/store"
)

func TestStartShowsACodeOnTheLAN(t *testing.T) {
	var lanURL string
	var qrOf string
	rig := newPairRig(func(c *Config) {
		c.LAN = func() (string, string) { return lanURL, "AB:CD" }
		c.QR = func(text string) ([]string, error) { qrOf = text; return []string{"10", "01"}, nil }
	})

	// The LAN off: no code, no event, and a sentence saying what to do.
	_, err := rig.h.Start(t.Context(), "tray")
	if errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "Turn on the LAN") || len(*rig.audit) != 0 {
		t.Fatalf("pairing with the LAN off: %v, audit %v", err, *rig.audit)
	}

	lanURL = "https://192.0.2.1:8443"
	p, err := rig.h.Start(t.Context(), "tray")
	if err != nil {
		t.Fatal(err)
	}
	if want := lanURL + "/pair?code=" + p.Code + "#sha256=AB:CD"; p.URL != want || qrOf != want || p.Fingerprint != "AB:CD" || !slices.Equal(p.QR, []string{"10", "01"}) {
		t.Errorf("code %+v (QR of %q), want the URL %s", p, qrOf, want)
	}
	if !p.Expires.Equal(rig.clock.Now().Add(5*time.Minute)) || !rig.h.codes.usable(p.Code, rig.clock.Now()) {
		t.Errorf("the code expires %v and is usable %v, want five minutes on and usable", p.Expires, rig.h.codes.usable(p.Code, rig.clock.Now()))
	}
	if want := "tray pairing.start " + lanURL; !slices.Equal(*rig.audit, auditLines{want}) {
		t.Errorf("audit %v, want %q", *rig.audit, want)
	}
}

func TestStartWithoutAuditMakesNoCode(t *testing.T) {
	rig := newPairRig(func(c *Config) {
		c.Record = func(ctx context.Context, who, op, target, detail string) error { return errors.New("disk full") }
	})
	if _, err := rig.h.Start(t.Context(), "tray"); err == nil {
		t.Fatal("a code was shown without its audit event")
	}
	if n := len(rig.h.codes.codes); n != 0 {
		t.Errorf("%d codes made without an audit event", n)
	}
}

func TestRevokeForgetsAndHangsUp(t *testing.T) {
	paired := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	rig := newPairRig()
	rig.devices["t1"] = store.Device{ID: "d1", Name: "phone", Paired: paired}
	rig.devices["t2"] = store.Device{ID: "d2", Name: "tablet", Paired: paired}

	if err := rig.h.Revoke(t.Context(), "owner", "d1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := rig.devices["t1"]; ok || !slices.Equal(*rig.hungUp, []string{"d1"}) || !slices.Equal(*rig.audit, auditLines{"owner device.revoke d1"}) {
		t.Errorf("after revoke: devices %v, connections ended %v, audit %v", rig.devices, *rig.hungUp, *rig.audit)
	}
	if _, ok := rig.h.ByToken(t.Context(), "t1"); ok {
		t.Error("a revoked device's token still names it")
	}

	err := rig.h.Revoke(t.Context(), "owner", "d1")
	if errs.KindOf(err) != errs.NotFound || !strings.Contains(err.Error(), `There is no device "d1".`) {
		t.Errorf("revoking an unknown device: %v", err)
	}
	if len(*rig.hungUp) != 1 || len(*rig.audit) != 1 {
		t.Errorf("revoking an unknown device ended connections %v or was logged %v", *rig.hungUp, *rig.audit)
	}

	list, err := rig.h.List(t.Context())
	if err != nil || len(list) != 1 || list[0].ID != "d2" {
		t.Errorf("device.list = %v, %v; want d2 alone", list, err)
	}
}

func TestWithoutDatabase(t *testing.T) {
	rig := newPairRig(func(c *Config) {
		c.Store = nil
		c.HangUp = func(string) { t.Error("hung up without a device") }
	})
	list, err := rig.h.List(t.Context())
	if err != nil || list == nil || len(list) != 0 {
		t.Errorf("device.list = %#v, %v; want an empty list", list, err)
	}
	if err := rig.h.Revoke(t.Context(), "owner", "d1"); errs.KindOf(err) != errs.NotFound {
		t.Errorf("revoke: %v, want not_found", err)
	}
	if _, ok := rig.h.ByToken(t.Context(), "tok"); ok {
		t.Error("a token names a device without a database")
	}
}

// touches counts what the store was told of devices seen.
type touches struct {
	fakeStore
	n int
}

func (t *touches) TouchDevice(ctx context.Context, id string, at time.Time) error {
	t.n++
	return nil
}

func TestByTokenNotesASeenDeviceOnceAMinute(t *testing.T) {
	st := &touches{fakeStore: fakeStore{"tok": {ID: "d1", Name: "phone"}}}
	rig := newPairRig(func(c *Config) { c.Store = st })
	for _, tok := range []string{"", "nope", strings.Repeat("t", 129)} {
		if _, ok := rig.h.ByToken(t.Context(), tok); ok {
			t.Errorf("token %q names a device", tok)
		}
	}
	for range 3 {
		if d, ok := rig.h.ByToken(t.Context(), "tok"); !ok || d.ID != "d1" {
			t.Fatalf("the device's token: %v %v", d, ok)
		}
	}
	if st.n != 1 {
		t.Errorf("seen three times in a moment, noted %d times; want once", st.n)
	}
	rig.clock.Advance(time.Minute + time.Second)
	rig.h.ByToken(t.Context(), "tok")
	if st.n != 2 {
		t.Errorf("a minute later noted %d times in all; want twice", st.n)
	}
	if c := Caller(store.Device{Name: "phone"}); c.Client != "device:phone" || !c.Owner {
		t.Errorf("a device's caller %+v", c)
	}
}

// failingStore is a store that cannot forget a device.
type failingStore struct{ fakeStore }

func (failingStore) RemoveDevice(ctx context.Context, id string) (bool, error) {
	return false, errors.New("disk full")
}

// A phone's own sign out (POST /logout with its cookie and secret, found
// by the server) revokes it as Revoke does; it is not undone when its
// audit fails, and a store that cannot forget leaves everything as it was.
func TestSignOut(t *testing.T) {
	signOut := func(rig pairRig, d store.Device) *http.Response {
		w := httptest.NewRecorder()
		rig.h.SignOut(w, httptest.NewRequest("POST", "https://192.0.2.1:8443/logout", nil), d)
		return w.Result()
	}
	phone := store.Device{ID: "dv_1", Name: "phone"}

	rig := newPairRig()
	rig.devices["tok"] = phone
	res := signOut(rig, phone)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/pair" {
		t.Fatalf("sign out: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	c := httpcheck.CookieSet(t, res, Cookie)
	if c.Value != "" || c.MaxAge != -1 || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("the cleared device cookie %+v", c)
	}
	if len(rig.devices) != 0 || !slices.Equal(*rig.hungUp, []string{"dv_1"}) || !slices.Equal(*rig.audit, auditLines{"device:phone device.revoke dv_1"}) {
		t.Errorf("after sign out: devices %v, connections ended %v, audit %v", rig.devices, *rig.hungUp, *rig.audit)
	}

	rig = newPairRig(func(c *Config) {
		c.Record = func(ctx context.Context, who, op, target, detail string) error { return errors.New("disk full") }
	})
	rig.devices["tok"] = phone
	if res := signOut(rig, phone); res.StatusCode != http.StatusSeeOther || len(rig.devices) != 0 {
		t.Errorf("an unaudited sign out: %d, devices %v; want signed out all the same", res.StatusCode, rig.devices)
	}

	rig = newPairRig(func(c *Config) { c.Store = failingStore{fakeStore{"tok": phone}} })
	httpcheck.WantRefusal(t, signOut(rig, phone), http.StatusInternalServerError, "Corral could not sign this phone out; try again.")
	if len(*rig.hungUp) != 0 || len(*rig.audit) != 0 {
		t.Errorf("a failed sign out ended connections %v, audit %v", *rig.hungUp, *rig.audit)
	}
}
