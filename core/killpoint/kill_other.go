//go:build !unix

package killpoint

import "os"

// killSelf ends this process at once, as SIGKILL does on Unix.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	os.Exit(137)
}
