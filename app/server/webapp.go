package server

import (
	"io/fs"
	"net/http"

	"corral/assets"
)

// The installable web app: its manifest, its service worker and its icon
// live at the root, so the worker's scope is the whole dashboard. They
// hold no secrets and are open to the LAN before pairing (the manifest
// and the worker script are fetched without the page's credentials).
var webAppFiles = map[string]struct {
	file, contentType string
}{
	"/sw.js":                {"web/sw.js", "text/javascript; charset=utf-8"},
	"/manifest.webmanifest": {"web/manifest.webmanifest", "application/manifest+json"},
	"/app-icon.svg":         {"web/icon.svg", "image/svg+xml"},
}

func (s *Server) webAppFile(w http.ResponseWriter, r *http.Request) {
	f, ok := webAppFiles[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	body, err := fs.ReadFile(assets.Web, f.file)
	if err != nil {
		http.Error(w, "This file is missing from this build.", http.StatusInternalServerError)
		return
	}
	uiHeaders(w)
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(body)
}

func (s *Server) appIcon(w http.ResponseWriter, r *http.Request) {
	uiHeaders(w)
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(assets.Icon)
}

// isWebAppPath reports whether p is one of the web app's root files.
func isWebAppPath(p string) bool {
	_, ok := webAppFiles[p]
	return ok || p == "/app-icon.png"
}
