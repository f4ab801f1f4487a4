// Package assets holds the files Corral ships inside its binary: the
// browser dashboard under web/ (plain HTML, CSS and JavaScript modules, no
// build step) served by app/server.
//
// Guaranteed: everything under web/ is embedded as it is in the tree, so
// what a test loads is what the binary serves. Not guaranteed: nothing
// here checks who may see the files; the server decides that (the
// dashboard shell only with an owner session, the static files to anyone
// the Host check lets in — they hold no secrets).
package assets

import "embed"

// Web holds the dashboard; its root folder is "web".
//
//go:embed web
var Web embed.FS
