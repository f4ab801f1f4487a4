package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"corral/core/audit"
	"corral/core/errs"
)

const (
	defaultLimit = 100
	maxLimit     = 1000

	// Reading one event through the time index and sorting it costs about
	// as much as passing over this many events in a newest-first walk.
	timeIndexCost = 4
)

// planChoice lets tests force either way of reading a time range, to check
// both give the same answers.
type planChoice int

const (
	planAuto planChoice = iota
	planTime
	planIDs
)

const eventColumns = `id, time_ns, client, user, op, target, decision, decided_by, detail, bytes, duration_ms, error, changes`

// Query returns one page of events matching f, newest (highest id, that is
// last committed) first, and a cursor for the next page ("" when there is
// none). A cursor not made by Query is an invalid_params error.
func (s *Store) Query(ctx context.Context, f audit.Filter) (audit.Page, error) {
	if s.closed() {
		return audit.Page{}, ErrClosed
	}
	before := int64(math.MaxInt64)
	if f.Cursor != "" {
		id, ok := parseCursor(f.Cursor)
		if !ok {
			return audit.Page{}, errs.New(errs.InvalidParams, "", "That cursor is not one Corral gave out.")
		}
		before = id
	}
	limit := clampLimit(f.Limit)

	viaTime, err := s.preferTimeIndex(ctx, f, before, limit)
	if err != nil {
		return audit.Page{}, fmt.Errorf("query audit events: %w", err)
	}
	q, args := pageQuery(f, before, limit, viaTime)
	return s.page(ctx, q, args, limit)
}

// pageQuery builds the SELECT for one page (limit+1 rows, to see whether
// another page follows) of events below id before.
func pageQuery(f audit.Filter, before int64, limit int, viaTime bool) (string, []any) {
	if viaTime {
		// Pick the page's ids from the time index (covering for time-only
		// filters), then fetch those rows.
		w := where(f, "time_ns", before)
		return `SELECT ` + eventColumns + ` FROM audit_events WHERE id IN (
			SELECT id FROM audit_events INDEXED BY audit_events_time` + w.clause() + `
			ORDER BY id DESC LIMIT ?) ORDER BY id DESC`, append(w.args, limit+1)
	}
	// "+time_ns" keeps SQLite off the time index: walk ids (or a (col, id)
	// index) downward and stop after one page.
	w := where(f, "+time_ns", before)
	return `SELECT ` + eventColumns + ` FROM audit_events` + w.clause() + `
		ORDER BY id DESC LIMIT ?`, append(w.args, limit+1)
}

func (s *Store) page(ctx context.Context, q string, args []any, limit int) (audit.Page, error) {
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return audit.Page{}, fmt.Errorf("query audit events: %w", err)
	}
	defer rows.Close()
	p := audit.Page{Events: make([]audit.Event, 0, min(limit, 128))}
	for rows.Next() {
		if len(p.Events) == limit { // the extra row: there is a next page
			p.NextCursor = formatCursor(p.Events[limit-1].ID)
			break
		}
		var e audit.Event
		var ns int64
		var changes string
		if err := rows.Scan(&e.ID, &ns, &e.Client, &e.User, &e.Op, &e.Target, &e.Decision,
			&e.DecidedBy, &e.Detail, &e.Bytes, &e.DurationMs, &e.Error, &changes); err != nil {
			return audit.Page{}, fmt.Errorf("query audit events: %w", err)
		}
		if changes != "" {
			if e.Changes, err = parseChanges(changes); err != nil {
				return audit.Page{}, fmt.Errorf("query audit events: changes of event %d: %w", e.ID, err)
			}
		}
		e.Time = time.Unix(0, ns).UTC()
		p.Events = append(p.Events, e)
	}
	if err := rows.Err(); err != nil {
		return audit.Page{}, fmt.Errorf("query audit events: %w", err)
	}
	return p, nil
}

