-- 004: what an event changed (core/audit.Change), as a JSON array; '' for
-- the many events that changed nothing. The partial index finds the
-- events that changed files (the owner's undo, versions of a path)
-- without reading the others.
ALTER TABLE audit_events ADD COLUMN changes TEXT NOT NULL DEFAULT '';
CREATE INDEX audit_events_changed ON audit_events (user) WHERE changes <> '';
