package main

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPWithoutKeyRefuses: `corral mcp` with no CORRAL_KEY used to read
// owner.token and serve every tool as the owner. It must refuse, say how
// to connect an agent and exit non-zero; `corral mcp --owner` is the
// owner's explicit way in.
func TestMCPWithoutKeyRefuses(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	env := slices.DeleteFunc(slices.Clone(r.env), func(kv string) bool { return strings.HasPrefix(kv, "CORRAL_KEY=") })
	env = append(env, "CORRAL_URL="+r.url)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, "mcp")
	cmd.Env = env
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session_info","arguments":{}}}
`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("corral mcp without CORRAL_KEY: err %v, want a non-zero exit; stdout %s", err, out)
	}
	if strings.Contains(string(out), "owner") || len(out) != 0 {
		t.Errorf("corral mcp without CORRAL_KEY answered: %s", out)
	}
	for _, want := range []string{"Agents page", "Connect an app", "CORRAL_KEY=", "--owner"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the refusal does not say %q: %s", want, stderr.String())
		}
	}

	// --owner with a key set is ambiguous: refused too.
	both := exec.CommandContext(ctx, r.bin, "mcp", "--owner")
	both.Env = r.agentEnv()
	if out, err := both.CombinedOutput(); err == nil || !strings.Contains(string(out), "unset CORRAL_KEY") {
		t.Errorf("corral mcp --owner with CORRAL_KEY: err %v, %s", err, out)
	}

	// --owner: the owner, on purpose.
	owner := exec.Command(r.bin, "mcp", "--owner")
	owner.Env = env
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "owner", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: owner}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res := callMCP(t, cs, "session_info", map[string]any{}); res.IsError || !strings.Contains(textOf(t, res), "owner") {
		t.Errorf("corral mcp --owner: session_info %s", textOf(t, res))
	}
}
