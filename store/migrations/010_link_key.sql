-- 010: the id of the key each link was signed under (sandbox.LinkRecord.Key),
-- so that the owner's list never signs a link again under a later key:
-- rotating the key withdraws every earlier link. '' for links recorded
-- before: their key is unknown, so the list offers no URL for them.
ALTER TABLE links ADD COLUMN key_id TEXT NOT NULL DEFAULT '';
