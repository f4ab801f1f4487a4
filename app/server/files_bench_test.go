package server

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFilesOutVsNginx measures GET /files/out on a 4 KiB and a 1 MiB
// file with wrk, next to nginx (sendfile on) serving the same files, in one
// run. Compare corral_req/s with nginx_req/s (goals: ≥ 0.7× at 4 KiB,
// ≥ 0.9× at 1 MiB). gobare_ratio is Go's own http.FileServerFS over an
// os.Root on the same files (no token, policy or audit) against nginx: the
// ceiling of serving files with net/http on this machine. Each
// sub-benchmark runs wrk for WRK_DURATION (default 5s) per server.
func BenchmarkFilesOutVsNginx(b *testing.B) {
	for _, tool := range []string{"wrk", "nginx"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := os.Stat("/usr/sbin/" + tool); err != nil {
				b.Fatalf("%s is not installed (packaging/deps.sh installs it)", tool)
			}
		}
	}
	h := start(b, "[links]\nmax_expiry = \"8760h\"\n")
	alice := h.dial(aliceKey)
	nginxRoot := b.TempDir()
	sizes := map[string]int{"4KiB": 4 << 10, "1MiB": 1 << 20}
	urls := map[string]string{}
	for name, n := range sizes {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte('a' + i%26)
		}
		os.WriteFile(filepath.Join(nginxRoot, name+".txt"), data, 0o644)
		if err := os.MkdirAll(filepath.Join(h.base, "alice", "output"), 0o700); err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(h.base, "alice", "output", name+".txt"), data, 0o644)
		var res map[string]string
		if err := alice.CallInto(b.Context(), "link.create", m("path", "output/"+name+".txt", "expires_in", "24h"), &res); err != nil {
			b.Fatal(err)
		}
		urls[name] = res["url"]
	}
	nginxURL, nginxCPU := startNginx(b, nginxRoot)
	// The Go standard library's own file server on the same files, with
	// no token, no policy and no audit: what net/http itself costs here.
	bareRoot, err := os.OpenRoot(nginxRoot)
	if err != nil {
		b.Fatal(err)
	}
	defer bareRoot.Close()
	bareLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	bare := &http.Server{Handler: http.FileServerFS(bareRoot.FS())}
	go bare.Serve(bareLn)
	defer bare.Close()
	bareURL := "http://" + bareLn.Addr().String()
	dur := 5 * time.Second
	if d := os.Getenv("WRK_DURATION"); d != "" {
		dur, _ = time.ParseDuration(d)
	}
	for _, name := range []string{"4KiB", "1MiB"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				c0 := nginxCPU()
				ng := wrk(b, nginxURL+"/"+name+".txt", dur)
				ngCPU := nginxCPU() - c0
				c0 = selfCPU()
				co := wrk(b, urls[name], dur)
				coCPU := selfCPU() - c0
				gb := wrk(b, bareURL+"/"+name+".txt", dur)
				b.ReportMetric(ng, "nginx_req/s")
				b.ReportMetric(co, "corral_req/s")
				b.ReportMetric(co/ng, "ratio")
				b.ReportMetric(gb/ng, "gobare_ratio")
				// Server CPU per request: steadier than req/s on a
				// machine wrk shares with the server.
				b.ReportMetric(float64(ngCPU.Microseconds())/(ng*dur.Seconds()), "nginx_cpu_µs/req")
				b.ReportMetric(float64(coCPU.Microseconds())/(co*dur.Seconds()), "corral_cpu_µs/req")
			}
		})
	}
}

func wrk(b *testing.B, url string, d time.Duration) float64 {
	b.Helper()
	out, err := exec.Command("wrk", "-t2", "-c32", "-d"+d.String(), "--latency", url).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "Non-2xx") {
		b.Fatalf("wrk saw errors:\n%s", out)
	}
	m := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		b.Fatalf("wrk output:\n%s", out)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// selfCPU is the CPU time this process (the test and the server it runs)
// has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is the CPU time the processes pids have used, from /proc.
func processCPU(pids []int) time.Duration {
	var ticks int64
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command name, which ends at the last ')'.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + s
		}
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ
}

// startNginx serves root on a free loopback port with sendfile on, and
// returns its URL and a function reporting the CPU time its master and
// workers have used.
func startNginx(b *testing.B, root string) (string, func() time.Duration) {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := b.TempDir()
	user := "" // as root, workers would drop to nobody and not read a 0700 temp dir
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	conf := fmt.Sprintf(`daemon off;
%[4]s
worker_processes 2;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s; uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
  server { listen %[2]s; root %[3]s; }
}
`, dir, addr, root, user)
	os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644)
	bin := "nginx"
	if _, err := exec.LookPath(bin); err != nil {
		bin = "/usr/sbin/nginx"
	}
	cmd := exec.Command(bin, "-c", filepath.Join(dir, "nginx.conf"), "-p", dir)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		// SIGTERM: nginx's master stops its workers (SIGKILL would orphan them).
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	cpu := func() time.Duration {
		pids := []int{cmd.Process.Pid}
		children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
		for _, f := range strings.Fields(string(children)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return processCPU(pids)
	}
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr, cpu
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("nginx did not start")
	return "", nil
}
