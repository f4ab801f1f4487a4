-- 002: the owner's remembered answers ("always" rules; session rules live
-- only in memory). Columns follow PROTOCOL.md section 6, rule.list.
CREATE TABLE rules (
    id          TEXT    PRIMARY KEY,
    client      TEXT    NOT NULL,   -- "*" for any client
    user        TEXT    NOT NULL,
    access      TEXT    NOT NULL,
    target      TEXT    NOT NULL,
    match       TEXT    NOT NULL CHECK (match IN ('exact', 'prefix')),
    decision    TEXT    NOT NULL CHECK (decision IN ('allow', 'deny')),
    created_ns  INTEGER NOT NULL,
    created_by  TEXT    NOT NULL,
    expires_ns  INTEGER             -- NULL: never
);
