package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
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
)

const eventColumns = `id, time_ns, client, user, op, target, decision, decided_by, detail, bytes, duration_ms, error, changes, answer, answered_by, rule`

// key is an event's place in page order: its time, then its id.
type key struct{ ns, id int64 }

// top is above every event.
var top = key{math.MaxInt64, math.MaxInt64}

// Query returns one page of events matching f, newest first: latest time
// first, events of the same time by id (the later recorded first), and a
// cursor for the next page ("" when there is none). Time order is not
// commit order (an event whose approval waited is recorded after events
// that happened meanwhile); the cursor is the last event's (time, id), so
// events recorded or pruned while a caller pages never repeat or shift
// pages. A cursor not made by Query is an invalid_params error.
func (s *Store) Query(ctx context.Context, f audit.Filter) (audit.Page, error) {
	if s.closed() {
		return audit.Page{}, ErrClosed
	}
	below := top
	if f.Cursor != "" {
		k, err := s.cursorKey(ctx, f.Cursor)
		if err != nil {
			return audit.Page{}, err
		}
		below = k
	}
	limit := clampLimit(f.Limit)
	q, args := pageQuery(f, below, limit)
	return s.page(ctx, q, args, limit)
}

// pageQuery builds the SELECT for one page (limit+1 rows, to see whether
// another page follows) of events below key below, in page order.
func pageQuery(f audit.Filter, below key, limit int) (string, []any) {
	w := where(f, below)
	return `SELECT ` + eventColumns + ` FROM audit_events` + w.clause() + `
		ORDER BY time_ns DESC, id DESC LIMIT ?`, append(w.args, limit+1)
}

func (s *Store) page(ctx context.Context, q string, args []any, limit int) (audit.Page, error) {
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return audit.Page{}, fmt.Errorf("query audit events: %w", err)
	}
	defer rows.Close()
	p := audit.Page{Events: make([]audit.Event, 0, min(limit, 128))}
	var last key
	for rows.Next() {
		if len(p.Events) == limit { // the extra row: there is a next page
			p.NextCursor = formatCursor(last)
			break
		}
		var e audit.Event
		var ns int64
		var changes string
		if err := rows.Scan(&e.ID, &ns, &e.Client, &e.User, &e.Op, &e.Target, &e.Decision,
			&e.DecidedBy, &e.Detail, &e.Bytes, &e.DurationMs, &e.Error, &changes, &e.Answer, &e.AnsweredBy, &e.Rule); err != nil {
			return audit.Page{}, fmt.Errorf("query audit events: %w", err)
		}
		if changes != "" {
			if e.Changes, err = parseChanges(changes); err != nil {
				return audit.Page{}, fmt.Errorf("query audit events: changes of event %d: %w", e.ID, err)
			}
		}
		e.Time = time.Unix(0, ns).UTC()
		last = key{ns, e.ID}
		p.Events = append(p.Events, e)
	}
	if err := rows.Err(); err != nil {
		return audit.Page{}, fmt.Errorf("query audit events: %w", err)
	}
	return p, nil
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
	w := where(f, top)
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

// where turns f into conditions; only events below key below are kept.
func where(f audit.Filter, below key) conds {
	var c conds
	if below != top {
		c.add("(time_ns, id) < (?, ?)", below.ns, below.id)
	}
	if f.ID != 0 {
		c.add("id = ?", f.ID)
	}
	if !f.Since.IsZero() {
		c.add("time_ns >= ?", clampNanos(f.Since))
	}
	if !f.Until.IsZero() {
		c.add("time_ns < ?", clampNanos(f.Until))
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
	if f.Asked {
		c.add("(answer <> '' OR decided_by = ?)", string(audit.ByTimeout))
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

// Cursors are "c2." + base64url("<time_ns>.<id>"), the last event's key:
// opaque to callers, versioned so their format can change. Cursors of
// the first version, "c1." + base64url("<id>") from when pages were in id
// order, still work: they continue below that event's key.
const (
	cursorPrefix   = "c2."
	cursorPrefixV1 = "c1."
)

func formatCursor(k key) string {
	return cursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(k.ns, 10)+"."+strconv.FormatInt(k.id, 10)))
}

func formatCursorV1(id int64) string {
	return cursorPrefixV1 + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 10)))
}

// parseCursor reads a cursor of either version; v1 holds only an id.
func parseCursor(c string) (k key, v1, ok bool) {
	if rest, found := strings.CutPrefix(c, cursorPrefixV1); found {
		raw, err := base64.RawURLEncoding.DecodeString(rest)
		if err != nil {
			return key{}, false, false
		}
		id, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || id < 1 || formatCursorV1(id) != c {
			return key{}, false, false
		}
		return key{id: id}, true, true
	}
	rest, found := strings.CutPrefix(c, cursorPrefix)
	if !found {
		return key{}, false, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return key{}, false, false
	}
	nsText, idText, found := strings.Cut(string(raw), ".")
	if !found {
		return key{}, false, false
	}
	ns, err1 := strconv.ParseInt(nsText, 10, 64)
	id, err2 := strconv.ParseInt(idText, 10, 64)
	k = key{ns, id}
	if err1 != nil || err2 != nil || id < 1 || formatCursor(k) != c {
		return key{}, false, false
	}
	return k, false, true
}

// cursorKey is the key a cursor continues below. A v1 cursor's event is
// looked up for its time; when it is gone (pruned), nothing older is
// left either, and the page is empty.
func (s *Store) cursorKey(ctx context.Context, c string) (key, error) {
	k, v1, ok := parseCursor(c)
	if !ok {
		return key{}, errs.New(errs.InvalidParams, "", "That cursor is not one Corral gave out.")
	}
	if !v1 {
		return k, nil
	}
	err := s.rdb.QueryRowContext(ctx, `SELECT time_ns FROM audit_events WHERE id = ?`, k.id).Scan(&k.ns)
	if errors.Is(err, sql.ErrNoRows) {
		return key{math.MinInt64, 1}, nil
	}
	if err != nil {
		return key{}, fmt.Errorf("query audit events: %w", err)
	}
	return k, nil
}
