-- State that several processes on one database must share (scale-out).

-- Token buckets of the throttles, when they are shared: one row per bucket, taken from in one statement. Unlogged:
-- a crash forgets them, which only refills every bucket, and each take skips the write-ahead log.
CREATE UNLOGGED TABLE throttle_buckets (
  key text PRIMARY KEY,
  tokens double precision NOT NULL,
  -- Milliseconds since the epoch, on the clock of the process that took last.
  at bigint NOT NULL,
  -- Whether the last take got a token: an update's RETURNING shows only the new row.
  allowed boolean NOT NULL,
  -- When the bucket is full again: a full bucket holds nothing a missing row would not, so the sweep deletes it.
  full_at bigint NOT NULL
);
CREATE INDEX throttle_buckets_full_at_idx ON throttle_buckets (full_at);

-- Events whose payload is over NOTIFY's limit travel as a reference to a row here; rows are swept after minutes.
CREATE TABLE event_payloads (
  id uuid PRIMARY KEY,
  type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_payloads_created_at_idx ON event_payloads (created_at);

-- MCP host sessions of the gateway: any process serves a session, so it lives here, not in one process's memory.
CREATE TABLE mcp_sessions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  company_id uuid REFERENCES companies (id) ON DELETE CASCADE,
  -- The gateway path's server name; '' for the aggregate /mcp.
  server text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_sessions_user_idx ON mcp_sessions (user_id, last_seen_at);
CREATE INDEX mcp_sessions_last_seen_idx ON mcp_sessions (last_seen_at);

-- Vault tokens of MCP subprocesses, hashed: whichever process a subprocess reaches validates them.
CREATE TABLE vault_tokens (
  token_hash text PRIMARY KEY,
  refs jsonb NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX vault_tokens_expires_at_idx ON vault_tokens (expires_at);
