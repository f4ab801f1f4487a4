// Package execboxtest builds the corral-netinit program for tests in any
// package that runs commands with network, the way `make build` does.
package execboxtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	once  sync.Once
	built string
	fail  error
)

// NetInit returns the path of a corral-netinit built from this source
// tree. It is built once per source version into the user's cache folder
// (~/.cache/corral-tests), so later test runs reuse it.
func NetInit(t testing.TB) string {
	t.Helper()
	once.Do(func() { built, fail = build() })
	if fail != nil {
		t.Fatalf("build corral-netinit: %v", fail)
	}
	return built
}

func build() (string, error) {
	_, here, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(here), "..", "..", "..", "app", "netinit")
	names, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil || len(names) == 0 {
		return "", fmt.Errorf("no sources in %s: %v", src, err)
	}
	h := sha256.New()
	for _, n := range names {
		text, err := os.ReadFile(n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(n), len(text))
		h.Write(text)
	}
	h.Write([]byte(runtime.Version()))
	sum := h.Sum(nil)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "corral-tests")
	out := filepath.Join(dir, "corral-netinit-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "corral-netinit-*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "build", "-buildvcs=false", "-trimpath", "-o", tmp.Name(), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{err, strings.TrimSpace(string(b))}
	}
	return out, os.Rename(tmp.Name(), out)
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }
