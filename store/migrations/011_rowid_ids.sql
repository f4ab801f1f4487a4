-- 011: a cheaper insert. AUTOINCREMENT wrote sqlite_sequence's page on
-- every commit, one page of about seven per event. The table is rebuilt
-- with a plain INTEGER PRIMARY KEY; the writer gives each event its id
-- (the largest given so far plus one), and audit_ids keeps the largest
-- id given, written only when Prune deletes, so ids are still never
-- reused once Prune has removed the newest events (store.go).
CREATE TABLE audit_ids (
    one  INTEGER PRIMARY KEY CHECK (one = 0),
    last INTEGER NOT NULL
);
INSERT INTO audit_ids (one, last) VALUES (0, max(
    coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'audit_events'), 0),
    coalesce((SELECT max(id) FROM audit_events), 0)));

CREATE TABLE audit_events_new (
    id          INTEGER PRIMARY KEY,
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
    error       TEXT    NOT NULL,
    changes     TEXT    NOT NULL DEFAULT '',
    answer      TEXT    NOT NULL DEFAULT '',
    answered_by TEXT    NOT NULL DEFAULT '',
    rule        TEXT    NOT NULL DEFAULT ''
);
INSERT INTO audit_events_new
    SELECT id, time_ns, client, user, op, target, decision, decided_by, detail, bytes, duration_ms, error, changes, answer, answered_by, rule
    FROM audit_events ORDER BY id;
DROP TABLE audit_events; -- its indexes and its sqlite_sequence row go with it
ALTER TABLE audit_events_new RENAME TO audit_events;

-- The indexes of 007 and 010, as they were.
CREATE INDEX audit_events_client ON audit_events (client, time_ns);
CREATE INDEX audit_events_user   ON audit_events (user, time_ns);
CREATE INDEX audit_events_op     ON audit_events (op, time_ns);
CREATE INDEX audit_events_decision ON audit_events (decision, time_ns) WHERE decision <> 'allow';
CREATE INDEX audit_events_changed ON audit_events (user, time_ns) WHERE changes <> '';
CREATE INDEX audit_events_time ON audit_events (time_ns, decision);
CREATE INDEX audit_events_unfinished ON audit_events (id) WHERE substr(detail, -7) IN ('running', 'pending');
