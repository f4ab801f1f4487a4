package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// nodeModules installs app/testdata/mcp-node's pinned npm packages once,
// into a cache folder keyed by the package.json's hash, and returns it.
func nodeModules(tb testing.TB) string {
	tb.Helper()
	return npmInstall(tb, "mcp-node", "mcp-inspector", "bench.mjs")
}

var npmMu sync.Mutex

// npmInstall installs app/testdata/<name>'s package.json (and files, copied
// beside it) once into ~/.cache/corral-tests/<name>-<hash of package.json>
// and returns that folder; node_modules/.bin/<marker> says it is complete.
func npmInstall(tb testing.TB, name, marker string, files ...string) string {
	tb.Helper()
	npmMu.Lock() // the tests run in parallel; two installs of one name would share its .tmp
	defer npmMu.Unlock()
	if testing.Short() {
		tb.Skip("-short: skipping the tests that drive Node MCP clients (they install npm packages)")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		tb.Fatal("npm is not installed (packaging/deps.sh installs nodejs and npm)")
	}
	pkg, err := os.ReadFile(filepath.Join("testdata", name, "package.json"))
	if err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256(pkg)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "corral-tests", name+"-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", marker)); err == nil {
		return dir
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		tb.Fatal(err)
	}
	for _, f := range append([]string{"package.json"}, files...) {
		b, _ := os.ReadFile(filepath.Join("testdata", name, f))
		os.WriteFile(filepath.Join(tmp, f), b, 0o644)
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("npm install: %v\n%s", err, out)
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// TestMCPInspectorCLI: a real third-party MCP client (the MCP Inspector's
// CLI) lists Corral's tools and calls file_read through `corral mcp`.
func TestMCPInspectorCLI(t *testing.T) {
	t.Parallel()
	node := nodeModules(t)
	r := startServe(t)
	inspector := filepath.Join(node, "node_modules", ".bin", "mcp-inspector")
	run := func(args ...string) string {
		t.Helper()
		full := append([]string{"--cli", r.bin, "mcp", "-e", "CORRAL_URL=" + r.url, "-e", "CORRAL_KEY=" + r.agentKey}, args...)
		cmd := exec.Command(inspector, full...)
		cmd.Env = append(r.env, "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// --strict: the Inspector's tool-schema portability lint reports
	// every finding in full (type unions, bare true, untyped schemas) and
	// fails on errors.
	out := run("--method", "tools/list", "--strict")
	if i := strings.Index(out, "Warning: tool"); i >= 0 || strings.Contains(out, "Error: tool") {
		t.Errorf("the Inspector's --strict lint: %s", out[max(i, 0):])
	}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.NewDecoder(strings.NewReader(out[strings.Index(out, "{"):])).Decode(&list); err != nil {
		t.Fatalf("tools/list output: %v\n%s", err, out)
	}
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"file_read", "file_write", "file_edit", "folder_list", "file_find", "file_grep", "file_delete", "file_move", "run_command", "save_result_page", "generate_link", "session_info", "apply_patch", "file_stat", "read_multiple_files"} {
		if !names[want] {
			t.Fatalf("tools: %v, no %s", names, want)
		}
	}
	run("--method", "tools/call", "--tool-name", "file_write", "--tool-arg", "path=hello.txt", "content=hi from node")
	out = run("--method", "tools/call", "--tool-name", "file_read", "--tool-arg", "path=hello.txt")
	if !strings.Contains(out, "hi from node") || strings.Contains(out, `"isError": true`) {
		t.Fatalf("file_read: %s", out)
	}
}

// BenchmarkMCPNodeFileRead: file_read of a 4 KiB file through `corral mcp`
// versus @modelcontextprotocol/server-filesystem's read_text_file, both
// driven by the same Node MCP client, sequentially and 32 in flight.
// Goal: corral ≥ 2× the reference in both.
func BenchmarkMCPNodeFileRead(b *testing.B) {
	node := nodeModules(b)
	r := startServeUnlimited(b)
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 64)
	refDir := b.TempDir()
	os.WriteFile(filepath.Join(refDir, "f.txt"), []byte(content), 0o644)
	// The default config's user is the login name; write the file through
	// Corral itself so it lands in that user's folder.
	c := exec.Command(r.bin, "call", "file.write", `{"path":"f.txt","content":"`+strings.ReplaceAll(content, "\n", `\n`)+`"}`)
	c.Env = r.agentEnv()
	if out, err := c.CombinedOutput(); err != nil {
		b.Fatalf("write: %v %s", err, out)
	}
	// The cached node folder is keyed by package.json; bench.mjs is
	// copied there under a name of its own content.
	script, err := os.ReadFile(filepath.Join("testdata", "mcp-node", "bench.mjs"))
	if err != nil {
		b.Fatal(err)
	}
	sum := sha256.Sum256(script)
	benchJS := filepath.Join(node, "bench-"+hex.EncodeToString(sum[:6])+".mjs")
	if err := os.WriteFile(benchJS, script, 0o644); err != nil {
		b.Fatal(err)
	}
	bench := func(env []string, args ...string) (seq, par float64) {
		cmd := exec.Command("node", append([]string{benchJS}, args...)...)
		cmd.Dir = node
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("bench.mjs %v: %v\n%s", args, err, out)
		}
		var res struct{ Sequential, Inflight32 float64 }
		if err := json.Unmarshal(out, &res); err != nil {
			b.Fatalf("bench.mjs output %q: %v", out, err)
		}
		return res.Sequential, res.Inflight32
	}
	// The ceiling of the Go SDK over streamable HTTP: the same bare
	// server, in this process.
	bare := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return bareFileServer(refDir) }, nil))
	defer bare.Close()
	for b.Loop() {
		cs, cp := bench(r.agentEnv(),
			"--tool", "file_read", "--arg", "path=f.txt", "--", r.bin, "mcp")
		rs, rp := bench(os.Environ(), "--tool", "read_text_file", "--arg", "path="+filepath.Join(refDir, "f.txt"), "--",
			filepath.Join(node, "node_modules", ".bin", "mcp-server-filesystem"), refDir)
		// The ceiling of the Go SDK over stdio: this test binary as an MCP
		// server whose file_read is os.ReadFile, with no daemon, no
		// policy and no audit behind it.
		gs, gp := bench(append(os.Environ(), sdkFileServerEnv+"="+refDir), "--tool", "file_read", "--arg", "path=f.txt", "--", os.Args[0])
		if old := os.Getenv(oldBinEnv); old != "" {
			// Another build's corral mcp against the same daemon, in the
			// same round: before and after a change, on the same load.
			os, op := bench(r.agentEnv(), "--tool", "file_read", "--arg", "path=f.txt", "--", old, "mcp")
			b.ReportMetric(os, "corral_old_seq/s")
			b.ReportMetric(op, "corral_old_32/s")
			b.ReportMetric(os/rs, "old_ratio_seq")
			b.ReportMetric(op/rp, "old_ratio_32")
		}
		hs, hp := bench(os.Environ(), "--tool", "file_read", "--arg", "path=f.txt", "--http", r.url+"/mcp", "--key", r.agentKey)
		bs, bp := bench(os.Environ(), "--tool", "file_read", "--arg", "path=f.txt", "--http", bare.URL)
		b.ReportMetric(cs, "corral_seq/s")
		b.ReportMetric(cp, "corral_32/s")
		b.ReportMetric(rs, "fsserver_seq/s")
		b.ReportMetric(rp, "fsserver_32/s")
		b.ReportMetric(gs, "gosdk_bare_seq/s")
		b.ReportMetric(gp, "gosdk_bare_32/s")
		b.ReportMetric(cs/rs, "ratio_seq")
		b.ReportMetric(cp/rp, "ratio_32")
		b.ReportMetric(hs, "corral_http_seq/s")
		b.ReportMetric(hp, "corral_http_32/s")
		b.ReportMetric(bs, "gosdk_http_seq/s")
		b.ReportMetric(bp, "gosdk_http_32/s")
		b.ReportMetric(hs/bs, "http_ratio_seq")
		b.ReportMetric(hp/bp, "http_ratio_32")
	}
}

