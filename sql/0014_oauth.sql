-- The platform as an OAuth 2.1 authorization server for MCP hosts (Claude, Cursor, VS Code, the Inspector).
-- Clients come three ways: a URL whose metadata document the platform fetched (client_id = that URL), dynamic
-- registration (RFC 7591), or registered by a superadmin. Codes and tokens are stored as SHA-256 hashes only.

CREATE TABLE oauth_clients (
  id uuid PRIMARY KEY,
  version integer NOT NULL DEFAULT 1,
  client_id text NOT NULL UNIQUE,
  kind text NOT NULL CHECK (kind IN ('metadata_document', 'dynamic', 'preregistered')),
  client_name text NOT NULL DEFAULT '',
  client_uri text,
  redirect_uris jsonb NOT NULL DEFAULT '[]',
  token_endpoint_auth_method text NOT NULL DEFAULT 'none'
    CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post', 'client_secret_basic')),
  secret_hash text,
  -- A metadata document is read again once this is older than the cache time.
  fetched_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- What a person approved: this client may act as them on this resource, in this company, with these scopes.
-- Revoking (deleting) a grant ends every code and token issued under it.
CREATE TABLE oauth_grants (
  id uuid PRIMARY KEY,
  version integer NOT NULL DEFAULT 1,
  client_ref uuid NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  company_id uuid REFERENCES companies (id) ON DELETE CASCADE,
  resource text NOT NULL,
  scope text NOT NULL,
  last_used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_grants_user ON oauth_grants (user_id);
CREATE INDEX oauth_grants_client ON oauth_grants (client_ref);

CREATE TABLE oauth_codes (
  code_hash text PRIMARY KEY,
  grant_id uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  redirect_uri text NOT NULL,
  code_challenge text NOT NULL,
  expires_at timestamptz NOT NULL,
  -- A code is good once: a second exchange revokes the grant (RFC 6749 §4.1.2).
  used_at timestamptz
);
CREATE INDEX oauth_codes_grant ON oauth_codes (grant_id);

CREATE TABLE oauth_tokens (
  token_hash text PRIMARY KEY,
  grant_id uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
  expires_at timestamptz NOT NULL,
  -- Refresh tokens rotate: once used it is spent, and presenting it again revokes the grant.
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
