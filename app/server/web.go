package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"corral/assets"
)

// uiCSP is the dashboard's Content-Security-Policy. Scripts, styles and
// connections come from this origin only ('self' covers ws:// to it), no
// inline script or style, no plugins, no framing, and Trusted Types with
// no policy, so no string an agent wrote can ever become markup or code:
// the UI builds its DOM with textContent and createElement only.
const uiCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; " +
	"frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'"

// uiFile is one embedded dashboard file, ready to serve.
type uiFile struct {
	body  []byte
	etag  string
	ctype string
}

// uiFiles reads the embedded dashboard once. The files never change while
// Corral runs, so a content hash is their ETag: a reload revalidates every
// file with one cheap request and transfers nothing.
var uiFiles = sync.OnceValue(func() map[string]uiFile {
	files := map[string]uiFile{}
	root, err := fs.Sub(assets.Web, "web")
	if err != nil {
		panic(err) // the embed directive guarantees the folder
	}
	fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ctype := mime.TypeByExtension(path.Ext(p))
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		files[p] = uiFile{body: b, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: ctype}
		return nil
	})
	return files
})

// uiIndex is the dashboard's shell; it is served at / only.
const uiIndex = "index.html"

// registerUI adds the dashboard's routes: the shell at / and its static
// files under /ui/.
func (s *Server) registerUI(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("GET /ui/{file...}", s.uiAsset)
}

func uiHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", uiCSP)
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// home serves the dashboard to a signed-in owner and, to anyone else, a
// short page saying how to open it.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	uiHeaders(w)
	w.Header().Set("Cache-Control", "no-store")
	if !s.session(r) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		signedOutTmpl.Execute(w, nil)
		return
	}
	f, ok := uiFiles()[uiIndex]
	if !ok {
		http.Error(w, "The dashboard is missing from this build.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", f.ctype)
	w.Write(f.body)
}

// uiAsset serves one embedded file under /ui/. The files hold no secrets,
// so they need no session; the shell itself is only served at /.
func (s *Server) uiAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	f, ok := uiFiles()[name]
	if !ok || name == uiIndex || strings.Contains(name, "..") {
		http.NotFound(w, r)
		return
	}
	uiHeaders(w)
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", f.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}

var signedOutTmpl = template.Must(template.New("signed-out").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Corral</title><link rel="icon" href="/ui/icon.svg" type="image/svg+xml"><link rel="stylesheet" href="/ui/app.css"></head>
<body class="signed-out"><main class="signed-out-card">
<h1><img src="/ui/icon.svg" alt="" width="32" height="32"> Corral</h1>
<p>To open the dashboard, run “corral open” on this computer, choose Open dashboard in the Corral tray menu, or use the link printed when Corral started.</p>
<p class="muted">Dashboard links work once and for two minutes; a session lasts twelve hours.</p>
</main></body></html>
`))
