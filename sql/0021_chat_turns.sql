-- The chat turns running now, one row each, so that every process counts a person's turns alike: a person may have
-- only so many answers being written at once. A row outlives a crashed process only until its lease runs out.
CREATE TABLE chat_turns (
  conversation_id uuid PRIMARY KEY,
  user_id uuid NOT NULL,
  lease_until timestamptz NOT NULL
);
CREATE INDEX chat_turns_user ON chat_turns (user_id);