// bareFileServer is an MCP server (Go SDK) with one tool, file_read, that
// reads the file from dir: no daemon, no policy and no audit.
func bareFileServer(dir string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "bare", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "file_read"}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Path string `json:"path"`
	}) (*sdk.CallToolResult, any, error) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.Base(in.Path)))
		if err != nil {
			return nil, nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil, nil
	})
	return s
}

// oldBinEnv names another build of corral whose `corral mcp`
// BenchmarkMCPNodeFileRead measures too, against the same daemon.
const oldBinEnv = "CORRAL_BENCH_OLD_BIN"

// sdkFileServerEnv, set to a folder, makes the test binary an MCP server
// over stdio (Go SDK, `corral mcp`'s GC setting) with one tool, file_read,
// that reads the file from that folder: the Go SDK's ceiling for
// BenchmarkMCPNodeFileRead.
const sdkFileServerEnv = "CORRAL_TEST_SDK_FILE_SERVER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(sdkFileServerEnv); dir != "" {
		tuneGC()
		s := bareFileServer(dir)
		if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The tests here mostly wait on other processes (the daemon, Xvfb,
	// Node clients), so four run at once even on two cores, unless
	// -test.parallel says otherwise.
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "4")
	}
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin)) // corralBinary's folder
	}
	os.Exit(code)
}
