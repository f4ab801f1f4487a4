-- 001: the audit log (PROTOCOL.md section 6, `event`).
--
-- id is AUTOINCREMENT so ids are never reused, even after Prune empties the
-- table: cursors and subscribers can rely on ids only growing.
-- time_ns is Unix nanoseconds (UTC) so range filters compare integers.
CREATE TABLE audit_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    time_ns     INTEGER NOT NULL,
    client      TEXT    NOT NULL,
    user        TEXT    NOT NULL,
    op          TEXT    NOT NULL,
    target      TEXT    NOT NULL,
    decision    TEXT    NOT NULL,
    decided_by  TEXT    NOT NULL,
    detail      TEXT    NOT NULL,
    bytes       INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    error       TEXT    NOT NULL
);

-- Every index on a single column also holds the rowid, so (col, id) is in
-- id order: an equality filter walks its index newest first and stops after
-- one page, without sorting.
CREATE INDEX audit_events_client ON audit_events (client);
CREATE INDEX audit_events_user   ON audit_events (user);
CREATE INDEX audit_events_op     ON audit_events (op);

-- Most events are allowed; a page of them is found by walking ids. Leaving
-- them out keeps the index small and Record fast. A query uses this index
-- only if it also says decision <> 'allow'.
CREATE INDEX audit_events_decision ON audit_events (decision) WHERE decision <> 'allow';

-- Time ranges, Prune and Stats. decision makes it covering for Stats over a
-- time range and for time-only pages (the rowid is in the index too).
CREATE INDEX audit_events_time ON audit_events (time_ns, decision);
