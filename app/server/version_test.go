// SPDX-License-Identifier: Apache-2.0

package server

import "testing"

// testVersion is the version every harness's Corral reports.
const testVersion = "0.1.0+git20261127120000.abcdef0"

// TestSessionInfoVersion: session.info names Corral's version, as
// `corral --version` does, for the dashboard's About line.
func TestSessionInfoVersion(t *testing.T) {
	t.Parallel()
	h := start(t, "")
	info := rpcCall[sessionInfo](t, h.dial(ownerToken), "session.info", nil)
	if info.Version != testVersion {
		t.Errorf("session.info version = %q, want %q", info.Version, testVersion)
	}
}