// preferTimeIndex decides how a page with a time range is read: through
// the time index (cost: every event in the range, sorted by id) or by
// walking ids downward from the cursor (cost: the newer events outside the
// range, then events in it until a page matches, or down to the oldest
// event when too few do). Both costs are estimated from the ids of the
// range's first and last events, which the time index finds in O(log n).
// The estimate assumes times roughly follow ids; when they do not, the
// answer is the same, only slower. A filter on one id reads its row by id,
// whatever the other filters.
func (s *Store) preferTimeIndex(ctx context.Context, f audit.Filter, before int64, limit int) (bool, error) {
	if f.ID != 0 || f.Since.IsZero() && f.Until.IsZero() {
		return false, nil
	}
	switch s.plan {
	case planTime:
		return true, nil
	case planIDs:
		return false, nil
	}
	since, until := int64(math.MinInt64), int64(math.MaxInt64)
	if !f.Since.IsZero() {
		since = clampNanos(f.Since)
	}
	if !f.Until.IsZero() {
		until = clampNanos(f.Until)
	}
	var lo, hi, first, top sql.NullInt64
	err := s.rdb.QueryRowContext(ctx, `SELECT
		(SELECT id FROM audit_events WHERE time_ns >= ? ORDER BY time_ns LIMIT 1),
		(SELECT id FROM audit_events WHERE time_ns < ? ORDER BY time_ns DESC LIMIT 1),
		(SELECT min(id) FROM audit_events),
		(SELECT max(id) FROM audit_events)`, since, until).Scan(&lo, &hi, &first, &top)
	if err != nil {
		return false, err
	}
	if !lo.Valid || !hi.Valid || since >= until {
		return true, nil // the range is empty: the time index says so at once
	}
	newest := min(top.Int64, before-1)
	end := min(hi.Int64, newest) // the range's newest event below the cursor
	if end < lo.Int64 {
		return true, nil
	}
	byTime := (hi.Int64 - lo.Int64 + 1) * timeIndexCost

	inRange := end - lo.Int64 + 1
	pass := int64(1) // 1 in pass events of the range match the other filters: a guess
	if f.Client != "" || f.User != "" || f.Op != "" || f.Decision != "" || f.Text != "" || f.Changed || f.Path != "" {
		pass = 20
	}
	walk := newest - end // newer events passed over first
	if inRange/pass >= int64(limit) {
		walk += int64(limit) * pass
	} else {
		walk += end - first.Int64 + 1 // too few matches: read to the oldest
	}
	return byTime < walk, nil
}

// Stats counts the events matching f (cursor and limit ignored) per bucket
// of the given length, split by decision, in ascending order of start.
// Buckets are aligned to multiples of their length since the Unix epoch,
// so hours and days start on UTC hours and midnights; empty buckets are
// left out.
func (s *Store) Stats(ctx context.Context, f audit.Filter, bucket time.Duration) ([]audit.Bucket, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	if bucket < time.Minute || bucket > 366*24*time.Hour {
		return nil, errs.New(errs.InvalidParams, "", "The bucket must be between a minute and a year long.")
	}
	tx, err := s.rdb.BeginTx(ctx, nil) // one snapshot for every query below
	if err != nil {
		return nil, fmt.Errorf("audit stats: %w", err)
	}
	defer tx.Rollback()
	out, ok, err := statsByBucket(ctx, tx, f, bucket.Nanoseconds())
	if err == nil && !ok {
		out, err = statsGrouped(ctx, tx, f, bucket.Nanoseconds())
	}
	if err != nil {
		return nil, fmt.Errorf("audit stats: %w", err)
	}
	return out, nil
}

// counts is the aggregate both ways of computing Stats select.
const counts = `count(*),
	count(*) FILTER (WHERE decision = 'allow'),
	count(*) FILTER (WHERE decision = 'deny'),
	count(*) FILTER (WHERE decision = 'error')`

// maxBucketScans caps the buckets statsByBucket counts one by one.
const maxBucketScans = 1000

