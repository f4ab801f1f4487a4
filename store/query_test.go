package store

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"corral/core/audit"
	"corral/core/errs"
)

// fixture is a small log with every field varied, and its events with ids,
// oldest first.
func fixture(t *testing.T, s *Store) []audit.Event {
	t.Helper()
	return fixtureAt(t, s, func(i int) time.Time { return t0.Add(time.Duration(i) * 37 * time.Minute) })
}

// shuffledFixture is fixture recorded out of time order, as events whose
// approval waited are, with pairs of events of the same time.
func shuffledFixture(t *testing.T, s *Store) []audit.Event {
	t.Helper()
	return fixtureAt(t, s, func(i int) time.Time { return t0.Add(time.Duration((i*23)%60/2) * 37 * time.Minute) })
}

// fixtureAt is fixture with event i at timeOf(i), in record order.
func fixtureAt(t *testing.T, s *Store, timeOf func(int) time.Time) []audit.Event {
	t.Helper()
	clients := []string{"claude", "codex", "browser", "device:phone", "owner", "device_x"}
	users := []string{"alice", "bob"}
	ops := []string{"file.read", "file.write", "command.run", "file.grep"}
	decisions := []audit.Decision{audit.Allow, audit.Allow, audit.Deny, audit.Allow, audit.Error}
	texts := []string{
		"share/docs/report.md", "100% done", "a_b.txt", "abb.txt", "it's here",
		`C:\path\x`, `back\\slash`, "plain", "50%_off", `quote "double"`,
	}
	var evs []audit.Event
	for i := range 60 {
		e := audit.Event{
			Time:      timeOf(i),
			Client:    clients[i%len(clients)],
			User:      users[i/7%len(users)],
			Op:        ops[i%len(ops)],
			Target:    texts[i%len(texts)],
			Decision:  decisions[i%len(decisions)],
			DecidedBy: audit.ByScope,
			Detail:    []string{"", "why: " + texts[(i+3)%len(texts)]}[i%2],
			Bytes:     int64(i),
		}
		e.ID = record(t, s, e)
		evs = append(evs, e)
	}
	return evs
}

// matches is the reference meaning of audit.Filter.
func matches(e audit.Event, f audit.Filter) bool {
	return (f.Since.IsZero() || !e.Time.Before(f.Since)) &&
		(f.Until.IsZero() || e.Time.Before(f.Until)) &&
		(f.Client == "" || e.Client == f.Client) &&
		(f.User == "" || e.User == f.User) &&
		(f.Agent == "" || asciiContainsFold(e.Client, f.Agent)) &&
		(f.Op == "" || e.Op == f.Op) &&
		(f.Ops == nil || slices.Contains(f.Ops, e.Op)) &&
		(!f.HideOwn || !ownHousekeeping(e)) &&
		(f.Decision == "" || e.Decision == f.Decision) &&
		(f.Text == "" || asciiContainsFold(e.Target, f.Text) || asciiContainsFold(e.Detail, f.Text)) &&
		(f.ID == 0 || e.ID == f.ID)
}

func ownHousekeeping(e audit.Event) bool {
	own := slices.Contains(audit.OwnerClients, e.Client) || strings.HasPrefix(e.Client, audit.DevicePrefix)
	return own && slices.Contains(audit.Housekeeping, e.Op)
}

