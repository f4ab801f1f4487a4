package share

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"corral/core/errs"
	"corral/core/links"
)

// maxRenderedMarkdown bounds a .md file rendered with ?view=1.
const maxRenderedMarkdown = 4 << 20

// CSP is the policy of every /files/out answer (files, listings,
// rendered Markdown, errors). sandbox (without allow-scripts or
// allow-same-origin) gives a page an agent wrote an opaque origin and no
// script, so it cannot read the dashboard's cookie or open /ws with it.
// default-src 'none' stops it from phoning home: nothing loads from
// another server — no image, stylesheet, font, prefetch, frame or media —
// and no form posts anywhere. What a page may load comes from this
// server only (images and media by their own signed links) or is inline:
// img-src 'self' data:, media-src 'self', style-src 'unsafe-inline' (the
// listing's and an agent's own <style>; CSS url() still falls under
// img-src and font-src). No connect-src, so no fetch, WebSocket or
// beacon. Not covered: a link the owner clicks still navigates.
const CSP = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; " +
	"style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// Opener is what /files/out uses of the sandbox: opening the file or
// folder a signed link names, for whoever holds the link.
type Opener interface {
	OpenLink(ctx context.Context, token, p string, v links.Visitor) (links.Served, error)
}

// FilesOut serves GET /files/out?path=P&token=T (docs/protocol.md section 8).
// Every answer carries CSP. It expects the server in front of it to have
// checked the Host header and set nosniff and no-referrer.
type FilesOut struct {
	Box Opener
	Log *slog.Logger
	// QR draws a link as an SVG QR code for a rendered Markdown page's
	// "Open on a phone"; nil: no QR code.
	QR func(text string) (string, error)
}

func (f FilesOut) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header() // guard has set nosniff and no-referrer
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-DNS-Prefetch-Control", "off")
	h.Set("Cache-Control", "private, no-cache")
	forbidden := func() { plain(w, http.StatusForbidden, "This link is not valid. Ask for a new one.") }

	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		forbidden()
		return
	}
	for k, v := range q {
		if (k != "path" && k != "token" && k != "view" && k != "raw") || len(v) != 1 {
			forbidden() // duplicate or unknown parameters: never guess which one counts
			return
		}
	}
	p, token := q.Get("path"), q.Get("token")
	if p == "" || token == "" {
		forbidden()
		return
	}
	sv, err := f.Box.OpenLink(r.Context(), token, p, links.Visitor{Remote: r.RemoteAddr, UserAgent: r.UserAgent()})
	switch {
	case errors.Is(err, links.ErrBadLink):
		forbidden()
		return
	case errors.Is(err, links.ErrRevokedLink):
		withdrawn(w, r)
		return
	case errs.KindOf(err) == errs.NotFound || errs.KindOf(err) == errs.NotDirectory:
		plain(w, http.StatusNotFound, "Nothing is there any more.")
		return
	case errs.KindOf(err) == errs.Denied:
		forbidden()
		return
	case err != nil:
		f.Log.Error("files.out", "path", p, "err", err)
		plain(w, http.StatusInternalServerError, "Corral could not open this file.")
		return
	}
	if sv.File == nil {
		listing(w, p, sv)
		return
	}
	defer sv.File.Close()
	if strings.HasSuffix(strings.ToLower(p), ".md") {
		h.Set("Vary", "Accept")
		if view := q.Get("view") == "1"; view || showRendered(r, q) {
			raw := url.Values{"path": {p}, "token": {token}, "raw": {"1"}}
			if f.renderMarkdown(w, p, sv, "?"+raw.Encode(), pageURL(r), view) {
				return
			}
		}
		h.Set("Content-Type", "text/markdown; charset=utf-8")
	} else if ct, head := contentType(p, sv); markupType(ct) {
		serveMarkup(w, r, p, ct, head, sv)
		return
	} else if head != nil {
		// Sniffed: the bytes read are put back by seeking to the start.
		if _, err := sv.File.Seek(0, io.SeekStart); err != nil {
			plain(w, http.StatusInternalServerError, "Corral could not read this file.")
			return
		}
		h.Set("Content-Type", ct)
	}
	if sv.Info.Size <= SmallFile && r.Method == http.MethodGet && !conditional(r.Header) {
		serveSmall(w, p, sv)
		return
	}
	http.ServeContent(w, r, path.Base(p), sv.Info.Modified, sv.File)
}

