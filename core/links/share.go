package links

// This file and ledger.go are the operations on links (link.create,
// result.save, the /files/out visit, the owner's list, withdrawal and key
// rotation), built on core/sandbox's operation skeleton (sandbox.Op):
// the sandbox resolves, decides and audits; this package signs, records
// and serves.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"html/template"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"corral/core/audit"
	"corral/core/errs"
	"corral/core/fsbox"
	"corral/core/paths"
	"corral/core/policy"
	"corral/core/sandbox"
)

// LinkConfig configures signed links.
type LinkConfig struct {
	Secret          []byte        // 32 bytes (secret.key); nil: links unavailable
	Expiry          time.Duration // default lifetime
	MaxExpiry       time.Duration // the longest a caller may ask for
	SaveResultMaxKB int
	// Ledger records the links handed out and answers whether one was
	// revoked; nil: no list, and only rotating the key withdraws links.
	Ledger LinkLedger
}

// Service makes, opens, lists and withdraws links, each an operation of
// the sandbox it is built on (sandbox.Op), audited there. It is safe for
// concurrent use.
type Service struct {
	box      *sandbox.Sandbox
	mu       sync.Mutex
	links    *Signer // nil: links unavailable; replaced by RotateLinks
	linkCfg  LinkConfig
	reportMu sync.Mutex // one report named at a time (SaveResult)
}

