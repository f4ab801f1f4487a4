package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"corral/app/client"
	"corral/app/config"
	"corral/app/daemon"
	"corral/app/wire"
	"corral/core/visible"
)

// daemonTarget is the daemon's URL and the key to call it with:
// CORRAL_URL and CORRAL_KEY, or the config's URL and the owner token.
func daemonTarget() (base, key string, err error) {
	base = os.Getenv("CORRAL_URL")
	key = os.Getenv("CORRAL_KEY")
	if base == "" || key == "" {
		files, cfg, err := loadConfig("")
		if err != nil {
			return "", "", err
		}
		if base == "" {
			base = daemonURL(files, cfg)
		}
		if key == "" {
			b, err := os.ReadFile(files.OwnerToken)
			if err != nil {
				return "", "", fmt.Errorf("no CORRAL_KEY and no owner token (%w)", err)
			}
			key = strings.TrimSpace(string(b))
		}
	}
	return base, key, nil
}

// dial connects to the running daemon: CORRAL_URL, else daemonURL;
// CORRAL_KEY, else the owner token.
func dial(ctx context.Context) (*client.Client, error) {
	base, key, err := daemonTarget()
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(ctx, base, key)
	var de *client.DialError
	switch {
	case err == nil:
		return c, nil
	case !errors.As(err, &de):
		return nil, err
	case de.Status == http.StatusUnauthorized:
		return nil, fmt.Errorf("Corral at %s did not accept the key: CORRAL_KEY must be the key of an agent (Agents in the dashboard, or a [[clients]] entry in config.toml); a removed agent or a rotated key no longer works (the owner leaves it unset: `corral call`, `approve` and `audit` then use owner.token, and `corral mcp` needs --owner)", base)
	case de.Status != 0:
		return nil, fmt.Errorf("Corral at %s refused the connection (%s)", base, http.StatusText(de.Status))
	case !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://"):
		return nil, fmt.Errorf("CORRAL_URL %q is not an http:// or https:// URL", base)
	}
	return nil, fmt.Errorf("nothing answers at %s (%v): is Corral running? Start it with `corral` or `corral serve`", base, errors.Unwrap(de.Err))
}

// daemonURL is where the daemon of files listens: what the running one
// wrote in its lock file (it may have been started with --listen), else
// the config's address.
func daemonURL(files config.Files, cfg *config.Config) string {
	if u := daemon.RunningURL(files); u != "" {
		return u
	}
	host, port, _ := net.SplitHostPort(cfg.Server.Listen)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func runCall(args []string) error {
	if len(args) < 1 || len(args) > 2 || strings.HasPrefix(args[0], "-") {
		return errors.New("usage: corral call METHOD ['{json params}'], e.g. corral call file.read '{\"path\":\"notes/a.txt\"}'; the methods are in docs/protocol.md section 6 (session.info says who you are)")
	}
	var params any
	if len(args) == 2 {
		if !json.Valid([]byte(args[1])) {
			return errors.New("the parameters are not valid JSON")
		}
		params = json.RawMessage(args[1])
	}
	var raw json.RawMessage
	if err := callOnce(args[0], params, &raw); err != nil {
		return err
	}
	return printJSON(raw)
}

// printJSON prints a result indented and readable: URLs keep their "&"
// rather than the "\u0026" JSON encoders write for HTML's sake, and
// bidi and other format characters are escaped (escapeHidden).
func printJSON(raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := os.Stdout.Write(escapeHidden(buf.Bytes()))
	return err
}

func runAudit(args []string) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	follow := fs.Bool("follow", false, "keep printing new events")
	var params wire.AuditArgs
	fs.StringVar(&params.Client, "client", "", "only this client's events")
	fs.StringVar(&params.User, "user", "", "only events in this user's folder")
	fs.StringVar(&params.Op, "op", "", "only this operation, e.g. file.read")
	fs.StringVar(&params.Decision, "decision", "", "only allow, deny or error")
	fs.StringVar(&params.Text, "text", "", "only events mentioning this text")
	fs.StringVar(&params.Since, "since", "", "only events after this: a time (RFC 3339) or a duration back from now (1h, 7d)")
	fs.StringVar(&params.Until, "until", "", "only events before this: a time (RFC 3339) or a duration back from now")
	fs.IntVar(&params.Limit, "limit", 50, "how many events to print")
	asJSON := fs.Bool("json", false, "print each event as one JSON object per line, values whole")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// On a terminal long values are cut to fit a row (with "…"); piped
	// or redirected, every value is printed whole.
	out := auditOut{w: os.Stdout, json: *asJSON, whole: !isTerminal(os.Stdout)}
	for _, v := range []*string{&params.Since, &params.Until} {
		if d, err := config.ParseDuration(*v); *v != "" && err == nil {
			*v = time.Now().Add(-d).UTC().Format(time.RFC3339)
		}
	}
	return withDaemon(func(ctx context.Context, c *client.Client) error {
		return printAudit(ctx, c, params, *follow, out)
	})
}

