package server

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkNetworkDownload compares a 10 MiB HTTP download by curl inside
// a command, through the sandbox's namespace and Corral's egress proxy,
// with the same curl downloading the same file directly from this
// machine's namespace, in one run. Both go to the test host in its own
// network namespace over a veth pair. curl's own time_total is measured,
// so the sandbox's start-up is not counted. Goal: proxy_MBps ≥ 0.8 ×
// direct_MBps.
func BenchmarkNetworkDownload(b *testing.B) {
	w := newNetWorld(b, "")
	url := "http://pypi.test/big"
	curl := `curl -s -o /dev/null -w "%{time_total}\n" ` + url
	// One answer for the whole run: a rule, as a real owner would give.
	done := w.run(m("command", curl, "allowed_domains", []string{"pypi.test"}))
	a := w.own.requested()
	rpcCall[any](b, w.own.c, "approval.respond", m("id", a.ID, "decision", "allow_always"))
	<-done
	const per = 5
	loop := strings.Repeat(curl+"; ", per)
	direct := exec.Command("sh", "-c", strings.Repeat(`curl -s -o /dev/null -w "%{time_total}\n" http://`+w.host.Addr.String()+"/big; ", per))
	var proxied, plain float64
	n := 0
	for b.Loop() {
		r := <-w.run(m("command", loop, "allowed_domains", []string{"pypi.test"}))
		proxied += sumSeconds(b, r.Stdout+r.Stderr)
		cmd := *direct
		out, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		plain += sumSeconds(b, string(out))
		n += per
	}
	mb := float64(len(w.host.Payload)) / (1 << 20)
	b.ReportMetric(mb*float64(n)/proxied, "proxy_MBps")
	b.ReportMetric(mb*float64(n)/plain, "direct_MBps")
	b.ReportMetric(plain/proxied, "ratio")
}

func sumSeconds(b *testing.B, out string) float64 {
	b.Helper()
	var s float64
	lines := strings.Fields(out)
	for _, l := range lines {
		v, err := strconv.ParseFloat(l, 64)
		if err != nil {
			b.Fatalf("curl printed %q", out)
		}
		s += v
	}
	if len(lines) == 0 {
		b.Fatal("curl printed nothing")
	}
	return s
}

// BenchmarkCommandRunTrueNetwork is BenchmarkCommandRunTrue for a command
// given network (allowed_domains): corral-netinit, the listener hand-over
// and the proxy's accept loop come on top. Goal: corral_ms ≤ 1.5 ×
// bwrap_ms, plain bwrap being the same isolation without network.
func BenchmarkCommandRunTrueNetwork(b *testing.B) {
	h := start(b, "")
	alice := h.dial(aliceKey)
	params := m("command", "true", "allowed_domains", []string{"pypi.test"})
	rpcCall[any](b, alice, "command.run", params) // creates playground, share link
	againstBwrap(b, alice, params, filepath.Join(h.base, "alice"), filepath.Join(h.base, "share"))
}