// asciiContainsFold reports whether sub is part of s, ignoring the case of
// ASCII letters only (as SQLite's LIKE does).
func asciiContainsFold(s, sub string) bool {
	lower := func(s string) string {
		return strings.Map(func(r rune) rune {
			if 'A' <= r && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, s)
	}
	return strings.Contains(lower(s), lower(sub))
}

// want is the reference answer: the events matching f, latest time first,
// ties by id (highest first).
func want(evs []audit.Event, f audit.Filter) []int64 {
	sorted := slices.Clone(evs)
	slices.SortStableFunc(sorted, func(a, b audit.Event) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	var out []int64
	for _, e := range sorted {
		if matches(e, f) {
			out = append(out, e.ID)
		}
	}
	return out
}

var filterCases = []struct {
	name string
	f    audit.Filter
}{
	{"none", audit.Filter{}},
	{"since", audit.Filter{Since: t0.Add(10 * time.Hour)}},
	{"since is inclusive", audit.Filter{Since: t0.Add(37 * time.Minute * 5)}},
	{"until is exclusive", audit.Filter{Until: t0.Add(37 * time.Minute * 5)}},
	{"range", audit.Filter{Since: t0.Add(3 * time.Hour), Until: t0.Add(20 * time.Hour)}},
	{"empty range", audit.Filter{Since: t0.Add(20 * time.Hour), Until: t0.Add(3 * time.Hour)}},
	{"range after all", audit.Filter{Since: t0.Add(1000 * time.Hour)}},
	{"range before all", audit.Filter{Until: t0.Add(-time.Hour)}},
	{"far past and future", audit.Filter{Since: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), Until: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}},
	{"client", audit.Filter{Client: "codex"}},
	{"user", audit.Filter{User: "bob"}},
	{"op", audit.Filter{Op: "file.write"}},
	{"decision", audit.Filter{Decision: audit.Deny}},
	{"text", audit.Filter{Text: "report"}},
	{"text in detail", audit.Filter{Text: "why: plain"}},
	{"unknown client", audit.Filter{Client: "nobody"}},
	{"client is exact", audit.Filter{Client: "code"}},
	{"agent is a part of the client", audit.Filter{Agent: "ODE"}},
	{"agent with a wildcard", audit.Filter{Agent: "c_de"}},
	{"several ops", audit.Filter{Ops: []string{"file.write", "command.run"}}},
	{"several ops and op", audit.Filter{Op: "file.write", Ops: []string{"file.write", "command.run"}}},
	{"hide own", audit.Filter{HideOwn: true}},
	{"hide own reads", audit.Filter{HideOwn: true, Op: "file.read"}},
	{"text ignores case", audit.Filter{Text: "REPORT.MD"}},
	{"op and decision", audit.Filter{Op: "file.read", Decision: audit.Allow}},
	{"client user range", audit.Filter{Client: "claude", User: "alice", Since: t0.Add(2 * time.Hour), Until: t0.Add(30 * time.Hour)}},
	{"everything", audit.Filter{Client: "phone", User: "alice", Op: "file.grep", Decision: audit.Allow, Text: ".", Since: t0, Until: t0.Add(40 * time.Hour)}},
	{"text and range", audit.Filter{Text: "%", Since: t0.Add(time.Hour)}},
	{"id", audit.Filter{ID: 7}},
	{"id and a filter it passes", audit.Filter{ID: 7, Since: t0}},
	{"id and a filter it fails", audit.Filter{ID: 7, Until: t0}},
	{"unknown id", audit.Filter{ID: 1 << 40}},
}

// Every filter alone and combined, on a log in time order and on one
// recorded out of time order.
func TestQueryFilters(t *testing.T) {
	t.Parallel()
	for _, shuffled := range []bool{false, true} {
		t.Run(fmt.Sprint("shuffled=", shuffled), func(t *testing.T) {
			t.Parallel()
			s, _ := openTest(t, Options{})
			var evs []audit.Event
			if shuffled {
				evs = shuffledFixture(t, s)
			} else {
				evs = fixture(t, s)
			}
			for _, tc := range filterCases {
				for _, limit := range []int{0, 3} {
					f := tc.f
					f.Limit = limit
					got := ids(all(t, s, f))
					if w := want(evs, tc.f); !slices.Equal(got, w) {
						t.Errorf("%s (limit %d): ids %v, want %v", tc.name, limit, got, w)
					}
				}
			}
		})
	}
}

// %, _, quotes and backslashes are ordinary characters in a text filter;
// the case of ASCII letters does not matter.
func TestQueryTextIsLiteral(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	for _, target := range []string{"100%", "1000", "a_b", "axb", "it's", "its", `a\b`, `a\\b`, "ab", `"q"`, "ÄÖ"} {
		record(t, s, audit.Event{Target: target})
	}
	record(t, s, audit.Event{Target: "elsewhere", Detail: "detail has 100%"})
	tests := []struct {
		text string
		want []string // targets, newest first
	}{
		{"%", []string{"elsewhere", "100%"}},
		{"0%", []string{"elsewhere", "100%"}},
		{"_", []string{"a_b"}},
		{"a_b", []string{"a_b"}},
		{"'", []string{"it's"}},
		{"'s", []string{"it's"}},
		{`\`, []string{`a\\b`, `a\b`}},
		{`\\`, []string{`a\\b`}},
		{`a\b`, []string{`a\b`}},
		{`"`, []string{`"q"`}},
		{"' OR 1=1 --", nil},
		{"%%", nil},
		{"A_B", []string{"a_b"}}, // ASCII case ignored
		{"AB", []string{"ab"}},
		{"ä", nil}, // other letters keep their case (SQLite's LIKE)
		{"ÄÖ", []string{"ÄÖ"}},
	}
	for _, tc := range tests {
		var got []string
		for _, e := range all(t, s, audit.Filter{Text: tc.text}) {
			got = append(got, e.Target)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("text %q: %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestQueryPagination(t *testing.T) {
	t.Parallel()
	for _, shuffled := range []bool{false, true} {
		s, _ := openTest(t, Options{})
		if shuffled {
			checkPagination(t, s, shuffledFixture(t, s))
		} else {
			checkPagination(t, s, fixture(t, s))
		}
	}
}

func checkPagination(t *testing.T, s *Store, evs []audit.Event) {
	t.Helper()
	for _, f := range []audit.Filter{
		{Limit: 7},
		{Limit: 1},
		{Limit: 60},
		{Limit: 59},
		{Limit: 5, Decision: audit.Allow},
		{Limit: 4, Since: t0.Add(5 * time.Hour), Until: t0.Add(30 * time.Hour)},
	} {
		seen := map[int64]bool{}
		var got []int64
		pages := 0
		for cursor := ""; ; {
			f.Cursor = cursor
			p, err := s.Query(t.Context(), f)
			if err != nil {
				t.Fatalf("Query(%+v): %v", f, err)
			}
			pages++
			if len(p.Events) > f.Limit || (p.NextCursor != "" && len(p.Events) != f.Limit) {
				t.Errorf("%+v: page of %d events with next cursor %q", f, len(p.Events), p.NextCursor)
			}
			for _, e := range p.Events {
				if seen[e.ID] {
					t.Errorf("%+v: id %d on two pages", f, e.ID)
				}
				seen[e.ID] = true
				got = append(got, e.ID)
			}
			if p.NextCursor == "" {
				break
			}
			cursor = p.NextCursor
		}
		f.Cursor = ""
		if w := want(evs, f); !slices.Equal(got, w) {
			t.Errorf("%+v: walked %v, want %v", f, got, w)
		}
		if n := len(got); pages != max(1, (n+f.Limit-1)/f.Limit) {
			t.Errorf("%+v: %d pages for %d events", f, pages, n)
		}
	}
}

// Events recorded while a caller pages do not shift its pages.
func TestQueryCursorStableUnderInserts(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	evs := fixture(t, s)
	p, err := s.Query(t.Context(), audit.Filter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	record(t, s, audit.Event{Op: "newer"})
	p2, err := s.Query(t.Context(), audit.Filter{Limit: 10, Cursor: p.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if got, w := p2.Events[0].ID, evs[len(evs)-11].ID; got != w {
		t.Errorf("second page starts at %d, want %d", got, w)
	}
}

func TestQueryBadCursor(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	record(t, s, audit.Event{})
	b64 := base64.RawURLEncoding.EncodeToString
	for _, c := range []string{
		"x",
		"c1.",
		"c1.!!!",
		"c2." + b64([]byte("5")),
		"c1." + b64([]byte("0")),
		"c1." + b64([]byte("-5")),
		"c1." + b64([]byte("+5")),
		"c1." + b64([]byte("05")),
		"c1." + b64([]byte("5 ")),
		"c1." + b64([]byte("99999999999999999999999")),
		"c1." + base64.URLEncoding.EncodeToString([]byte("5")), // padded
		formatCursor(key{5, 5}) + "=",
		formatCursorV1(5) + "=",
		"c2." + b64([]byte("5.0")),
		"c2." + b64([]byte("5.")),
		"c2." + b64([]byte(".5")),
		"c2." + b64([]byte("5.5.5")),
		"c2." + b64([]byte("05.5")),
		"c2." + b64([]byte("5.05")),
		"c2." + b64([]byte("x.5")),
		strings.Repeat("c1.", 10000),
		"c1.\x00",
	} {
		_, err := s.Query(t.Context(), audit.Filter{Cursor: c})
		if k := errs.KindOf(err); k != errs.InvalidParams {
			t.Errorf("cursor %.40q: err %v (kind %q), want invalid_params", c, err, k)
		}
	}
	for _, c := range []string{formatCursor(key{math.MinInt64, 1}), formatCursor(key{-5, 3}), formatCursorV1(1 << 62)} {
		if _, err := s.Query(t.Context(), audit.Filter{Cursor: c}); err != nil {
			t.Errorf("a well-formed cursor past the end: %v", err)
		}
	}
}

func TestQueryLimitClamp(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	recordMany(t, s, 1001, func(i int) audit.Event { return audit.Event{Bytes: int64(i)} })
	for _, tc := range []struct{ limit, want int }{
		{0, 100}, {-1, 1}, {-1 << 40, 1}, {1, 1}, {999, 999}, {1000, 1000}, {1001, 1000}, {1 << 40, 1000},
	} {
		p, err := s.Query(t.Context(), audit.Filter{Limit: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Events) != tc.want || p.NextCursor == "" {
			t.Errorf("limit %d: %d events (next %q), want %d and a cursor", tc.limit, len(p.Events), p.NextCursor, tc.want)
		}
	}
}

func TestQueryEmptyIsNotNil(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	p, err := s.Query(t.Context(), audit.Filter{})
	if err != nil || p.Events == nil || p.NextCursor != "" {
		t.Errorf("empty Query = %#v, %v; want non-nil empty events, no cursor", p, err)
	}
	b, err := s.Stats(t.Context(), audit.Filter{}, time.Hour)
	if err != nil || b == nil || len(b) != 0 {
		t.Errorf("empty Stats = %#v, %v; want non-nil empty", b, err)
	}
}

func TestStats(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	day := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	at := func(d, h, m int) time.Time {
		return day.AddDate(0, 0, d).Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
	}
	berlin := time.FixedZone("CEST", 2*3600)
	for _, e := range []audit.Event{
		{Time: at(0, 0, 0), Decision: audit.Allow, Client: "a"},
		{Time: at(0, 0, 59), Decision: audit.Deny, Client: "a"},
		{Time: at(0, 1, 0), Decision: audit.Allow, Client: "b"},
		{Time: at(0, 23, 59).In(berlin), Decision: audit.Error, Client: "a"}, // UTC day 0, Berlin day 1
		{Time: at(1, 0, 0), Decision: audit.Allow, Client: "a"},
		{Time: at(3, 12, 0), Decision: audit.Deny, Client: "b"},
		{Time: at(-1, 23, 0), Decision: audit.Allow, Client: "a"},
	} {
		record(t, s, e)
	}
	type b = audit.Bucket
	tests := []struct {
		name   string
		f      audit.Filter
		bucket time.Duration
		want   []audit.Bucket
	}{
		{"hours", audit.Filter{}, time.Hour, []b{
			{Start: at(-1, 23, 0), Allow: 1},
			{Start: at(0, 0, 0), Allow: 1, Deny: 1},
			{Start: at(0, 1, 0), Allow: 1},
			{Start: at(0, 23, 0), Error: 1},
			{Start: at(1, 0, 0), Allow: 1},
			{Start: at(3, 12, 0), Deny: 1},
		}},
		{"days", audit.Filter{}, 24 * time.Hour, []b{
			{Start: at(-1, 0, 0), Allow: 1},
			{Start: at(0, 0, 0), Allow: 2, Deny: 1, Error: 1},
			{Start: at(1, 0, 0), Allow: 1},
			{Start: at(3, 0, 0), Deny: 1},
		}},
		{"days filtered", audit.Filter{Client: "a", Since: at(0, 0, 30), Until: at(1, 0, 0), Cursor: "ignored", Limit: 1}, 24 * time.Hour, []b{
			{Start: at(0, 0, 0), Deny: 1, Error: 1},
		}},
		{"days in a range", audit.Filter{Since: at(0, 0, 30), Until: at(1, 0, 0)}, 24 * time.Hour, []b{
			{Start: at(0, 0, 0), Allow: 1, Deny: 1, Error: 1},
		}},
		{"hours by decision", audit.Filter{Decision: audit.Deny}, time.Hour, []b{
			{Start: at(0, 0, 0), Deny: 1},
			{Start: at(3, 12, 0), Deny: 1},
		}},
		{"minutes", audit.Filter{Decision: audit.Allow, Until: at(1, 0, 0)}, time.Minute, []b{ // too many buckets to count one by one
			{Start: at(-1, 23, 0), Allow: 1},
			{Start: at(0, 0, 0), Allow: 1},
			{Start: at(0, 1, 0), Allow: 1},
		}},
		{"nothing", audit.Filter{Client: "nobody"}, time.Hour, []b{}},
		{"empty range", audit.Filter{Since: at(2, 0, 0), Until: at(3, 0, 0)}, time.Hour, []b{}},
	}
	for _, tc := range tests {
		got, err := s.Stats(t.Context(), tc.f, tc.bucket)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.name, got, tc.want)
		}
		for _, k := range got {
			if k.Start.Location() != time.UTC {
				t.Errorf("%s: start %v not UTC", tc.name, k.Start)
			}
		}
		// Counting bucket by bucket and grouping agree.
		tx, err := s.rdb.BeginTx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		grouped, err := statsGrouped(t.Context(), tx, tc.f, tc.bucket.Nanoseconds())
		tx.Rollback()
		if err != nil || !slices.Equal(grouped, tc.want) {
			t.Errorf("%s grouped:\n got %v, %v\nwant %v", tc.name, grouped, err, tc.want)
		}
	}
	for _, bad := range []time.Duration{0, -time.Hour, time.Second, 400 * 24 * time.Hour, math.MaxInt64} {
		if _, err := s.Stats(t.Context(), audit.Filter{}, bad); errs.KindOf(err) != errs.InvalidParams {
			t.Errorf("bucket %v: %v, want invalid_params", bad, err)
		}
	}
}

// The indexes SQLite picks for a page: each equality filter walks its own
// index in page order (time, then id) and stops after one page; only the
// time index, which holds decision after the time, sorts the events of
// one time by id.
func TestQueryPlans(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	since, until := t0, t0.Add(time.Hour)
	tests := []struct {
		f     audit.Filter
		want  string // in the plan
		sorts bool   // the right part of the order (ids of one time) only
	}{
		{audit.Filter{}, "INDEX audit_events_time", true},
		{audit.Filter{Client: "c"}, "INDEX audit_events_client (client=? AND time_ns<?)", false},
		{audit.Filter{User: "u"}, "INDEX audit_events_user (user=? AND time_ns<?)", false},
		{audit.Filter{Op: "o"}, "INDEX audit_events_op (op=? AND time_ns<?)", false},
		{audit.Filter{Decision: audit.Deny}, "INDEX audit_events_decision (decision=? AND time_ns<?)", false},
		{audit.Filter{Decision: audit.Error, Since: since}, "INDEX audit_events_decision (decision=? AND time_ns>? AND time_ns<?)", false},
		{audit.Filter{Since: since, Until: until}, "INDEX audit_events_time (time_ns>? AND time_ns<?)", true},
		{audit.Filter{Until: until, Client: "c"}, "INDEX audit_events_client (client=? AND time_ns<?)", false},
	}
	for _, tc := range tests {
		q, args := pageQuery(tc.f, key{t0.Add(time.Hour).UnixNano(), 1000}, 100)
		rows, err := s.rdb.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.want, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		got := strings.Join(plan, "; ")
		if !strings.Contains(got, tc.want) {
			t.Errorf("plan %q, want %q", got, tc.want)
		}
		if n := strings.Count(got, "TEMP B-TREE"); n > btoi(tc.sorts) || n == 1 && !strings.Contains(got, "LAST TERM OF ORDER BY") {
			t.Errorf("plan %q sorts", got)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func FuzzCursor(f *testing.F) {
	for _, seed := range []string{"", "c1.", "c2.", formatCursorV1(1), formatCursorV1(math.MaxInt64), "c1.LTE", "c1.MDU",
		formatCursor(key{0, 1}), formatCursor(key{math.MinInt64, math.MaxInt64}), formatCursor(key{-1, 2})} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, c string) {
		k, v1, ok := parseCursor(c)
		if !ok {
			return
		}
		if k.id < 1 {
			t.Errorf("parseCursor(%q) = %+v, accepted", c, k)
		}
		if v1 && formatCursorV1(k.id) != c || !v1 && formatCursor(k) != c {
			t.Errorf("parseCursor(%q) = %+v, not the cursor's own spelling", c, k)
		}
	})
}

// Pages are in time order, not commit order: an event whose approval
// waited is recorded after events that happened meanwhile, and events of
// one time come by id. Paging while older events arrive neither repeats
// nor skips what was there, and a cursor of the first version (an id,
// from when pages were in id order) still continues below its event.
func TestQueryTimeOrder(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	var evs []audit.Event
	rec := func(min int, target string) int64 {
		e := audit.Event{Time: at(min), Target: target, Op: "file.read"}
		e.ID = record(t, s, e)
		evs = append(evs, e)
		return e.ID
	}
	a := rec(10, "a")
	b := rec(20, "b")
	c := rec(5, "c: asked at 5, answered after b") // the approval that waited
	d := rec(20, "d: same time as b")
	if got, w := ids(all(t, s, audit.Filter{})), []int64{d, b, a, c}; !slices.Equal(got, w) {
		t.Fatalf("order %v, want %v", got, w)
	}

	p1, err := s.Query(t.Context(), audit.Filter{Limit: 2})
	if err != nil || !slices.Equal(ids(p1.Events), []int64{d, b}) {
		t.Fatalf("first page %v, %v", ids(p1.Events), err)
	}
	// Recorded while the owner pages: one older than the cursor (it is on
	// a later page, where its time puts it), one newer (not on later pages).
	e := rec(15, "e")
	rec(30, "f")
	rest := all(t, s, audit.Filter{Limit: 2, Cursor: p1.NextCursor})
	if got, w := ids(rest), []int64{e, a, c}; !slices.Equal(got, w) {
		t.Errorf("later pages %v, want %v", got, w)
	}

	// A v1 cursor below b: what is older than b, in time order.
	old, err := s.Query(t.Context(), audit.Filter{Cursor: formatCursorV1(b)})
	if err != nil {
		t.Fatal(err)
	}
	if got, w := ids(old.Events), want(evs, audit.Filter{Until: at(20)}); !slices.Equal(got, w) {
		t.Errorf("after a v1 cursor: %v, want %v", got, w)
	}

	// Many events out of order and with ties, paged one by one, against
	// the reference order.
	for i := range 200 {
		rec((i*7919)%97, fmt.Sprint("many ", i))
	}
	for _, limit := range []int{1, 3, 100} {
		if got, w := ids(all(t, s, audit.Filter{Limit: limit})), want(evs, audit.Filter{}); !slices.Equal(got, w) {
			t.Errorf("limit %d: %v, want %v", limit, got, w)
		}
	}
}

// The owner's answer, the surface that gave it and the rule are kept with
// the event, by Record and by Complete, and read back as they were.
func TestAnswerAndRuleRoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t, Options{})
	e := audit.Event{Time: t0, Client: "a", Op: "file.read", Decision: audit.Allow, DecidedBy: audit.ByOwner,
		Answer: "allow_always", AnsweredBy: "device:Pixel \u202e", Rule: "ru_1"}
	e.ID = record(t, s, e)
	run := audit.Event{Time: t0.Add(time.Second), Client: "a", Op: "command.run", Decision: audit.Allow, DecidedBy: audit.ByScope, Detail: "running"}
	run.ID = record(t, s, run)
	run.DecidedBy, run.Answer, run.AnsweredBy, run.Detail = audit.ByOwner, "allow_once", "dashboard:Firefox", "exit 0"
	if err := s.Complete(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	got := all(t, s, audit.Filter{})
	if len(got) != 2 {
		t.Fatalf("%d events", len(got))
	}
	for i, w := range []audit.Event{run, e} {
		g := got[i]
		if g.Answer != w.Answer || g.AnsweredBy != w.AnsweredBy || g.Rule != w.Rule || g.DecidedBy != w.DecidedBy {
			t.Errorf("event %d: %+v, want %+v", w.ID, g, w)
		}
	}
}

// A log written before pages were in time order (schema 006) is upgraded
// in place: its events keep everything they had, come in time order, and
// read back with no answer, surface or rule.
func TestUpgradeToTimeOrder(t *testing.T) {
	t.Parallel()
	path, db := atSchema(t, 6)
	for i, min := range []int{10, 30, 20} {
		if _, err := db.Exec(`INSERT INTO audit_events (time_ns, client, user, op, target, decision, decided_by, detail, bytes, duration_ms, error, changes)
			VALUES (?, 'a', 'alice', 'file.read', ?, 'allow', 'owner', 'owner answered allow_once', 0, 0, '', '')`,
			t0.Add(time.Duration(min)*time.Minute).UnixNano(), fmt.Sprint("t", i)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := all(t, s, audit.Filter{Client: "a"})
	var targets []string
	for _, e := range got {
		targets = append(targets, e.Target)
		if e.Answer != "" || e.AnsweredBy != "" || e.Rule != "" || e.Detail != "owner answered allow_once" {
			t.Errorf("upgraded event %+v", e)
		}
	}
	if !slices.Equal(targets, []string{"t1", "t2", "t0"}) {
		t.Errorf("upgraded log in order %v, want t1 t2 t0", targets)
	}
}
