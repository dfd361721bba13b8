-- Remote MCP servers that sign each person in with OAuth: the person connects their own account, and the tokens
-- sit in the vault under that person (name mcp-oauth/<server id>). This table says where each connection stands,
-- so that pages and catalogues need not decrypt anything to know.

ALTER TABLE mcp_servers ADD COLUMN oauth boolean NOT NULL DEFAULT false;

CREATE TABLE mcp_connections (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  server_id uuid NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
  -- expired: the server answered 401 and refreshing did not help; the person must reconnect.
  status text NOT NULL CHECK (status IN ('connected', 'expired')),
  changed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, server_id)
);
