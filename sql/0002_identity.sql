-- Identity: browser sessions and personal API tokens. Only SHA-256 hashes of the secrets are stored.

CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  -- Slides forward with use (written at most once a minute); the session ends after the inactivity window.
  last_seen_at timestamptz NOT NULL,
  -- Fixed at sign-in: the session never outlives the maximum age, however active.
  expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE api_tokens (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  token_hash text NOT NULL UNIQUE,
  -- The first characters of the token, so a person can tell their tokens apart.
  prefix text NOT NULL,
  expires_at timestamptz,
  last_used_at timestamptz,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id);
