package httpcheck

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// recorder stands in for the test: it notes a failure instead of ending
// the goroutine.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }

func TestChecks(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "s", Value: "v"})
		http.Error(w, "No, thank you.", http.StatusForbidden)
	})
	res := Answer(h, httptest.NewRequest("GET", "/", nil))
	if c := CookieSet(t, res, "s"); c.Value != "v" {
		t.Errorf("cookie %v", c)
	}
	WantRefusal(t, res, http.StatusForbidden, "No, thank you.")
	for _, tc := range []struct {
		code     int
		sentence string
	}{{http.StatusOK, "No, thank you."}, {http.StatusForbidden, "Yes."}} {
		r := &recorder{TB: t}
		WantRefusal(r, Answer(h, httptest.NewRequest("GET", "/", nil)), tc.code, tc.sentence)
		if !r.failed {
			t.Errorf("WantRefusal %d %q passed a 403 saying No", tc.code, tc.sentence)
		}
	}
	r := &recorder{TB: t}
	CookieSet(r, res, "other")
	if !r.failed {
		t.Error("CookieSet found a cookie that is not set")
	}
}
