-- Replies of agents to bridged platforms (an out-of-process bot for Discord, Matrix, Teams…) that take no callback:
-- kept until the bridge fetches them, each handed out once.
CREATE TABLE bridge_replies (
  id uuid PRIMARY KEY,
  agent_id uuid NOT NULL REFERENCES agent_configs (id) ON DELETE CASCADE,
  network text NOT NULL,
  thread text NOT NULL,
  text text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bridge_replies_agent_idx ON bridge_replies (agent_id, created_at);