// auditOut is how corral audit prints: to w, as a table (values cut to
// fit unless whole) or as JSON lines.
type auditOut struct {
	w     io.Writer
	json  bool
	whole bool
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// printAudit prints the events matching params, and with follow the new
// ones as they come, until ctx ends.
func printAudit(ctx context.Context, c *client.Client, params wire.AuditArgs, follow bool, out auditOut) error {
	// Columns at least as wide as their usual values, so that rows printed
	// later by --follow line up with the first page.
	tw := tabwriter.NewWriter(out.w, 0, 0, 2, ' ', 0)
	if !out.json {
		fmt.Fprintf(tw, auditWidths, "ID", "TIME", "CLIENT", "USER", "OP", "DECISION", "BY", "TARGET", "ERROR")
	}
	row := func(e wire.Event) { out.row(tw, e) }
	if follow {
		if _, err := c.Call(ctx, "audit.subscribe", nil); err != nil {
			return err
		}
	}
	var page wire.Page
	if err := c.CallInto(ctx, "audit.query", params, &page); err != nil {
		return err
	}
	for i := len(page.Events) - 1; i >= 0; i-- { // oldest first, like a log
		row(page.Events[i])
	}
	tw.Flush()
	if !follow {
		if len(page.Events) == 0 && !out.json {
			fmt.Println("(no events match)")
		}
		return nil
	}
	for {
		select {
		case n, ok := <-c.Notifications():
			if !ok {
				return errors.New("the daemon closed the connection")
			}
			var m wire.AuditEvent
			if n.Method != "audit.event" || json.Unmarshal(n.Params, &m) != nil || !matches(m.Event, params) {
				continue
			}
			row(m.Event)
			tw.Flush()
		case <-ctx.Done():
			return nil
		}
	}
}

// matches applies the exact-match filters to followed events.
func matches(e wire.Event, p wire.AuditArgs) bool {
	for _, f := range [][2]string{{p.Client, e.Client}, {p.User, e.User}, {p.Op, e.Op}, {p.Decision, string(e.Decision)}} {
		if f[0] != "" && f[0] != f[1] {
			return false
		}
	}
	if t := p.Text; t != "" && !strings.Contains(e.Target, t) && !strings.Contains(e.Detail, t) {
		return false
	}
	return true
}

const auditWidths = "%-6s\t%-19s\t%-12s\t%-8s\t%-12s\t%-8s\t%-7s\t%-30s\t%s\n"

// row prints one event. Every text an agent could have influenced is
// shown with its hidden characters made visible (visible.Line), so no
// escape sequence reaches the terminal; JSON lines keep values exact
// (encoding/json escapes controls) with format characters escaped too.
func (o auditOut) row(tw *tabwriter.Writer, e wire.Event) {
	if o.json {
		b, err := marshalVisible(e)
		if err == nil {
			tw.Write(append(b, '\n'))
		}
		return
	}
	cell := func(s string, n int) string {
		s = visible.Line(s)
		if o.whole {
			return s
		}
		return clip(s, n)
	}
	fmt.Fprintf(tw, auditWidths, strconv.FormatInt(e.ID, 10), e.Time.Local().Format(time.DateTime),
		cell(e.Client, 40), cell(e.User, 40), cell(e.Op, 40), e.Decision, e.DecidedBy, cell(e.Target, 60), cell(e.Error, 60))
}

// clip cuts s to n runes, ending in "…" when it cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// marshalVisible encodes v as one line of JSON whose strings escape, as
// \uXXXX, the format and separator characters encoding/json leaves raw
// (bidi overrides, zero-width characters): decoded, the values are
// exactly what was stored; printed, nothing in them reorders a line.
func marshalVisible(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return escapeHidden(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// escapeHidden rewrites the characters visible would escape, outside
// ASCII (encoding/json already escapes C0 controls), as JSON escapes;
// they only occur inside strings.
func escapeHidden(b []byte) []byte {
	if utf8.Valid(b) && !visible.Needs(string(b)) {
		return b
	}
	var out bytes.Buffer
	for _, r := range string(b) {
		if r < 0x80 || !visible.Needs(string(r)) {
			out.WriteRune(r)
			continue
		}
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, hi, lo)
			continue
		}
		fmt.Fprintf(&out, `\u%04x`, r)
	}
	return out.Bytes()
}

// withDaemon dials the daemon and runs f on the connection, with a
// context that ends on SIGINT or SIGTERM.
func withDaemon(f func(ctx context.Context, c *client.Client) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	c, err := dial(ctx)
	if err != nil {
		return err // says what failed and what to do
	}
	defer c.Close()
	return f(ctx, c)
}

// callOnce dials the daemon, makes one call and decodes its result.
func callOnce(method string, params, v any) error {
	return withDaemon(func(ctx context.Context, c *client.Client) error {
		return call(ctx, c, method, params, v)
	})
}

// call makes one call on c and decodes its result; a Corral error comes
// back as its sentence followed by its kind.
func call(ctx context.Context, c *client.Client, method string, params, v any) error {
	// A call that needs the owner's approval waits for it: say so on a
	// terminal rather than sit silent for minutes.
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		waiting := time.AfterFunc(2*time.Second, func() {
			fmt.Fprintln(os.Stderr, "corral: waiting for the answer (the owner may have been asked to approve this)…")
		})
		defer waiting.Stop()
	}
	if err := c.CallInto(ctx, method, params, v); err != nil {
		var re *client.Error
		if errors.As(err, &re) && re.Kind() != "" {
			return fmt.Errorf("%s (%s)", visible.Text(re.Message), re.Kind())
		}
		return err
	}
	return nil
}

