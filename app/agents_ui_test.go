package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"corral/app/client"
	"corral/app/testkit/chromium"
)

// chrome is one headless Chromium tab for the app-level browser test.
type chrome struct {
	t   *testing.T
	ctx context.Context
}

func newChrome(t *testing.T) *chrome {
	t.Helper()
	path := chromium.Path(t)
	ctx, stop, err := chromium.Start(path, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	if err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	t.Cleanup(stop)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return &chrome{t: t, ctx: ctx}
}

func (c *chrome) do(actions ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	chromium.Do(c.t, c.ctx, func() { c.shot("failed") }, actions...)
}

func evalJS[T any](c *chrome, expr string) T {
	c.t.Helper()
	return chromium.Eval[T](c.t, c.ctx, func() { c.shot("failed") }, expr)
}

// wait polls a JavaScript condition until it holds, within 30 s.
func (c *chrome) wait(cond string) {
	c.t.Helper()
	err := chromium.Wait(c.ctx, cond, 30*time.Second)
	if err == nil {
		return
	}
	c.shot("failed")
	body := evalJS[string](c, `document.body.innerText.slice(0, 1500)`)
	c.t.Fatalf("waiting for %s: %v\npage:\n%s", cond, err, body)
}

// click clicks sel as a mouse would, after bringing it to the middle of
// the viewport (the sticky top bar would otherwise take a click meant for
// something scrolled under it).
func (c *chrome) click(sel string) {
	c.t.Helper()
	c.do(chromedp.WaitVisible(chromedp.CSS(sel)))
	evalJS[chromedp.Void](c, fmt.Sprintf(`document.querySelector(%q).scrollIntoView({block: 'center'})`, sel))
	c.do(chromedp.Click(chromedp.CSS(sel)))
}

func (c *chrome) typeIn(sel, text string) {
	c.t.Helper()
	c.do(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), text))
}

// shot saves the viewport as name.png in /tmp/corral-shots, the test's temp dir
// and $CORRAL_SHOTS when set.
func (c *chrome) shot(name string) {
	chromium.Shot(c.t, c.ctx, name, "/tmp/corral-shots", c.t.TempDir())
}

