// Package proxy serves, from outside a sandbox, the connections a
// command makes to execbox's ProxyAddr inside it: corral-netinit listens
// there, in the sandbox's own network namespace, and sends the listening
// socket over an inherited Unix socket; Serve receives it and hands each
// connection accepted on it to the caller's egress function (the owner's
// proxy, which decides what the command may reach).
//
// # What it guarantees, and what not
//
// At most max connections are served at once (each costs the daemon a
// descriptor); the rest wait in the sandbox's kernel. The stop function
// Serve returns closes the listener, cancels the handlers' context and
// waits for every handler and for the receive, which returns once every
// copy of the sandbox's end of the socket is closed (the command ended
// or never started). A missing or malformed message is logged, not
// returned: the command then simply reaches nothing. What a connection
// may reach is the egress function's to decide, not this package's. It
// is built on Linux only (SCM_RIGHTS over the socket corral-netinit
// inherits); elsewhere commands do not run.
package proxy