// statsByBucket counts one bucket at a time, each an aggregate over a range
// of the time index: no row is sorted, which makes it several times faster
// than GROUP BY, whose sort takes every row. It applies when the time index
// covers the filter (no client, user, op or text) and the range spans at
// most maxBucketScans buckets; otherwise ok is false.
func statsByBucket(ctx context.Context, tx *sql.Tx, f audit.Filter, b int64) (out []audit.Bucket, ok bool, err error) {
	if f.Client != "" || f.User != "" || f.Op != "" || f.Text != "" || f.ID != 0 || f.Changed || f.Path != "" {
		return nil, false, nil
	}
	// The range: the filter's bounds, narrowed to the events there are.
	var first, last sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT
		(SELECT min(time_ns) FROM audit_events), (SELECT max(time_ns) FROM audit_events)`).Scan(&first, &last); err != nil {
		return nil, false, err
	}
	out = []audit.Bucket{}
	if !first.Valid {
		return out, true, nil
	}
	lo, hi := first.Int64, last.Int64
	if hi < math.MaxInt64 {
		hi++ // exclusive
	}
	if !f.Since.IsZero() {
		lo = max(lo, clampNanos(f.Since))
	}
	if !f.Until.IsZero() {
		hi = min(hi, clampNanos(f.Until))
	}
	if lo >= hi {
		return out, true, nil
	}
	start := floorTo(lo, b)
	if hi/b-start/b >= maxBucketScans {
		return nil, false, nil
	}

	var c conds
	c.add("time_ns >= ?", int64(0)) // set per bucket
	c.add("time_ns < ?", int64(0))
	attrs(&c, f)
	stmt, err := tx.PrepareContext(ctx, `SELECT `+counts+` FROM audit_events INDEXED BY audit_events_time`+c.clause())
	if err != nil {
		return nil, false, err
	}
	defer stmt.Close()
	for from := start; from < hi; from += b {
		to := from + b
		if to < from { // past the last representable nanosecond
			to = math.MaxInt64
		}
		c.args[0], c.args[1] = max(from, lo), min(to, hi)
		var n int64
		k := audit.Bucket{Start: time.Unix(0, from).UTC()}
		if err := stmt.QueryRowContext(ctx, c.args...).Scan(&n, &k.Allow, &k.Deny, &k.Error); err != nil {
			return nil, false, err
		}
		if n > 0 {
			out = append(out, k)
		}
		if to == math.MaxInt64 {
			break
		}
	}
	return out, true, nil
}

// statsGrouped counts with one GROUP BY over whatever index suits f.
func statsGrouped(ctx context.Context, tx *sql.Tx, f audit.Filter, b int64) ([]audit.Bucket, error) {
	w := where(f, "time_ns", math.MaxInt64)
	q := `SELECT time_ns - (((time_ns % ?) + ?) % ?) AS start, ` + counts + `
		FROM audit_events` + w.clause() + ` GROUP BY start ORDER BY start`
	rows, err := tx.QueryContext(ctx, q, append([]any{b, b, b}, w.args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []audit.Bucket{}
	for rows.Next() {
		var start, n int64
		var k audit.Bucket
		if err := rows.Scan(&start, &n, &k.Allow, &k.Deny, &k.Error); err != nil {
			return nil, err
		}
		k.Start = time.Unix(0, start).UTC()
		out = append(out, k)
	}
	return out, rows.Err()
}

// floorTo rounds t down to a multiple of b.
func floorTo(t, b int64) int64 {
	return t - ((t%b)+b)%b
}

// conds is a WHERE clause built from fixed fragments; every value is an
// argument.
type conds struct {
	sql  []string
	args []any
}

func (c *conds) add(frag string, args ...any) {
	c.sql = append(c.sql, frag)
	c.args = append(c.args, args...)
}

func (c *conds) clause() string {
	if len(c.sql) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.sql, " AND ")
}

// where turns f into conditions. timeCol is "time_ns", or "+time_ns" to keep
// SQLite from using the time index; only ids below before are kept.
func where(f audit.Filter, timeCol string, before int64) conds {
	var c conds
	if before != math.MaxInt64 {
		c.add("id < ?", before)
	}
	if f.ID != 0 {
		c.add("id = ?", f.ID)
	}
	if !f.Since.IsZero() {
		c.add(timeCol+" >= ?", clampNanos(f.Since))
	}
	if !f.Until.IsZero() {
		c.add(timeCol+" < ?", clampNanos(f.Until))
	}
	attrs(&c, f)
	return c
}

// attrs adds f's conditions on columns other than id and time.
func attrs(c *conds, f audit.Filter) {
	if f.Client != "" {
		c.add("client = ?", f.Client)
	}
	if f.User != "" {
		c.add("user = ?", f.User)
	}
	if f.Agent != "" {
		c.add(`client LIKE ? ESCAPE '\'`, likeContains(f.Agent))
	}
	if f.Op != "" {
		c.add("op = ?", f.Op)
	}
	if len(f.Ops) > 0 {
		c.add("op IN ("+marks(len(f.Ops))+")", anys(f.Ops)...)
	}
	if f.Decision != "" {
		c.add("decision = ?", string(f.Decision))
		if f.Decision != audit.Allow {
			c.add("decision <> 'allow'") // lets SQLite use the partial index
		}
	}
	if f.Text != "" {
		t := likeContains(f.Text)
		c.add(`(target LIKE ? ESCAPE '\' OR detail LIKE ? ESCAPE '\')`, t, t)
	}
	if f.HideOwn {
		c.add(`(NOT (client IN (`+marks(len(audit.OwnerClients))+`) OR client LIKE ? ESCAPE '\') OR op NOT IN (`+marks(len(audit.Housekeeping))+`))`,
			slices.Concat(anys(audit.OwnerClients), []any{likeEscaper.Replace(audit.DevicePrefix) + "%"}, anys(audit.Housekeeping))...)
	}
	if f.Changed || f.Path != "" {
		c.add("changes <> ''")
	}
	if f.Path != "" {
		// The path as JSON spells it, quotes included: a literal match on
		// a whole path (as "path" or "from"), never a longer one.
		q, _ := json.Marshal(f.Path)
		c.add("instr(changes, ?) > 0", string(q))
	}
}

// marks is n comma-separated placeholders (n > 0).
func marks(n int) string { return "?" + strings.Repeat(", ?", n-1) }

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// likeContains is the LIKE pattern matching s anywhere, with LIKE's own
// wildcards (%, _) and the escape character in s taken literally. SQLite's
// LIKE ignores case for ASCII letters only.
func likeContains(s string) string {
	return "%" + likeEscaper.Replace(s) + "%"
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)

func clampLimit(n int) int {
	switch {
	case n == 0:
		return defaultLimit
	case n < 1:
		return 1
	case n > maxLimit:
		return maxLimit
	}
	return n
}

// Cursors are "c1." + base64url(decimal id): opaque to callers, versioned
// so their format can change.
const cursorPrefix = "c1."

func formatCursor(id int64) string {
	return cursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 10)))
}

func parseCursor(c string) (int64, bool) {
	rest, ok := strings.CutPrefix(c, cursorPrefix)
	if !ok {
		return 0, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return 0, false
	}
	id, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || id < 1 || formatCursor(id) != c {
		return 0, false
	}
	return id, true
}
