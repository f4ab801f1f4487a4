-- 006: the owner's browser sessions (dashboard logins), so a login
-- survives a restart until it expires or is signed out. Only the SHA-256
-- of each session id is kept: a copy of this table opens nothing (the
-- cookie's value is not in it, nor is its second secret).
CREATE TABLE sessions (
    id_sha256  BLOB    PRIMARY KEY,
    expires_ns INTEGER NOT NULL
);
