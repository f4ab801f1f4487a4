// Command corral keeps AI agents in a fenced yard on a home computer.
// See docs/owner.md and docs/protocol.md section 3 for the command line.
//
// It is the one package that imports everything: it parses the command
// line and runs the tray (ui) or the daemon alone, both started through
// app/daemon, the stdio MCP bridge (app/mcp over app/client), or one
// client command against the running daemon.
//
// Guarantees: exit status 0 on success, 1 on an error (one line
// "corral: …" on stderr, unless the command has reported it itself), 2
// for an unknown command, 3 when the daemon cannot start because Corral
// already runs with the same files (`corral` with no command opens that
// one's dashboard instead). Text an agent could have written that the
// command line prints for the owner (audit rows, waiting approvals, error
// sentences) goes through core/visible, so hidden characters show and no
// escape sequence reaches the terminal. `corral mcp` never repeats a call
// whose connection broke before the answer: it says the call may or may
// not have completed. The tray falls back to running headless, with one
// line saying why, when there is no display or the UI fails.
//
// Not guaranteed: the client commands find the daemon through CORRAL_URL
// or the lock file beside the files they locate (CORRAL_HOME or the XDG
// folders); a daemon started with other files is not found. `corral call`
// prints the result as the daemon sent it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"corral/app/daemon"
	"corral/core/docread"
)

// docreadCommand is the hidden subcommand that runs the document reader.
const docreadCommand = "__docread"

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

const usage = `usage: corral [command]

  (none)                 the tray app; headless when there is no display; when
                         Corral already runs, opens its dashboard instead
  serve [--headless] [--config FILE] [--listen ADDR]
                         run the daemon
  open [--print]         open the dashboard with a fresh one-time login
  link PATH --user ID [--expires 1h]
                         print a signed link to a file or folder
  links rotate           new signing key: every earlier link stops working
  mcp [--owner]          MCP over stdio, forwarding to the running daemon
                         as the agent of CORRAL_KEY (with CORRAL_URL);
                         --owner: as the owner, with owner.token
  call METHOD [JSON]     one JSON-RPC call to the running daemon
  approve [ID ANSWER [REASON]]
                         list what waits for your answer, or answer one
                         ("Allow once", "Always deny" …); a deny may add
                         REASON, a sentence the agent reads in its error
  audit [--follow] [--client N] [--user ID] [--op OP] [--decision D] [--text T] [--limit N]
                         print audit events as a table
  version                print the version
`

func main() {
	args := os.Args[1:]
	cmd := ""
	// A leading flag other than these belongs to the tray: `corral --listen …`.
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || slices.Contains([]string{"-h", "--help", "--version"}, args[0])) {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case docreadCommand:
		// Corral's document reader, started by the daemon inside a sandbox:
		// the document on stdin, the text on stdout (core/docread).
		name := ""
		if len(args) > 0 {
			name = args[len(args)-1]
		}
		os.Exit(docread.Serve(name, os.Stdin, os.Stdout, docread.Limits{}))
	case "":
		err = runTray(args)
	case "serve":
		err = runServe(args)
	case "mcp":
		err = runMCP(args)
	case "call":
		err = runCall(args)
	case "audit":
		err = runAudit(args)
	case "open":
		err = runOpen(args)
	case "link":
		err = runLink(args)
	case "links":
		err = runLinks(args)
	case "undo":
		err = runUndo(args)
	case "approve":
		err = runApprove(args)
	case "version", "--version":
		fmt.Println("corral", version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "corral: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if errors.Is(err, errRestart) {
		err = fmt.Errorf("could not start again: %w", reexec())
	}
	if errors.Is(err, flag.ErrHelp) {
		return // the flag package has printed the usage
	}
	if errors.As(err, new(reported)) {
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral:", err)
		if errors.Is(err, daemon.ErrRunning) {
			os.Exit(exitRunning)
		}
		os.Exit(1)
	}
}

// exitRunning is the exit status of `corral serve` when Corral already
// runs with the same files: the user unit does not restart on it
// (RestartPreventExitStatus=3 in packaging/corral.service).
const exitRunning = 3
