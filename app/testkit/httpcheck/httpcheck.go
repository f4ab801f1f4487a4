// Package httpcheck is what tests of HTTP handlers check of an answer,
// with no sockets: Answer serves one request through a recorder, Body
// reads the answer, WantRefusal checks a refusal's status and sentence
// and CookieSet finds a cookie it sets. It is for tests only.
package httpcheck

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Answer is what a browser would see of one request r to h.
func Answer(h http.Handler, r *http.Request) *http.Response {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

// Body reads res's body whole.
func Body(t testing.TB, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// WantRefusal fails t (Errorf) unless res has status code and its body
// holds sentence.
func WantRefusal(t testing.TB, res *http.Response, code int, sentence string) {
	t.Helper()
	if body := Body(t, res); res.StatusCode != code || !strings.Contains(body, sentence) {
		t.Errorf("got %d %q, want %d saying %q", res.StatusCode, body, code, sentence)
	}
}

// CookieSet is the cookie named name that res sets; t fails (Fatal)
// when res sets none.
func CookieSet(t testing.TB, res *http.Response, name string) *http.Cookie {
	t.Helper()
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s cookie set; Set-Cookie: %q", name, res.Header.Values("Set-Cookie"))
	return nil
}
