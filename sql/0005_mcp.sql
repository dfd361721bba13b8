-- MCP servers a company offers its users and agents, and who may use which server and tool.
CREATE TABLE mcp_servers (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  transport text NOT NULL CHECK (transport IN ('stdio', 'streamable-http')),
  command text,
  args jsonb NOT NULL DEFAULT '[]',
  env jsonb NOT NULL DEFAULT '{}',
  url text,
  headers jsonb NOT NULL DEFAULT '{}',
  enabled boolean NOT NULL DEFAULT true,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT mcp_servers_company_name_key UNIQUE (company_id, name)
);

-- A rule: for one user (or, with no user, the company's default), on a server (or * for every server) and a tool
-- (or * for the whole server), allow or deny. Servers are named, so a rule can exist before its server does.
CREATE TABLE mcp_permissions (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id uuid REFERENCES users (id) ON DELETE CASCADE,
  server text NOT NULL,
  tool text NOT NULL DEFAULT '*',
  effect text NOT NULL CHECK (effect IN ('allow', 'deny')),
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX mcp_permissions_rule_key
  ON mcp_permissions (company_id, coalesce(user_id, '00000000-0000-0000-0000-000000000000'::uuid), server, tool);
