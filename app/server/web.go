package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
// one policy, corral-sw, that passes only the service worker's own URL
// "/sw.js" (notify.js), so no string an agent wrote can ever become markup
// or code: the UI builds its DOM with textContent and createElement only.
const uiCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; " +
	"frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types corral-sw"

// uiFile is one embedded dashboard file, ready to serve.
type uiFile struct {
	body  []byte
	etag  string
	ctype string
}

// uiBundle is the embedded dashboard, read once. The files never change
// while Corral runs, so a content hash is each file's ETag, and a hash of
// them all is the bundle's version: the shell refers to /ui/v-VERSION/…,
// which browsers may cache for good (a new build has a new version), so
// a reload costs no request per file.
type uiBundle struct {
	files   map[string]uiFile
	version string
	index   []byte // the shell, its /ui/ references versioned
}

var uiAssets = sync.OnceValue(func() uiBundle {
	b := uiBundle{files: map[string]uiFile{}}
	root, err := fs.Sub(assets.Web, "web")
	if err != nil {
		panic(err) // the embed directive guarantees the folder
	}
	all := sha256.New()
	fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error { // lexical order
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ctype := mime.TypeByExtension(path.Ext(p))
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		b.files[p] = uiFile{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: ctype}
		fmt.Fprintf(all, "%s\x00%x\x00", p, sum)
		return nil
	})
	b.version = hex.EncodeToString(all.Sum(nil)[:8])
	b.index = bytes.ReplaceAll(b.files[uiIndex].body, []byte(`"/ui/`), []byte(`"/ui/v-`+b.version+`/`))
	return b
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
	// With no-referrer (the server's default) Chromium sends "Origin: null"
	// on the Sign out form's POST, and /logout rightly refuses it.
	// same-origin keeps the Origin, and still sends nothing to other sites.
	h.Set("Referrer-Policy", "same-origin")
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
	ui := uiAssets()
	if len(ui.index) == 0 {
		writePage(w, http.StatusInternalServerError, page{Title: "The dashboard is missing", Body: "The dashboard is missing from this build of Corral; reinstall it or build it again."})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(ui.index)
}

// uiAsset serves one embedded file under /ui/ or, cacheable for good,
// /ui/v-VERSION/. An older version's path (a page loaded before an
// upgrade) gets today's file, revalidated each time. The files hold no
// secrets, so they need no session; the shell itself is only served at /.
func (s *Server) uiAsset(w http.ResponseWriter, r *http.Request) {
	ui := uiAssets()
	name := r.PathValue("file")
	cache := "no-cache"
	if rest, ok := strings.CutPrefix(name, "v-"); ok {
		ver, file, _ := strings.Cut(rest, "/")
		name = file
		if ver == ui.version {
			cache = "private, max-age=31536000, immutable"
		}
	}
	f, ok := ui.files[name]
	if !ok || name == uiIndex {
		http.NotFound(w, r)
		return
	}
	uiHeaders(w)
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", cache)
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
