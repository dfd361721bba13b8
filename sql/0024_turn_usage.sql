-- Chat turns cost too: one row per turn, written by the process that ran it once the turn has ended (answered,
-- stopped, failed or out of time), with its conversation and how it ended; a stopped turn's row holds what the
-- provider had reported by then.
ALTER TABLE usage_records ADD COLUMN conversation_id uuid REFERENCES webchat_conversations (id) ON DELETE SET NULL;
ALTER TABLE usage_records ADD COLUMN outcome text CHECK (outcome IN ('complete', 'aborted', 'error'));
CREATE INDEX usage_records_conversation_idx ON usage_records (conversation_id) WHERE conversation_id IS NOT NULL;
