-- What agents hand over to people (create_artifact): a document, a page, a table or a picture, kept in the store
-- (every process serves share links) for a time to live, unless pinned. A sweeper deletes expired unpinned ones;
-- revoking keeps the artifact but stops every share link at once.

CREATE TABLE artifacts (
  id uuid PRIMARY KEY,
  version integer NOT NULL DEFAULT 1,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  -- The person it was made for: they alone see and act on it.
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- Where it was made, when an agent's chat turn made it; the artifact outlives both.
  conversation_id uuid REFERENCES webchat_conversations (id) ON DELETE SET NULL,
  agent_id uuid REFERENCES agent_configs (id) ON DELETE SET NULL,
  title text NOT NULL,
  media_type text NOT NULL CHECK (media_type IN (
    'text/plain', 'text/markdown', 'text/html', 'application/json', 'text/csv',
    'image/png', 'image/jpeg', 'image/gif', 'image/webp')),
  size_bytes integer NOT NULL CHECK (size_bytes > 0),
  content bytea NOT NULL,
  -- Unpinning restarts the time to live from this many days.
  ttl_days integer NOT NULL DEFAULT 30 CHECK (ttl_days BETWEEN 1 AND 365),
  pinned boolean NOT NULL DEFAULT false,
  -- A pinned artifact never expires; an unpinned one always does.
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT artifacts_expiry_check CHECK (pinned = (expires_at IS NULL))
);
CREATE INDEX artifacts_owner ON artifacts (company_id, user_id, created_at);
-- The sweeper's question: which unpinned artifacts are past their time.
CREATE INDEX artifacts_expiry ON artifacts (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX artifacts_conversation ON artifacts (conversation_id);
CREATE INDEX artifacts_agent ON artifacts (agent_id);