// TestConnectAgentInBrowser is issue 18's check end to end: in real
// Chromium against the real daemon, add a person and an agent, copy the
// agent's Claude Desktop snippet, write it into a Claude Desktop config
// that already holds another server (which survives, with a backup);
// then an MCP client started with exactly that config reads a file in
// the person's folder, the dialog's Test connection sees the call, and
// after Remove the agent's next call is refused with 401.
func TestConnectAgentInBrowser(t *testing.T) {
	t.Parallel()
	b := newChrome(t)
	bin := corralBinary(t)
	corralHome, home := t.TempDir(), t.TempDir()
	// The owner's Claude Desktop config, with another server already in it.
	claudeDir := filepath.Join(home, ".config", "Claude")
	os.MkdirAll(claudeDir, 0o700)
	cfgPath := filepath.Join(claudeDir, "claude_desktop_config.json")
	original := `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "weather": {
      "command": "/opt/weather/bin/weather-mcp",
      "args": ["--units", "metric"]
    }
  }
}
`
	if err := os.WriteFile(cfgPath, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}

	var stderr strings.Builder
	cmd, stdout := serveCmd(t, bin, "127.0.0.1:0", append(os.Environ(), "CORRAL_HOME="+corralHome, "HOME="+home), &stderr)
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	var login, url string
	for lines.Scan() {
		l := lines.Text()
		if m := regexp.MustCompile(`^corral: listening on (http://\S+)$`).FindStringSubmatch(l); m != nil {
			url = m[1]
		}
		if u, ok := strings.CutPrefix(l, "corral: dashboard "); ok {
			login = u
			break
		}
	}
	if login == "" || url == "" {
		t.Fatalf("no login line; stderr:\n%s", stderr.String())
	}
	go io.Copy(io.Discard, stdout)

	// First run: the banner and the guide.
	b.do(chromedp.Navigate(login))
	b.wait(`document.querySelector('#conn')?.dataset.state === 'open' && document.body.dataset.agentsReady`)
	b.wait(`!document.querySelector('#first-run').hidden`)
	b.shot("first-run-banner")
	b.click("#first-run-connect")
	b.wait(`!document.querySelector('#view-agents').hidden && !document.querySelector('#agents-guide').hidden && !document.querySelector('#agent-form').hidden`)
	b.click("#agent-cancel")
	b.shot("first-run-agents")

	// A person, then an agent working in her folder.
	b.typeIn("#person-name", "Dana")
	b.click(`#person-form button[type=submit]`)
	b.wait(`document.querySelector('#person-list li[data-id="dana"]') && [...document.querySelectorAll('#agent-user option')].some(o => o.value === 'dana')`)
	b.click("#agent-add")
	b.typeIn("#agent-name", "dana-desktop")
	evalJS[chromedp.Void](b, `(() => { const s = document.querySelector('#agent-user'); s.value = 'dana'; s.dispatchEvent(new Event('change')); })()`)
	// It may act for the companion's folder too: picked in the form.
	evalJS[chromedp.Void](b, `(() => { const s = document.querySelector('#agent-actfor'); s.value = 'some'; s.dispatchEvent(new Event('change')); })()`)
	b.click(`#agent-actfor-list input[value="companion"]`)
	b.click("#agent-create")
	b.wait(`document.querySelector('#connect').open && document.querySelector('pre.snippet[data-app="claude-desktop"]')`)
	b.shot("connect-dialog")

	// Copy the Claude Desktop snippet, as the owner would.
	origin := strings.TrimSuffix(url, "/")
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: origin,
		}); err != nil {
			t.Fatal(err)
		}
	}
	b.click(`#connect-body button[data-act="copy"]`)
	shown := evalJS[string](b, `document.querySelector('pre.snippet[data-app="claude-desktop"]').textContent`)
	copied := evalJS[string](b, `navigator.clipboard.readText()`)
	if copied != shown {
		t.Fatalf("clipboard holds %q, the dialog shows %q", copied, shown)
	}
	var snippet struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(copied), &snippet); err != nil {
		t.Fatalf("snippet: %v\n%s", err, copied)
	}
	// The command is a stable path: ~/.local/bin/corral, linked to the
	// program (as `make run` links it), never the build folder.
	link := filepath.Join(home, ".local", "bin", "corral")
	if s := snippet.MCPServers["corral"]; s.Command != link || s.Env["CORRAL_URL"] != url || !strings.HasPrefix(s.Env["CORRAL_KEY"], "corral_") {
		t.Fatalf("snippet: %+v", s)
	}
	if to, err := os.Readlink(link); err != nil || to != bin {
		t.Fatalf("%s leads to %q (%v), want %s", link, to, err, bin)
	}

	// Write it into the config file: preview, diff, write.
	b.click(`#connect-body button[data-act="preview"]`)
	b.wait(`document.querySelector('#connect-body pre.diff')`)
	diff := evalJS[string](b, `document.querySelector('#connect-body pre.diff').textContent`)
	if !strings.Contains(diff, `+    "corral": {`) || strings.Contains(diff, `-    "weather"`) {
		t.Errorf("diff:\n%s", diff)
	}
	b.shot("connect-diff")
	b.click(`#connect-body button[data-act="write"]`)
	b.wait(`document.querySelector('#connect-body [data-written]')`)
	// The long paths of the success notice wrap inside it.
	if w := evalJS[string](b, `(() => { const n = document.querySelector('#connect-body [data-written]'); return n.scrollWidth > n.clientWidth + 1 ? n.scrollWidth + ' > ' + n.clientWidth : ''; })()`); w != "" {
		t.Errorf("the Written notice runs out of its box: %s px", w)
	}
	b.shot("connect-written")

	written, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var merged struct {
		GlobalShortcut string `json:"globalShortcut"`
		MCPServers     map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(written, &merged); err != nil {
		t.Fatalf("written config: %v\n%s", err, written)
	}
	if merged.GlobalShortcut != "Ctrl+Space" || merged.MCPServers["weather"].Command != "/opt/weather/bin/weather-mcp" || len(merged.MCPServers["weather"].Args) != 2 {
		t.Errorf("the other server or setting did not survive:\n%s", written)
	}
	backups, _ := filepath.Glob(cfgPath + ".corral-backup-*")
	if len(backups) != 1 {
		t.Fatalf("backups: %v", backups)
	}
	if bk, _ := os.ReadFile(backups[0]); string(bk) != original {
		t.Errorf("backup differs from the original:\n%s", bk)
	}
	if !strings.HasPrefix(string(written), strings.TrimSuffix(original, "    }\n  }\n}\n")) {
		t.Errorf("the weather server's lines changed:\n%s", written)
	}
	// Success reads as success: the allow colours, not the warning's.
	if got := evalJS[[]string](b, `(() => { const el = document.querySelector('#connect-body [data-written]'), root = getComputedStyle(document.documentElement);
		const probe = document.createElement('div'); probe.style.color = root.getPropertyValue('--allow-soft'); document.body.append(probe);
		const want = getComputedStyle(probe).color; probe.remove(); return [getComputedStyle(el).backgroundColor, want]; })()`); got[0] != got[1] {
		t.Errorf("the written message's background %s, want the allow colour %s", got[0], got[1])
	}

	// Cursor without ~/.cursor/mcp.json: Write creates the file and its folder.
	b.click(`#connect-body .app-picker button[data-app="cursor"]`)
	b.wait(`document.querySelector('pre.snippet[data-app="cursor"]')`)
	if got := evalJS[string](b, `document.querySelector('#connect-body .app-pane').textContent`); !strings.Contains(got, "Write creates it") {
		t.Errorf("cursor's pane without its file: %q", got)
	}
	b.click(`#connect-body button[data-act="preview"]`)
	b.wait(`document.querySelector('#connect-body pre.diff')`)
	if got := evalJS[string](b, `document.querySelector('#connect-body .plan').textContent`); !strings.Contains(got, "will create") {
		t.Errorf("cursor's preview: %q", got)
	}
	b.click(`#connect-body button[data-act="write"]`)
	b.wait(`document.querySelector('#connect-body [data-written]')`)
	b.shot("misc-connect-written-cursor-created-1280")
	cursorFile := filepath.Join(home, ".cursor", "mcp.json")
	if got, err := os.ReadFile(cursorFile); err != nil || !strings.Contains(string(got), `"command": "`+link+`"`) {
		t.Errorf("%s after Write: %v\n%s", cursorFile, err, got)
	}
	if got := evalJS[string](b, `document.querySelector('#connect-body [data-written]').textContent`); !strings.HasPrefix(got, "Created "+cursorFile) {
		t.Errorf("written message %q", got)
	}
	if got := evalJS[string](b, `document.querySelector('#connect-body p.where').textContent`); !strings.Contains(got, "it is on this computer") {
		t.Errorf("after Write the pane still says %q", got)
	}

	// A file in Dana's folder, then an MCP client started with exactly
	// what the config file now says.
	danaDir := filepath.Join(corralHome, "sandbox", "dana")
	if err := os.WriteFile(filepath.Join(danaDir, "hello.txt"), []byte("hello from dana's folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Test connection listens to the live audit stream; count any
	// audit.query about the agent the page sends meanwhile (polling).
	evalJS[chromedp.Void](b, `(() => { const send = WebSocket.prototype.send; window.agentQueries = 0;
		WebSocket.prototype.send = function (d) { if (String(d).includes('"audit.query"') && String(d).includes('dana-desktop')) window.agentQueries++; return send.call(this, d); }; })()`)
	b.click("#connect-test")
	b.wait(`document.querySelector('#connect-test-result').dataset.listening === '1'`)
	entry := merged.MCPServers["corral"]
	mcpCmd := exec.Command(entry.Command, entry.Args...)
	mcpCmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	for k, v := range entry.Env {
		mcpCmd.Env = append(mcpCmd.Env, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "claude-desktop-stand-in", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: mcpCmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_read", Arguments: map[string]any{"path": "hello.txt"}})
	if err != nil || res.IsError || textOf(t, res) != "hello from dana's folder" {
		t.Fatalf("file_read: %v %+v", err, res)
	}
	b.wait(`document.querySelector('#connect-test-result').dataset.arrived === '1'`)
	if got := evalJS[string](b, `document.querySelector('#connect-test-result').textContent`); !strings.Contains(got, "file.read") {
		t.Errorf("test connection says %q", got)
	}
	if n := evalJS[int](b, `window.agentQueries`); n != 0 {
		t.Errorf("Test connection polled audit.query %d times instead of listening to the stream", n)
	}
	b.shot("connect-test-arrived")

	// Remove the agent from the Agents page: its next call is refused.
	b.click("#connect-close")
	b.wait(`!document.querySelector('#connect').open`)
	b.shot("agents-page")
	row := `#agent-list li[data-name="dana-desktop"]`
	if got := evalJS[string](b, `document.querySelector('`+row+`').textContent`); !strings.Contains(got, "may act for companion") {
		t.Errorf("the row after adding with act_for companion: %q", got)
	}
	// The unused agent of the config file is listed after the one added
	// here, its Connect not the green one; its dialog says where its key is.
	if got := evalJS[[]string](b, `[...document.querySelectorAll('#agent-list > li')].map(li => li.dataset.name + (li.querySelector('[data-act="connect"]').classList.contains('primary') ? ' primary' : ''))`); len(got) != 2 || got[0] != "dana-desktop primary" || got[1] != "local-agent" {
		t.Errorf("agent rows %q, want dana-desktop (primary Connect) first, then local-agent", got)
	}
	b.click(`#agent-list li[data-name="local-agent"] button[data-act="connect"]`)
	b.wait(`document.querySelector('#connect').open && document.querySelector('#connect-body .config-key')`)
	if got := evalJS[string](b, `document.querySelector('#connect-body .config-key').textContent`); !strings.Contains(got, filepath.Join(corralHome, "config.toml")) || !strings.Contains(got, "[[clients]]") {
		t.Errorf("the config agent's connect notice: %q", got)
	}
	if n := evalJS[int](b, `[...document.querySelectorAll('#connect-body button')].filter(x => x.textContent === 'Make a new key').length`); n != 0 {
		t.Error("the config agent's dialog offers a new key")
	}
	b.shot("misc-connect-config-agent-1280")
	b.click("#connect-close")
	b.wait(`!document.querySelector('#connect').open`)
	// The config file's agent is read-only: no Edit, and it says so.
	if got := evalJS[string](b, `(() => { const li = document.querySelector('#agent-list li[data-name="local-agent"]'); return li ? li.textContent + (li.querySelector('[data-act="edit"]') ? ' EDIT' : '') : 'missing'; })()`); !strings.Contains(got, "read-only") || strings.HasSuffix(got, " EDIT") {
		t.Errorf("the config agent's row: %q", got)
	}
	// Edit: everyone, commands need approval, no network.
	b.click(row + ` button[data-act="edit"]`)
	b.wait(`!document.querySelector('#agent-form').hidden && document.querySelector('#agent-name').disabled && document.querySelector('#agent-actfor').value === 'some' && document.querySelector('#agent-actfor-list input[value="companion"]').checked`)
	evalJS[chromedp.Void](b, `(() => { for (const [id, v] of [['#agent-actfor', 'everyone'], ['#agent-network', 'off']]) { const s = document.querySelector(id); s.value = v; s.dispatchEvent(new Event('change')); } })()`)
	evalJS[chromedp.Void](b, `(() => { const c = document.querySelector('#agent-ask'); c.checked = true; c.dispatchEvent(new Event('change')); })()`) // on whatever its level set
	b.shot("agent-edit")
	b.click("#agent-save")
	// Not /no network/: the row's day summary says "no network" before the
	// edit ("Nothing today: … no network …"), so that wait passed at once.
	b.wait(`document.querySelector('#agent-form').hidden && /may act for everyone/.test(document.querySelector('` + row + `')?.textContent)`)
	if got := evalJS[string](b, `document.querySelector('`+row+`').textContent`); !strings.Contains(got, "may act for everyone") || !strings.Contains(got, "commands need approval") {
		t.Errorf("the row after Edit: %q", got)
	}
	// What the daemon now holds comes back in the form.
	b.click(row + ` button[data-act="edit"]`)
	b.wait(`!document.querySelector('#agent-form').hidden`)
	if got := evalJS[string](b, `[document.querySelector('#agent-actfor').value, document.querySelector('#agent-network').value, document.querySelector('#agent-ask').checked, document.querySelector('#agent-user').value].join(' ')`); got != "everyone off true dana" {
		t.Errorf("the Edit form reopened holds %q", got)
	}
	b.click("#agent-cancel")
	rm := `#agent-list li[data-name="dana-desktop"] button[data-act="remove"]`
	b.click(rm)
	b.click(rm) // the second click confirms
	b.wait(`!document.querySelector('#agent-list li[data-name="dana-desktop"]')`)
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_read", Arguments: map[string]any{"path": "hello.txt"}})
	if err == nil && !res.IsError {
		t.Fatalf("a removed agent's call succeeded: %s", textOf(t, res))
	}
	if err == nil {
		t.Logf("removed agent's MCP call: %s", textOf(t, res))
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	_, derr := client.Dial(dctx, url, entry.Env["CORRAL_KEY"])
	var de *client.DialError
	if derr == nil || !asDialError(derr, &de) || de.Status != 401 {
		t.Errorf("removed agent's dial: %v", derr)
	}
}

func asDialError(err error, out **client.DialError) bool {
	de, ok := err.(*client.DialError)
	if ok {
		*out = de
	}
	return ok
}
