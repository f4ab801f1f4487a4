// SPDX-License-Identifier: Apache-2.0

// Command manpage writes corral(1) in roff from the CLI's own help: the
// output of `corral help` on stdin, the page on stdout.
//
//	bin/pkg/corral help | go run ./packaging/manpage -version V -date 2026-11-27 | gzip -9n > corral.1.gz
//
// The commands section is the help text, one entry per command; the
// other sections (environment, files, exit status) are written here and
// name only what app/main.go and the daemon document.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	version := flag.String("version", "", "Corral's version, for the page's footer")
	date := flag.String("date", "", "the page's date (YYYY-MM-DD), the commit's for a reproducible page")
	flag.Parse()
	if err := write(os.Stdout, os.Stdin, *version, *date); err != nil {
		fmt.Fprintln(os.Stderr, "manpage:", err)
		os.Exit(1)
	}
}

// command is one entry of the help's command list.
type command struct {
	Synopsis string   // "serve [--headless] …"
	Text     []string // what it does, one help line each
}

// parse reads the help: a "usage:" line, then entries whose first line
// starts with two spaces (the command, then its text after a run of
// spaces) and whose further lines are indented deeper.
func parse(r io.Reader) ([]command, error) {
	var cmds []command
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			if !strings.HasPrefix(line, "usage: corral") {
				return nil, fmt.Errorf("help does not start with \"usage: corral\": %q", line)
			}
			first = false
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		text := strings.TrimSpace(line)
		switch {
		case indent <= 2:
			name, rest, _ := strings.Cut(text, "   ")
			c := command{Synopsis: strings.TrimSpace(name)}
			if rest = strings.TrimSpace(rest); rest != "" {
				c.Text = append(c.Text, rest)
			}
			cmds = append(cmds, c)
		case len(cmds) == 0:
			return nil, fmt.Errorf("help line before any command: %q", line)
		case len(cmds[len(cmds)-1].Text) == 0 && indent < 20:
			// A long synopsis continued on the next line.
			cmds[len(cmds)-1].Synopsis += " " + text
		default:
			cmds[len(cmds)-1].Text = append(cmds[len(cmds)-1].Text, text)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("no commands in the help")
	}
	return cmds, nil
}

// esc makes text safe in roff: backslashes and hyphens escaped, and no
// line starting with a control character.
func esc(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

func write(w io.Writer, help io.Reader, version, date string) error {
	cmds, err := parse(help)
	if err != nil {
		return err
	}
	b := new(strings.Builder)
	fmt.Fprintf(b, ".TH CORRAL 1 %q %q \"User Commands\"\n", date, "corral "+version)
	b.WriteString(`.SH NAME
corral \- keep AI agents in a fenced sandbox on a home computer
.SH SYNOPSIS
.B corral
.RI [ command ]
.RI [ options ]
.SH DESCRIPTION
Corral gives each AI agent a sandbox folder. Agents read, write and run
commands through Corral, over WebSocket JSON\-RPC or MCP; commands run under
bubblewrap; anything that crosses the fence waits for the owner's answer in a
native dialog, the browser dashboard or a paired phone, and every decision is
written to an audit log.
.PP
With no command,
.B corral
is the tray app: the daemon and the desktop UI in one process, or the daemon
alone when there is no display. When Corral already runs with the same files,
it opens that one's dashboard instead of starting a second.
.SH COMMANDS
`)
	for _, c := range cmds {
		name := c.Synopsis
		if name == "(none)" {
			name = "(no command)"
		}
		fmt.Fprintf(b, ".TP\n.B %s\n", esc(name))
		for _, t := range c.Text {
			b.WriteString(esc(t) + "\n")
		}
	}
	b.WriteString(`.SH ENVIRONMENT
.TP
.B CORRAL_HOME
one folder for Corral's config, data and sandboxes, instead of the XDG
folders.
.TP
.BR CORRAL_URL ", " CORRAL_KEY
where the running daemon listens, and an agent's key: for
.B corral mcp
and the client commands.
.TP
.B CORRAL_NETINIT
the corral\-netinit helper to use instead of
.IR /usr/lib/corral/corral\-netinit .
.SH FILES
.TP
.I ~/.config/corral/config.toml
the settings (people, agents, roots, limits); written with defaults on the
first start.
.TP
.I ~/.local/share/corral/
the database (audit log, rules, devices), the secrets, the lock file and the
versions of changed files.
.TP
.I ~/corral/
the agents' sandbox folders.
.TP
.I /usr/lib/systemd/user/corral.service
the daemon without a desktop, as a user service.
.SH EXIT STATUS
0 on success; 1 on an error, with one line on standard error; 2 for an
unknown command; 3 when
.B corral serve
finds Corral already running with the same files.
.SH SEE ALSO
.BR bwrap (1),
.I /usr/share/doc/corral/README.md
`)
	_, err = io.WriteString(w, b.String())
	return err
}
