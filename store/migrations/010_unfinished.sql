-- 010: events whose operation began and never ended. An event is recorded
-- before its change (detail ending "pending") or its command (detail
-- ending "running") and completed afterwards, which replaces the detail;
-- at start-up Corral finds the ones left by a crash through this small
-- index (Unfinished), without reading the whole log.
CREATE INDEX audit_events_unfinished ON audit_events (id) WHERE substr(detail, -7) IN ('running', 'pending');
