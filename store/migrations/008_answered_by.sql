-- 008: the owner's answer to an event's question and the surface that gave
-- it (audit.Event.Answer, AnsweredBy), and the rule that decided or that
-- the answer made (Rule); '' when there is none.
ALTER TABLE audit_events ADD COLUMN answer TEXT NOT NULL DEFAULT '';
ALTER TABLE audit_events ADD COLUMN answered_by TEXT NOT NULL DEFAULT '';
ALTER TABLE audit_events ADD COLUMN rule TEXT NOT NULL DEFAULT '';
