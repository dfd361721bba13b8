-- The platform's catalogue of programs that may run as stdio MCP servers. Only superadmins write it: a company's
-- stdio server names an entry of it (and may set the variables the entry declares), never a command of its own.
CREATE TABLE mcp_commands (
  id uuid PRIMARY KEY,
  -- Null: offered to every company; else to that company alone.
  company_id uuid REFERENCES companies (id) ON DELETE CASCADE,
  name text NOT NULL UNIQUE,
  description text NOT NULL DEFAULT '',
  command text NOT NULL,
  args jsonb NOT NULL DEFAULT '[]',
  env jsonb NOT NULL DEFAULT '{}',
  variables jsonb NOT NULL DEFAULT '[]',
  network boolean NOT NULL DEFAULT false,
  enabled boolean NOT NULL DEFAULT true,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- A catalogue entry in use cannot be deleted (NO ACTION): the servers naming it would stop working unnoticed.
ALTER TABLE mcp_servers ADD COLUMN command_id uuid REFERENCES mcp_commands (id);

-- Commands that company admins wrote before the catalogue existed are kept, disabled, for a superadmin to review:
-- enabling one is a superadmin's decision to run it. Each stays its company's alone (its arguments may hold that
-- company's credentials) and keeps the network it had.
INSERT INTO mcp_commands (id, company_id, name, description, command, args, variables, network, enabled)
SELECT s.id,
       s.company_id,
       'migrated-' || replace(s.id::text, '-', ''),
       'The command of the server ' || s.name || ' before the catalogue existed; review it before enabling.',
       s.command,
       s.args,
       (SELECT coalesce(jsonb_agg(k.key ORDER BY k.key), '[]'::jsonb) FROM jsonb_object_keys(s.env) AS k (key)),
       true,
       false
  FROM mcp_servers s
 WHERE s.transport = 'stdio' AND s.command IS NOT NULL;
UPDATE mcp_servers SET command_id = id WHERE transport = 'stdio' AND command IS NOT NULL;
ALTER TABLE mcp_servers DROP COLUMN command;
ALTER TABLE mcp_servers DROP COLUMN args;

-- One-time links a company admin hands over instead of setting someone's password.
CREATE TABLE password_resets (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- The company whose admin made it, whose ladder must still allow it when it is used.
  company_id uuid REFERENCES companies (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX password_resets_user_idx ON password_resets (user_id);
