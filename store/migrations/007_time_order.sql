-- 007: pages in time order. Query lists events newest first by time (ties
-- by id), which is not commit order: an event whose approval waited is
-- recorded after events that happened meanwhile. Each filter's index holds
-- time_ns after its column (and the rowid after that), so an equality
-- filter walks its index in page order and stops after one page.
DROP INDEX audit_events_client;
DROP INDEX audit_events_user;
DROP INDEX audit_events_op;
DROP INDEX audit_events_decision;
DROP INDEX audit_events_changed;
CREATE INDEX audit_events_client ON audit_events (client, time_ns);
CREATE INDEX audit_events_user   ON audit_events (user, time_ns);
CREATE INDEX audit_events_op     ON audit_events (op, time_ns);
CREATE INDEX audit_events_decision ON audit_events (decision, time_ns) WHERE decision <> 'allow';
CREATE INDEX audit_events_changed ON audit_events (user, time_ns) WHERE changes <> '';