// SmallFile is the size up to which /files/out answers a plain GET from
// memory. For small files http.ServeContent's sniff read, header write and
// sendfile cost more than one read and one write.
const SmallFile = 64 << 10

var smallBufs = sync.Pool{New: func() any { return new([SmallFile]byte) }}

// conditional reports whether a request asks for a range or has a
// precondition: those go to http.ServeContent, which knows the rules.
func conditional(h http.Header) bool {
	for _, k := range [...]string{"Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range"} {
		if _, ok := h[k]; ok {
			return true
		}
	}
	return false
}

// serveSmall answers a plain GET for a small file with the headers
// http.ServeContent would send, and like it serves the size the file had
// when it was opened (fewer bytes if it has shrunk since).
func serveSmall(w http.ResponseWriter, p string, sv links.Served) {
	buf := smallBufs.Get().(*[SmallFile]byte)
	defer smallBufs.Put(buf)
	n, err := io.ReadFull(sv.File, buf[:sv.Info.Size])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		plain(w, http.StatusInternalServerError, "Corral could not read this file.")
		return
	}
	body := buf[:n]
	h := w.Header()
	if h.Get("Content-Type") == "" {
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = http.DetectContentType(body)
		}
		h.Set("Content-Type", ct)
	}
	if !sv.Info.Modified.IsZero() && !sv.Info.Modified.Equal(time.Unix(0, 0)) {
		h.Set("Last-Modified", sv.Info.Modified.UTC().Format(http.TimeFormat))
	}
	h.Set("Accept-Ranges", "bytes")
	h.Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// pageURL is the address the request was made to, as the browser sees it.
func pageURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.RequestURI()
}

func plain(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, msg+"\n")
}

var md = goldmark.New(goldmark.WithExtensions(extension.GFM)) // raw HTML is not rendered (goldmark's default)

