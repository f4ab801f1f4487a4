-- 005: agents and people managed from the dashboard (README "Agents and
-- people"). Only a hash of each agent key is kept; the key is shown once.
-- Agents and people written in config.toml are not copied here; state the
-- owner gives them at runtime (paused, last use) is kept in agent_state.
CREATE TABLE people (
    id         TEXT    PRIMARY KEY,
    name       TEXT    NOT NULL,
    created_ns INTEGER NOT NULL
);
CREATE TABLE agents (
    name         TEXT    PRIMARY KEY,
    user         TEXT    NOT NULL,           -- the person whose folder it works in, "companion" or "default"
    act_for      TEXT    NOT NULL DEFAULT '[]', -- JSON list of scopes
    ask          INTEGER NOT NULL DEFAULT 0, -- its commands need the owner's approval
    network      TEXT    NOT NULL DEFAULT 'ask', -- "ask" or "off"
    paused       INTEGER NOT NULL DEFAULT 0,
    key_sha256   BLOB    NOT NULL UNIQUE,
    created_ns   INTEGER NOT NULL,
    last_used_ns INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE agent_state (             -- agents from config.toml: what the owner set at runtime
    name         TEXT    PRIMARY KEY,
    paused       INTEGER NOT NULL DEFAULT 0,
    last_used_ns INTEGER NOT NULL DEFAULT 0
);
