//go:build unix

package store

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"corral/core/audit"
)

// Benchmarks run only with -bench; ordinary `go test` never builds the big
// database.

func BenchmarkRecord(b *testing.B) {
	for _, par := range []int{1, 64} {
		b.Run(fmt.Sprintf("producers=%dxGOMAXPROCS", par), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			e := audit.Event{Client: "claude", User: "alice", Op: "file.read", Target: "share/docs/report.md",
				Decision: audit.Allow, DecidedBy: audit.ByScope, Bytes: 4096, DurationMs: 2}
			b.SetParallelism(par)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Record(b.Context(), e); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkInsert commits one batch of events the way the writer does,
// with a multi-row INSERT of the whole batch (now) beside the way before
// it (rows one by one when fewer than insertRows are left), in the same
// run. A busy daemon's batches are a few events each.
func BenchmarkInsert(b *testing.B) {
	oneByOne := func(left int) int {
		if left < insertRows {
			return 1
		}
		return insertRows
	}
	ways := []struct {
		name string
		rows func(int) int
	}{{"one_by_one", oneByOne}, {"one_statement", rowsPerStatement}}
	for _, n := range []int{1, 6, 20, 100} {
		for _, w := range ways {
			b.Run(fmt.Sprintf("batch=%d/%s", n, w.name), func(b *testing.B) {
				s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				s.rows = w.rows // the writer is idle: nothing is recorded meanwhile
				batch := make([]*recordReq, n)
				for i := range batch {
					batch[i] = &recordReq{ev: audit.Event{Client: "claude", User: "alice", Op: "file.read",
						Target: fmt.Sprintf("share/docs/report%d.md", i), Decision: audit.Allow, DecidedBy: audit.ByScope, Bytes: 4096, DurationMs: 2},
						done: make(chan result, 1)}
				}
				cpu := selfCPU()
				t := time.Now()
				for b.Loop() {
					for _, r := range batch {
						t = t.Add(time.Microsecond)
						r.ev.Time = t
					}
					s.commit(batch) // and kicks the checkpointer, as the writer does
					for _, r := range batch {
						if res := <-r.done; res.err != nil {
							b.Fatal(res.err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N*n), "µs/event")
				b.ReportMetric(float64((selfCPU()-cpu).Nanoseconds())/1e3/float64(b.N*n), "cpu_µs/event")
			})
		}
	}
}

// The 1M-event database is cached in os.TempDir under a name carrying a
// hash of the migrations and the generator's version, so later runs skip
// building and a changed schema builds afresh.
const (
	benchEvents      = 1_000_000
	benchDataVersion = 1
)

var (
	benchEnd  = time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)
	benchSpan = 30 * 24 * time.Hour

	benchOnce sync.Once
	benchPath string
	benchErr  error
)

func bench1M(b *testing.B) *Store {
	b.Helper()
	benchOnce.Do(func() {
		benchPath = filepath.Join(os.TempDir(),
			fmt.Sprintf("corral-store-bench-1m-%s-d%d.db", schemaHash(), benchDataVersion))
		if _, err := os.Stat(benchPath); err == nil {
			return
		}
		// Caches of earlier schemas are ~200 MB each: remove them.
		old, _ := filepath.Glob(filepath.Join(os.TempDir(), "corral-store-bench-1m-*.db"))
		for _, p := range old {
			os.Remove(p)
		}
		start := time.Now()
		benchErr = buildBenchDB(benchPath)
		b.Logf("built %s in %v", benchPath, time.Since(start).Round(time.Millisecond))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	s, err := Open(benchPath, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func schemaHash() string {
	h := sha256.New()
	ms, _ := migrations()
	for _, m := range ms {
		io.WriteString(h, m.sql)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// buildBenchDB writes benchEvents varied events over benchSpan, times
// following ids with a little jitter as they do when recorded live, in one
// transaction, then renames the file into place.
func buildBenchDB(path string) error {
	tmp := path + ".building"
	os.Remove(tmp)
	s, err := Open(tmp, Options{}) // creates the schema
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	db, err := sql.Open("sqlite3", dsn(tmp, nil))
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.Prepare(insertSQL)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(weighted []string) string { return weighted[rng.IntN(len(weighted))] }
	clients := []string{"claude", "claude", "claude", "claude", "codex", "codex", "codex", "cursor", "cursor", "phone", "aider", "zed", "goose", "ci-bot"}
	users := []string{"default", "default", "default", "alice", "alice", "bob", "carol", "dave"}
	ops := []string{"file.read", "file.read", "file.read", "file.read", "file.stat", "file.stat", "folder.list", "folder.list",
		"file.grep", "file.find", "file.write", "file.write", "file.edit", "command.run", "command.run",
		"file.delete", "file.move", "link.create", "result.save", "files.out"}
	step := benchSpan / benchEvents
	t := benchEnd.Add(-benchSpan)
	for i := range benchEvents {
		t = t.Add(step)
		e := audit.Event{
			Time:       t.Add(time.Duration(rng.IntN(4000)-2000) * time.Millisecond),
			Client:     pick(clients),
			User:       pick(users),
			Op:         pick(ops),
			Target:     fmt.Sprintf("share/projects/p%d/src/file%d.go", rng.IntN(50), rng.IntN(2000)),
			Decision:   audit.Allow,
			DecidedBy:  audit.ByScope,
			Bytes:      rng.Int64N(1 << 20),
			DurationMs: rng.Int64N(500),
		}
		switch r := rng.IntN(100); {
		case r < 7:
			e.Decision, e.DecidedBy, e.Detail = audit.Deny, audit.ByRule, fmt.Sprintf("denied by rule r%d", rng.IntN(40))
		case r < 10:
			e.Decision, e.Error = audit.Error, "no such file or directory"
		}
		if e.Op == "command.run" {
			e.Target, e.Detail = "playground", fmt.Sprintf("go test ./pkg%d/...", rng.IntN(30))
		}
		if _, err := stmt.Exec(e.Time.UnixNano(), e.Client, e.User, e.Op, e.Target, string(e.Decision),
			string(e.DecidedBy), e.Detail, e.Bytes, e.DurationMs, e.Error, "", "", "", ""); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if _, err := db.Exec("PRAGMA analysis_limit = 1000; ANALYZE; PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func reportMs(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/op")
}

func BenchmarkQuery1M(b *testing.B) {
	s := bench1M(b)
	day := func(d int) time.Time { return benchEnd.Add(-benchSpan).AddDate(0, 0, d) }
	cases := []struct {
		name string
		f    audit.Filter
	}{
		{"unfiltered", audit.Filter{}},
		{"client", audit.Filter{Client: "zed"}},
		{"user", audit.Filter{User: "carol"}},
		{"op", audit.Filter{Op: "link.create"}},
		{"decision", audit.Filter{Decision: audit.Error}},
		{"op+decision", audit.Filter{Op: "file.write", Decision: audit.Deny}},
		{"time_range_day", audit.Filter{Since: day(10), Until: day(11)}},
		{"time_range_last_day", audit.Filter{Since: day(29)}},
		{"time_range_wide_old", audit.Filter{Since: day(2), Until: day(20)}},
		{"client+time_range_day", audit.Filter{Client: "zed", Since: day(10), Until: day(11)}},
		{"text", audit.Filter{Text: "p7/src/file1"}},
		{"text+time_range_day", audit.Filter{Text: "pkg3/", Since: day(10), Until: day(11)}},
		{"text_rare_full_scan", audit.Filter{Text: "no event has this"}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				p, err := s.Query(b.Context(), tc.f)
				if err != nil {
					b.Fatal(err)
				}
				if tc.name != "text_rare_full_scan" && len(p.Events) != 100 {
					b.Fatalf("%d events, want a full page", len(p.Events))
				}
			}
			reportMs(b)
		})
	}
	b.Run("client_second_page", func(b *testing.B) {
		f := audit.Filter{Client: "zed"}
		p, err := s.Query(b.Context(), f)
		if err != nil {
			b.Fatal(err)
		}
		f.Cursor = p.NextCursor
		for b.Loop() {
			if p, err := s.Query(b.Context(), f); err != nil || len(p.Events) != 100 {
				b.Fatalf("%d events, %v", len(p.Events), err)
			}
		}
		reportMs(b)
	})
}

func BenchmarkStats1M(b *testing.B) {
	s := bench1M(b)
	cases := []struct {
		name   string
		f      audit.Filter
		bucket time.Duration
	}{
		{"days_all_30_days", audit.Filter{Since: benchEnd.AddDate(0, 0, -30)}, 24 * time.Hour},
		{"days_last_7_days", audit.Filter{Since: benchEnd.AddDate(0, 0, -7)}, 24 * time.Hour},
		{"hours_last_48_hours", audit.Filter{Since: benchEnd.Add(-48 * time.Hour)}, time.Hour},
		{"days_denied_30_days", audit.Filter{Decision: audit.Deny}, 24 * time.Hour},
		{"days_client_30_days", audit.Filter{Client: "zed"}, 24 * time.Hour},
		{"days_op_last_7_days", audit.Filter{Op: "command.run", Since: benchEnd.AddDate(0, 0, -7)}, 24 * time.Hour},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Stats(b.Context(), tc.f, tc.bucket); err != nil {
					b.Fatal(err)
				}
			}
			reportMs(b)
		})
	}
}

// selfCPU is the CPU time this process has used: on a shared machine it
// varies far less than the time a benchmark takes.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRecordSequential is one agent's calls one after another, as
// the daemon sees them: each waits for its own commit, so every call is a
// transaction of its own. "read" is one event per call; "write" is the
// journal's two commits (the event recorded pending with its change,
// then completed), as a file.write makes. The log already holds events
// (logSize), so index pages are not all new.
func BenchmarkRecordSequential(b *testing.B) {
	const logSize = 20000
	for _, kind := range []string{"read", "write"} {
		b.Run(kind, func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := b.Context()
			clients := []string{"claude", "codex", "gemini", "phone"}
			ops := []string{"file.read", "file.write", "folder.list", "command.run", "file.stat"}
			mk := func(i int) audit.Event {
				return audit.Event{Client: clients[i%len(clients)], User: "alice", Op: ops[i%len(ops)],
					Target: fmt.Sprintf("share/docs/report%d.md", i%500), Decision: audit.Allow, DecidedBy: audit.ByScope, Bytes: 4096, DurationMs: 2}
			}
			recordMany(b, s, logSize, mk)
			cpu := selfCPU()
			i := 0
			for b.Loop() {
				i++
				e := mk(i)
				if kind == "read" {
					if _, err := s.Record(ctx, e); err != nil {
						b.Fatal(err)
					}
					continue
				}
				e.Op, e.Detail = "file.write", "4096 bytes "+audit.Pending
				e.Changes = []audit.Change{{Path: e.Target, Kind: audit.Modified, SizeBefore: 4000, SizeAfter: 4096,
					Version: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", After: "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752", Mode: 0o644}}
				id, err := s.Record(ctx, e)
				if err != nil {
					b.Fatal(err)
				}
				e.ID, e.Detail = id, "4096 bytes"
				if err := s.Complete(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((selfCPU()-cpu).Nanoseconds())/1e3/float64(b.N), "cpu_µs/call")
		})
	}
}