// showRendered reports whether a Markdown file is shown as a page: when a
// browser opens it (its Accept names text/html), unless ?raw=1 or a range
// asks for the bytes. Programs that fetch the link get the file as is.
func showRendered(r *http.Request, q url.Values) bool {
	return q.Get("raw") != "1" && r.Header.Get("Range") == "" && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// renderMarkdown answers a Markdown file as a page with a link to rawURL.
// It reports false, having written nothing and rewound the file, when the
// file is too large to render and the page was not asked for explicitly.
func (f FilesOut) renderMarkdown(w http.ResponseWriter, p string, sv links.Served, rawURL, self string, explicit bool) bool {
	src, err := io.ReadAll(io.LimitReader(sv.File, maxRenderedMarkdown+1))
	if err != nil {
		plain(w, http.StatusInternalServerError, "Corral could not read this file.")
		return true
	}
	if len(src) > maxRenderedMarkdown {
		if _, err := sv.File.Seek(0, io.SeekStart); err == nil && !explicit {
			return false
		}
		plain(w, http.StatusRequestEntityTooLarge, "This Markdown file is too large to show rendered; open it without view=1.")
		return true
	}
	var body bytes.Buffer
	if err := md.Convert(src, &body); err != nil {
		plain(w, http.StatusInternalServerError, "Corral could not render this file.")
		return true
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// A QR code of the page itself, to open it on a phone (f.QR: our
	// own drawing, nothing of the file in it).
	var qrCode string
	if f.QR != nil {
		qrCode, _ = f.QR(self)
	}
	viewTmpl.Execute(w, struct {
		Title, Raw string
		Body, QR   template.HTML
	}{path.Base(p), rawURL, template.HTML(body.String()), template.HTML(qrCode)}) // goldmark escapes raw HTML
	return true
}

type listingEntry struct {
	Name, URL, Size, Modified string
	Dir                       bool
}

type crumb struct{ Name, URL string }

func listing(w http.ResponseWriter, p string, sv links.Served) {
	page := struct {
		Title   string
		Crumbs  []crumb
		Entries []listingEntry
		Expires string
	}{Title: p, Expires: sv.Claims.Expires.Local().Format("2 Jan 2006 15:04")}
	for _, c := range sv.Crumbs {
		page.Crumbs = append(page.Crumbs, crumb{Name: path.Base(c.Path), URL: "/files/out?" + c.Query()})
	}
	for i, e := range sv.Entries {
		le := listingEntry{Name: e.Name, Modified: e.Modified.Local().Format(time.DateTime), Dir: e.Type == "dir"}
		if sv.Links[i].Token != "" {
			le.URL = "/files/out?" + sv.Links[i].Query()
		}
		if e.Type == "file" {
			le.Size = humanSize(e.Size)
		}
		if le.Dir {
			le.Name += "/"
		}
		page.Entries = append(page.Entries, le)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	listingTmpl.Execute(w, page)
}

func humanSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, unit := float64(n)/1024, 0
	for v >= 1024 && unit < 4 {
		v, unit = v/1024, unit+1
	}
	return fmt.Sprintf("%.1f %cB", v, "KMGTP"[unit])
}

const pageStyle = `<style>
:root { color-scheme: light dark; }
body { font: 16px/1.5 system-ui, sans-serif; max-width: 50rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid color-mix(in srgb, currentColor 15%, transparent); }
td.size, th.size { text-align: right; white-space: nowrap; }
nav { margin-bottom: 1rem; color: color-mix(in srgb, currentColor 70%, transparent); }
footer { margin-top: 2rem; font-size: .85em; color: color-mix(in srgb, currentColor 60%, transparent); }
pre { overflow-x: auto; } img { max-width: 100%; }
</style>`

var listingTmpl = template.Must(template.New("listing").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>` + pageStyle + `</head>
<body>
<nav aria-label="Breadcrumbs">{{range .Crumbs}}<a href="{{.URL}}">{{.Name}}</a> / {{end}}<strong>{{.Title}}</strong></nav>
<table>
<thead><tr><th>Name</th><th class="size">Size</th><th>Modified</th></tr></thead>
<tbody>
{{range .Entries}}<tr><td>{{if .URL}}<a href="{{.URL}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td class="size">{{.Size}}</td><td>{{.Modified}}</td></tr>
{{else}}<tr><td colspan="3">This folder is empty.</td></tr>
{{end}}</tbody>
</table>
<footer>Shared through Corral. This link works until {{.Expires}}.</footer>
</body></html>
`))

// withdrawn answers a link the owner revoked: 410 Gone, a page for a
// browser and a sentence for a program.
func withdrawn(w http.ResponseWriter, r *http.Request) {
	const msg = "The owner has withdrawn this link. Ask them for a new one if you still need the file."
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		plain(w, http.StatusGone, msg)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusGone)
	withdrawnTmpl.Execute(w, msg)
}

var withdrawnTmpl = template.Must(template.New("withdrawn").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link withdrawn</title>` + pageStyle + `</head>
<body><main><h1>This link was withdrawn</h1><p>{{.}}</p></main>
<footer>Shared through Corral.</footer></body></html>
`))

var viewTmpl = template.Must(template.New("view").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>` + pageStyle + `</head>
<body><main>{{.Body}}</main>
<footer>Shown rendered by Corral. <a href="{{.Raw}}">Open the raw file</a>
{{if .QR}}<details class="qr"><summary>Open on a phone</summary>{{.QR}}</details>{{end}}</footer></body></html>
`))