// New returns the links of box; a nil lc.Secret: links are unavailable.
func New(box *sandbox.Sandbox, lc LinkConfig) (*Service, error) {
	s := &Service{box: box}
	if lc.Secret != nil {
		if err := s.setLinks(lc); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// setLinks installs (or, with a new secret, rotates) the link signer.
func (s *Service) setLinks(lc LinkConfig) error {
	signer, err := NewSigner(lc.Secret)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.links, s.linkCfg = signer, lc
	return nil
}

func (s *Service) signer() (*Signer, LinkConfig, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.links == nil {
		return nil, LinkConfig{}, errs.New(errs.Unavailable, "", "Links are not enabled in this Corral.")
	}
	return s.links, s.linkCfg, nil
}

// Link is a signed link to a path, without the server's base URL.
type Link struct {
	Scope   string
	Path    string // canonical agent-visible path
	Folder  bool
	Token   string
	Expires time.Time
	KeyID   string // the signing key's id (in the token too)
}

// Query is the link's query string: path=…&token=….
func (l Link) Query() string {
	return "path=" + queryEscape(l.Path) + "&token=" + l.Token
}

// queryEscape escapes a path for a query value, keeping '/' readable.
func queryEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// sign signs a link for a target in scope (file or folder).
func (s *Service) sign(scope string, t paths.Target, folder bool, life time.Duration) (Link, error) {
	signer, lc, err := s.signer()
	if err != nil {
		return Link{}, err
	}
	if life <= 0 {
		life = lc.Expiry
	}
	if life > lc.MaxExpiry {
		return Link{}, tooLong(lc)
	}
	exp := s.box.Now().Add(life).Truncate(time.Second).UTC()
	return signed(signer, Claims{Scope: scope, Path: t.Visible, Folder: folder, Expires: exp}), nil
}

// tooLong refuses a link asked to outlive lc.MaxExpiry.
func tooLong(lc LinkConfig) error {
	return errs.New(errs.InvalidParams, "", "Links can last at most %s.", humanDuration(lc.MaxExpiry))
}

// signed is the Link for c, signed by signer.
func signed(signer *Signer, c Claims) Link {
	return Link{Scope: c.Scope, Path: c.Path, Folder: c.Folder, Token: signer.Sign(c), Expires: c.Expires, KeyID: signer.KeyID()}
}

// LinkArgs are link.create's parameters.
type LinkArgs struct {
	Context   *sandbox.Context
	Path      string
	ExpiresIn time.Duration // parsed by the transport
}

// CreateLink answers link.create: a file or folder in the caller's scope
// or the shared folder.
func (s *Service) CreateLink(ctx context.Context, c sandbox.Caller, a LinkArgs) (Link, error) {
	o, err := s.box.Begin(ctx, c, a.Context, "link.create")
	if err != nil {
		return Link{}, err
	}
	if _, lc, serr := s.signer(); serr == nil && a.ExpiresIn > lc.MaxExpiry {
		o.Event().Target = a.Path
		return Link{}, o.End(tooLong(lc))
	}
	// Only the scope and the shared folder: never ask the owner about a
	// path that could not be linked anyway.
	if t, rerr := s.resolve(o.Scope(), a.Path); rerr == nil && t.Area != paths.InScope && t.Area != paths.InShare {
		o.Event().Target, o.Event().Decision, o.Event().DecidedBy = t.Visible, audit.Deny, audit.ByScope
		return Link{}, o.End(errs.New(errs.Denied, t.Visible, "Links can only point into your own folder or the shared folder."))
	}
	d, t, err := o.Target(a.Path, policy.Read)
	var l Link
	if err == nil {
		// Only what the link will be able to serve: no symlinks on the
		// way, no hard-linked or special files.
		var opened fsbox.Opened
		if opened, err = d.OpenNoFollow(t.Rel); err == nil {
			opened.Close()
			if l, err = s.sign(o.Scope(), t, opened.Dir != nil, a.ExpiresIn); err == nil {
				o.Event().Detail = "expires " + l.Expires.Format(time.RFC3339)
				if err = s.record(ctx, c, l); err != nil {
					l = Link{}
				}
			}
		}
	}
	return l, o.End(err)
}

// Served is what a verified link opens: a regular file or a folder.
type Served struct {
	File    *os.File     // a regular file, opened; the caller closes it
	Info    fsbox.Info   // the file or folder
	Entries []fsbox.Info // a folder's entries
	Links   []Link       // for a folder: one link per entry, same order; a zero Link for an entry its path does not reach
	Crumbs  []Link       // folder links from the link's own folder down to the parent of path
	Claims  Claims
}

// Visitor describes who opened a link, for the audit log.
type Visitor struct {
	Remote    string
	UserAgent string
}

// ErrBadLink is the one error for every token problem: the HTTP answer is
// a bare 403 that does not say which check failed.
var ErrBadLink = errors.New("sandbox: bad link")

// OpenLink verifies a link for path and opens what it names. Token
// problems answer ErrBadLink; a missing file answers a not_found error.
// Every attempt with a valid token is audited as op "files.out".
func (s *Service) OpenLink(ctx context.Context, token, p string, v Visitor) (Served, error) {
	signer, lc, err := s.signer()
	if err != nil {
		return Served{}, ErrBadLink
	}
	claims, err := signer.Verify(token, p, s.box.Now(), lc.MaxExpiry)
	if err != nil {
		return Served{}, ErrBadLink
	}
	t, err := s.resolve(claims.Scope, p)
	if err != nil || t.Visible != p || (t.Area != paths.InScope && t.Area != paths.InShare) {
		return Served{}, ErrBadLink // the path the MAC covered is not canonical
	}
	// A folder link covers its own area only: a link to a scope's root
	// does not open the shared folder.
	if lt, err := s.resolve(claims.Scope, claims.Path); err != nil || lt.Area != t.Area {
		return Served{}, ErrBadLink
	}
	o := s.box.Started(ctx, audit.Event{Client: "link", User: claims.Scope, Op: "files.out", Target: p,
		Decision: audit.Allow, DecidedBy: audit.ByScope, Detail: sandbox.Clip("from "+v.Remote+"; "+v.UserAgent, 300)}, claims.Scope)
	if err := s.revoked(ctx, signer.KeyID(), claims); err != nil {
		// Refused by the owner's earlier answer; a ledger that cannot
		// answer keeps the link closed too (an error, not a decision).
		if errors.Is(err, ErrRevokedLink) {
			o.Event().Decision, o.Event().DecidedBy = audit.Deny, audit.ByOwner
		}
		return Served{}, o.End(err)
	}
	d, err := s.box.Dir(t)
	if err != nil {
		return Served{}, o.End(err)
	}
	var sv Served
	sv.Claims = claims
	if claims.Folder {
		for cp := claims.Path; cp != p; {
			sv.Crumbs = append(sv.Crumbs, signed(signer, Claims{Scope: claims.Scope, Path: cp, Folder: true, Expires: claims.Expires}))
			prefix := cp + "/"
			if cp == "." {
				prefix = ""
			}
			next, _, _ := strings.Cut(strings.TrimPrefix(p, prefix), "/")
			cp = prefix + next
		}
	}
	// Links follow no symlinks at all: a link to output/ must not serve
	// output/s -> ../private/secret.txt, and a file link stays that file.
	opened, err := d.OpenNoFollow(t.Rel)
	switch {
	case errs.KindOf(err) == errs.Denied:
		o.End(err)
		return Served{}, ErrBadLink
	case err != nil:
	case opened.File != nil:
		sv.File, sv.Info = opened.File, opened.Info
		o.Event().Bytes = sv.Info.Size
	case !claims.Folder:
		// A file link whose path has become a folder does not list it.
		opened.Close()
		err = errs.New(errs.NotFound, p, "That link was made for a file.")
	default:
		// Listed from the folder the walk opened, not by its path again.
		defer opened.Close()
		sv.Info = opened.Info
		var trunc bool
		sv.Entries, trunc, err = opened.Dir.List(".", 1, 1000)
		if trunc {
			o.Event().Detail += "; listing truncated"
		}
		for _, e := range sv.Entries {
			// An entry gets a link only if its path names it: in a
			// scope's root a real folder called "share" is listed, but
			// the path "share" means the shared folder, which a link to
			// the scope's root does not cover.
			if et, err := s.resolve(claims.Scope, e.Path); err != nil || et.Visible != e.Path || et.Area != t.Area {
				sv.Links = append(sv.Links, Link{})
				continue
			}
			if e.Type == "symlink" {
				sv.Links = append(sv.Links, Link{}) // links follow no symlinks
				continue
			}
			// A child link never outlives the folder's.
			sv.Links = append(sv.Links, signed(signer, Claims{Scope: claims.Scope, Path: e.Path, Folder: e.Type == "dir", Expires: claims.Expires}))
		}
	}
	if err = o.End(err); err != nil && sv.File != nil {
		sv.File.Close() // unaudited, so not served: nobody else would close it
		sv.File = nil
	}
	return sv, err
}

// humanDuration says d the way people do: "365 days", "12 hours", else
// Go's form ("90m0s" reads as "1h30m0s").
func humanDuration(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return plural(int(d/(24*time.Hour)), "day")
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int(d/time.Minute), "minute")
	}
	return d.String()
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// ResultArgs are result.save's parameters.
type ResultArgs struct {
	Context *sandbox.Context
	Title   string
	Content string
	Format  string
}

// Result is result.save's answer, without the server's base URL.
type Result struct {
	Link    Link
	Content string // markdown only: the content, capped for a chat reply
}

// maxReturnedMarkdown caps the content result.save hands back.
const maxReturnedMarkdown = 16 << 10

// SaveResult answers result.save: it writes
// output/report_<date>-<slug of the title>.md or .html and links it.
func (s *Service) SaveResult(ctx context.Context, c sandbox.Caller, a ResultArgs) (Result, error) {
	_, lc, err := s.signer()
	if err != nil {
		return Result{}, err
	}
	o, err := s.box.Begin(ctx, c, a.Context, "result.save")
	if err != nil {
		return Result{}, err
	}
	if a.Format == "" {
		a.Format = "markdown"
	}
	var ext string
	var body []byte
	switch {
	case strings.TrimSpace(a.Content) == "":
		err = errs.New(errs.InvalidParams, "", `The report is empty: "content" holds the text of the page.`)
	case a.Format == "markdown":
		ext, body = ".md", []byte(a.Content)
	case a.Format == "html":
		ext = ".html"
		body, err = htmlPage(a.Title, a.Content)
	default:
		err = errs.New(errs.InvalidParams, "", `format must be "markdown" or "html".`)
	}
	if err == nil && len(body) > lc.SaveResultMaxKB<<10 {
		err = errs.New(errs.TooLarge, "", "The report is %d KB; reports can be at most %d KB.", (len(body)+1023)>>10, lc.SaveResultMaxKB)
	}
	if err != nil {
		o.Event().Target = s.box.Layout().OutputDir
		return Result{}, o.End(err)
	}
	detail := a.Format + ": " + sandbox.Clip(a.Title, 200)
	// One report named at a time, so that two reports with the same title
	// never pick the same free name.
	s.reportMu.Lock()
	defer s.reportMu.Unlock()
	var d fsbox.Dir
	var t paths.Target
	for n := 1; ; n++ {
		o.Event().Target, o.Event().Detail = "", detail
		d, t, err = o.Target(s.box.Layout().OutputDir+"/"+reportName(s.box.Now(), a.Title, n)+ext, policy.Write)
		if err != nil {
			break
		}
		if _, serr := d.Stat(t.Rel); errs.KindOf(serr) == errs.NotFound || n == maxReportTries {
			break
		}
	}
	var res Result
	if err == nil {
		o.Event().Bytes, err = d.Write(t.Rel, body, false)
	}
	if err == nil {
		res.Link, err = s.sign(o.Scope(), t, false, 0)
	}
	if err == nil {
		if err = s.record(ctx, c, res.Link); err != nil {
			res.Link = Link{}
		}
	}
	if err == nil && a.Format == "markdown" {
		res.Content = a.Content
		if len(res.Content) > maxReturnedMarkdown {
			res.Content = sandbox.Clip(res.Content, maxReturnedMarkdown) + "\n\n…(truncated; open the link for the full report)"
		}
	}
	return res, o.End(err)
}

// maxReportTries bounds the search for a free report name; the last try
// carries a random part instead of a number.
const maxReportTries = 100

// reportName names the n-th try for a report: report_<date>-<slug>, then
// -2, -3… when the name is taken, and a random part at the last try.
func reportName(now time.Time, title string, n int) string {
	name := "report_" + now.UTC().Format("2006-01-02") + "-" + Slug(title)
	switch {
	case n == maxReportTries:
		b := make([]byte, 3)
		rand.Read(b)
		name += "-" + hex.EncodeToString(b)
	case n > 1:
		name += "-" + strconv.Itoa(n)
	}
	return name
}

// maxSlug caps a slug's length in bytes.
const maxSlug = 60

// Slug turns a title into a file-name part: lowercase ASCII letters and
// digits joined by single hyphens, at most 60 bytes, "report" when the
// title has none. It never holds a slash, a dot or anything else a path
// could use.
func Slug(title string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		default:
			hyphen = true
		}
		if b.Len() >= maxSlug {
			break
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > maxSlug {
		s = strings.TrimRight(s[:maxSlug], "-")
	}
	if s == "" {
		return "report"
	}
	return s
}

var fullDocument = regexp.MustCompile(`(?is)^\s*(<!--.*?-->\s*)*(<!doctype\s+html|<html[\s>])`)

// htmlPage stores a full document as is and wraps a fragment in a clean,
// readable page. Served pages always carry CSP sandbox, so a document's
// scripts cannot act as the dashboard.
func htmlPage(title, content string) ([]byte, error) {
	if fullDocument.MatchString(content) {
		return []byte(content), nil
	}
	if title == "" {
		title = "Report"
	}
	var b bytes.Buffer
	err := pageTemplate.Execute(&b, struct {
		Title   string
		Heading bool
		Body    template.HTML
	}{title, !startsWithHeading(content, title), template.HTML(content)}) // the agent's fragment, shown as it wrote it
	return b.Bytes(), err
}

var leadingH1 = regexp.MustCompile(`(?is)^\s*(<!--.*?-->\s*)*<h1(\s[^>]*)?>(.*?)</h1\s*>`)

var tag = regexp.MustCompile(`<[^>]*>`)

// startsWithHeading reports whether a fragment opens with an h1 that says
// the title already (tags, case and spacing aside), so that the page does
// not show the same heading twice.
func startsWithHeading(fragment, title string) bool {
	m := leadingH1.FindStringSubmatch(fragment)
	if m == nil {
		return false
	}
	text := html.UnescapeString(tag.ReplaceAllString(m[3], ""))
	return strings.EqualFold(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(title), " "))
}

