-- Voice: what a person said in a voice note (heard, with its transcript) and what an agent's answer sounded like
-- (spoken, in parts a platform accepts). The audio is kept beside the conversation's messages so the web chat can
-- play it and a channel's outbox can send it (a retry sends the same bytes, not a new synthesis).
CREATE TABLE voice_clips (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  conversation_id uuid NOT NULL REFERENCES webchat_conversations (id) ON DELETE CASCADE,
  message_id uuid,
  direction text NOT NULL CHECK (direction IN ('heard', 'spoken')),
  part integer NOT NULL DEFAULT 0 CHECK (part >= 0),
  media_type text NOT NULL,
  bytes bytea NOT NULL,
  duration_ms integer CHECK (duration_ms >= 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX voice_clips_conversation_idx ON voice_clips (conversation_id, created_at);
CREATE INDEX voice_clips_message_idx ON voice_clips (message_id) WHERE message_id IS NOT NULL;
-- A queued reply may be a voice clip (sent as the platform's voice message) instead of text.
ALTER TABLE channel_outbox ADD COLUMN voice_clip_id uuid REFERENCES voice_clips (id) ON DELETE CASCADE;
-- Speech is paid by the second: a transcription's or a synthesis's length, beside tokens and cost.
ALTER TABLE usage_records ADD COLUMN audio_ms integer NOT NULL DEFAULT 0 CHECK (audio_ms >= 0);
