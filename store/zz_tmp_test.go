package store

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func BenchmarkZZRaw(b *testing.B) {
	schema, _ := migrationFiles.ReadFile("migrations/001_audit.sql")
	variants := map[string]string{
		"full":   string(schema),
		"nodecision": strings.Replace(string(schema), "CREATE INDEX audit_events_decision ON audit_events (decision);", "", 1),
		"noauto": strings.Replace(string(schema), "AUTOINCREMENT", "", 1),
		"noidx":  strings.Split(string(schema), "-- Every index")[0],
	}
	for _, name := range []string{"full", "nodecision", "noauto", "noidx"} {
		for _, ps := range []int{4096, 8192, 16384} {
			batch, multi := 128, 32
			b.Run(fmt.Sprintf("%s/ps=%d", name, ps), func(b *testing.B) {
				db, _ := sql.Open("sqlite3", dsn(filepath.Join(b.TempDir(), "x.db"), map[string][]string{"_txlock": {"immediate"}}))
				db.SetMaxOpenConns(1)
				defer db.Close()
				if _, err := db.Exec(fmt.Sprintf("PRAGMA page_size=%d; PRAGMA journal_mode=WAL;", ps) + variants[name]); err != nil { b.Fatal(err) }
				q := insertSQL + strings.Repeat(", (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", multi-1)
				ins, err := db.Prepare(q)
				if err != nil { b.Fatal(err) }
				args := []any{}
				for j := range multi { args = append(args, int64(1), "claude", []string{"alice","bob"}[j%2], "file.read", "share/docs/report.md", "allow", "scope", "", int64(4096), int64(2), "") }
				b.ResetTimer()
				n := 0
				for n < b.N {
					tx, _ := db.Begin()
					st := tx.Stmt(ins)
					for i := 0; i < batch; i += multi {
						for j := range multi { args[j*11] = int64(n+i+j) }
						if _, err := st.Exec(args...); err != nil { b.Fatal(err) }
					}
					if err := tx.Commit(); err != nil { b.Fatal(err) }
					n += batch
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