var pageTemplate = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.Title}}</title>
<style>
:root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fdfdfc; --muted: #6e6e73; --rule: #e3e3e0; --accent: #0b5cad; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e8e6; --bg: #151516; --muted: #a1a1a6; --rule: #333336; --accent: #6cb2ff; } }
html { background: var(--bg); color: var(--fg); }
body { font: 17px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; max-width: 46rem; margin: 0 auto; padding: 2.5rem 1.25rem 4rem; }
h1 { font-size: 1.9rem; line-height: 1.25; margin: 0 0 1.5rem; }
h2, h3 { line-height: 1.3; margin-top: 2rem; }
a { color: var(--accent); }
table { border-collapse: collapse; width: 100%; margin: 1rem 0; font-size: .95em; }
th, td { border-bottom: 1px solid var(--rule); padding: .45rem .6rem; text-align: left; vertical-align: top; }
pre, code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .9em; }
pre { overflow-x: auto; padding: 1rem; border: 1px solid var(--rule); border-radius: 6px; }
img { max-width: 100%; height: auto; }
blockquote { margin: 1rem 0; padding-left: 1rem; border-left: 3px solid var(--rule); color: var(--muted); }
footer { margin-top: 3rem; color: var(--muted); font-size: .85em; }
</style>
</head>
<body>
{{if .Heading}}<h1>{{.Title}}</h1>
{{end}}<main>
{{.Body}}
</main>
<footer>Saved by an agent through Corral.</footer>
</body>
</html>
`))

// RotateLinks replaces the signing key with secret, so every earlier link
// stops working, and records who did it.
func (s *Service) RotateLinks(ctx context.Context, secret []byte, by string) error {
	s.mu.Lock()
	lc := s.linkCfg
	s.mu.Unlock()
	lc.Secret = secret
	o := s.box.Started(ctx, audit.Event{Client: by, Op: "links.rotate", Decision: audit.Allow, DecidedBy: audit.ByOwner,
		Detail: "every earlier link stops working"}, "")
	return o.End(s.setLinks(lc))
}

// resolve resolves p in scope as the sandbox does.
func (s *Service) resolve(scope, p string) (paths.Target, error) {
	l := s.box.Layout()
	return l.Resolve(scope, p)
}
