-- The web chat: every person in a conversation has a participant row (its creator too), with their own pin and
-- their own read marker.

ALTER TABLE webchat_participants ADD COLUMN last_read_at timestamptz;

-- Conversations created before creators had a row: they get theirs, having read everything so far.
INSERT INTO webchat_participants (id, company_id, conversation_id, user_id, last_read_at)
SELECT gen_random_uuid(), c.company_id, c.id, c.created_by, now()
FROM webchat_conversations c
WHERE c.created_by IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM webchat_participants p WHERE p.conversation_id = c.id AND p.user_id = c.created_by);

-- Everyone else has read what came before the upgrade too: a list full of old messages marked unread helps nobody.
UPDATE webchat_participants SET last_read_at = now() WHERE last_read_at IS NULL;

-- A person's conversations, for the chat's list.
CREATE INDEX webchat_participants_user_conversation_idx ON webchat_participants (user_id, conversation_id);
DROP INDEX webchat_participants_user_idx;
