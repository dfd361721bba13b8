-- What the web chat shows of an agent before anyone writes: its picture, and prompts to start a conversation with.
ALTER TABLE agent_configs ADD COLUMN avatar text;
ALTER TABLE agent_configs ADD COLUMN starter_prompts jsonb NOT NULL DEFAULT '[]';
-- A stored picture is a person's or an agent's, never both; an agent has one at most, like a person.
ALTER TABLE user_avatars ALTER COLUMN user_id DROP NOT NULL;
ALTER TABLE user_avatars ADD COLUMN agent_id uuid REFERENCES agent_configs (id) ON DELETE CASCADE;
ALTER TABLE user_avatars ADD CONSTRAINT user_avatars_one_owner CHECK (num_nonnulls(user_id, agent_id) = 1);
CREATE UNIQUE INDEX user_avatars_agent_key ON user_avatars (agent_id);
