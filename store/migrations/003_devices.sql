-- 003: paired devices (PROTOCOL.md section 9). Only a hash of each device
-- token is kept; the token itself is shown to the device once.
CREATE TABLE devices (
    id           TEXT    PRIMARY KEY,
    name         TEXT    NOT NULL,
    token_sha256 BLOB    NOT NULL UNIQUE,
    paired_ns    INTEGER NOT NULL,
    last_seen_ns INTEGER NOT NULL
);