func runLink(args []string) error {
	fs := flag.NewFlagSet("link", flag.ContinueOnError)
	user := fs.String("user", "", "the user whose folder holds PATH: a user id, companion or default")
	expires := fs.String("expires", "", "how long the link works, e.g. 1h or 7d (default: [links] expiry)")
	// Accept flags after PATH too: corral link output/r.md --user alice.
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *user == "" {
		return errors.New("usage: corral link PATH --user ID [--expires 1h]")
	}
	path := pos[0]
	params := wire.LinkArgs{Path: path, Context: &wire.Context{UserID: *user}}
	if *expires != "" {
		params.ExpiresIn, _ = json.Marshal(*expires)
	}
	return withDaemon(func(ctx context.Context, c *client.Client) error {
		// An unknown user id would silently mean the "default" scope
		// (docs/protocol.md section 4): say so instead of "not found".
		var info wire.SessionInfo
		if err := call(ctx, c, "session.info", nil, &info); err != nil {
			return err
		}
		if len(info.Scopes) > 0 && !slices.Contains(info.Scopes, *user) {
			return fmt.Errorf("there is no user %q; --user takes one of: %s", *user, strings.Join(info.Scopes, ", "))
		}
		var res wire.LinkResult
		if err := call(ctx, c, "link.create", params, &res); err != nil {
			if *expires != "" && strings.Contains(err.Error(), "expires_in") {
				return errors.New(strings.Replace(err.Error(), "expires_in", "--expires", 1))
			}
			return err
		}
		fmt.Println(res.URL)
		return nil
	})
}

func runLinks(args []string) error {
	if len(args) != 1 || args[0] != "rotate" {
		return errors.New("usage: corral links rotate")
	}
	var res wire.Rotated
	if err := callOnce("links.rotate", nil, &res); err != nil {
		return err
	}
	fmt.Println("corral: new link key; every earlier link has stopped working")
	return nil
}

func runOpen(args []string) error {
	fs := flag.NewFlagSet("open", flag.ContinueOnError)
	printOnly := fs.Bool("print", false, "print the URL instead of opening a browser")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var res wire.LoginResult
	if err := callOnce("session.login", nil, &res); err != nil {
		return err
	}
	if *printOnly {
		fmt.Println(res.URL)
		return nil
	}
	if err := openBrowser(res.URL); err != nil {
		fmt.Println(res.URL)
		return fmt.Errorf("could not start a browser (%v); open the URL above yourself", err)
	}
	return nil
}

// openBrowser opens url in the desktop's default browser, and reports
// failure when there is no desktop or the opener says it failed.
func openBrowser(url string) error {
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return errors.New("there is no display")
	}
	p, err := exec.LookPath("xdg-open")
	if err != nil {
		return errors.New("xdg-open is not installed")
	}
	cmd := exec.Command(p, url)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("xdg-open: %v", err)
		}
		return nil
	case <-time.After(5 * time.Second):
		return nil // still busy handing the URL over: a browser is there
	}
}

// parseInterleaved parses args with fs, accepting flags after positional
// arguments as well as before ("corral link PATH --user ID"), and returns
// the positional arguments in order.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
}
