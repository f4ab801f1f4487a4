//go:build linux && !amd64

package execbox

// archModeArgs: arm64 has only the *at forms, already in modeArgs.
var archModeArgs []modeArg
