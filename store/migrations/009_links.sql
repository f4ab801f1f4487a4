-- 009: the links handed out (sandbox.LinkRecord), so the owner can list
-- them and withdraw one without rotating the key for all. Only the
-- link's signed fields are kept, never its token: without the signing
-- key (secret.key) a copy of this table opens nothing.
CREATE TABLE links (
    id          TEXT    PRIMARY KEY, -- sandbox.LinkID: SHA-256 of the key id and the signed fields
    key_id      TEXT    NOT NULL,    -- the signing key's id: a rotation withdraws the others
    scope       TEXT    NOT NULL,
    path        TEXT    NOT NULL,
    folder      INTEGER NOT NULL,
    made_by     TEXT    NOT NULL,
    created_ns  INTEGER NOT NULL,
    expires_ns  INTEGER NOT NULL,
    revoked_ns  INTEGER NOT NULL DEFAULT 0, -- 0: not revoked
    revoked_by  TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX links_newest ON links (created_ns DESC, id DESC);
