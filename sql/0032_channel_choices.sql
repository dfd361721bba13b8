-- Buttons a queued reply offers on platforms that have them (a tool approval's Approve and Deny): each sends its
-- text back as the person's message when pressed. Platforms without buttons send the text alone, which says how
-- to answer in words.
ALTER TABLE channel_outbox ADD COLUMN choices jsonb;
