-- Each person archives a conversation for themselves (like a pin), and finds conversations by the words in them:
-- full-text search over message text, with the 'simple' configuration (no stemming, so no language is assumed).
ALTER TABLE webchat_participants ADD COLUMN archived_at timestamptz;
CREATE INDEX webchat_messages_text_search_idx ON webchat_messages USING gin (to_tsvector('simple', text));
-- The console's overview counts a company's messages of the day.
CREATE INDEX webchat_messages_company_time_idx ON webchat_messages (company_id, created_at);
-- An answer regenerated: the new one names the group's first answer (version_of); the ones it replaced are
-- superseded, kept for the person to flip back to, and no longer part of what the model reads.
ALTER TABLE webchat_messages ADD COLUMN version_of uuid;
ALTER TABLE webchat_messages ADD COLUMN superseded_at timestamptz;
CREATE INDEX webchat_messages_version_of_idx ON webchat_messages (version_of) WHERE version_of IS NOT NULL;
