package share

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"corral/core/errs"
	"corral/core/links"
)

// fakeOpener is an Opener over a map of link errors by token.
type fakeOpener map[string]error

func (o fakeOpener) OpenLink(ctx context.Context, token, p string, v links.Visitor) (links.Served, error) {
	if err, ok := o[token]; ok {
		return links.Served{}, err
	}
	return links.Served{}, links.ErrBadLink
}

func TestFilesOutAnswersEachRefusal(t *testing.T) {
	h := FilesOut{Box: fakeOpener{
		"gone": links.ErrRevokedLink,
		"lost": errs.New(errs.NotFound, "", "No such file."),
		"odd":  errors.New("disk on fire"),
	}, Log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		query string
		code  int
	}{
		{"path=a&token=gone", http.StatusGone},
		{"path=a&token=lost", http.StatusNotFound},
		{"path=a&token=odd", http.StatusInternalServerError},
		{"path=a&token=forged", http.StatusForbidden},
		{"path=a&token=gone&token=gone", http.StatusForbidden},
		{"path=a", http.StatusForbidden},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/files/out?"+tc.query, nil))
		if w.Code != tc.code || w.Header().Get("Content-Security-Policy") != CSP {
			t.Errorf("%s: %d with CSP %q, want %d", tc.query, w.Code, w.Header().Get("Content-Security-Policy"), tc.code)
		}
	}
}
