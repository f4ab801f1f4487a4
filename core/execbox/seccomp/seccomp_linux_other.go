//go:build linux && !amd64

package seccomp

// archModeArgs: arm64 has only the *at forms, already in modeArgs.
var archModeArgs []modeArg
