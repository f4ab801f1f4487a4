// Package share is Corral's share room on the HTTP side: the one page a
// person opens without signing in, GET /files/out (FilesOut), and the
// methods that hand out and manage the links to it (Links: link.create,
// result.save, links.rotate, links.list, link.revoke). core/links signs,
// records and opens the links; this package answers for them on the web.
// app/server mounts FilesOut and registers the methods in its table
// (decoding their params, deciding who may call which); this package
// knows nothing of app/server, only of Server, the few answers it needs
// of it (its base, public and LAN addresses).
//
// Guarantees of /files/out, reachable from the LAN without any login:
// nothing is served unless core/links verifies the token for the exact
// path (a forged, expired or refused link gets one 403 sentence, so a
// probe learns nothing from it; a withdrawn link 410, a file gone since
// 404); a duplicate or unknown query
// parameter is refused rather than guessed at; every answer, errors
// included, carries CSP (a sandboxed, script-less, opaque origin that
// loads nothing from elsewhere); markup an agent wrote (HTML, XHTML, SVG,
// XML) is served without its <link> elements or as plain text when that
// cannot be made sure of (markup.go); Markdown is rendered without raw
// HTML.
//
// Not guaranteed: the Host check, nosniff and no-referrer are the
// server's (app/server's guard, in front of FilesOut); a link the person
// clicks on a served page still navigates; what a link opens is only as
// private as the link itself (anyone holding it opens it until it
// expires or is withdrawn).
package share
