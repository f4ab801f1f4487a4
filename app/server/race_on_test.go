//go:build race

package server

// raceEnabled: the race detector slows every call several times over, so
// latency bounds widen under it.
const raceEnabled = true
