-- 011: rules the owner writes by hand carry a note; agents carry the
-- trust level the owner chose for them ("" for none chosen: their
-- settings say what they may do). Agents written in config.toml keep
-- theirs in agent_state.
ALTER TABLE rules ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN level TEXT NOT NULL DEFAULT '';
ALTER TABLE agent_state ADD COLUMN level TEXT NOT NULL DEFAULT '';
