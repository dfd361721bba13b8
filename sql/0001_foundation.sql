-- Foundation: tenants, users and the web chat store.
-- Every table carries `version` (bumped on each update) for ETag / If-Match, and timestamptz stamps.
-- Child tables of a tenant reference their parent by (company_id, id), so a row can never point at another
-- tenant's record even when the caller knows its id.

CREATE TABLE companies (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  slug text NOT NULL UNIQUE,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  username text NOT NULL,
  display_name text NOT NULL DEFAULT '',
  avatar text,
  is_superadmin boolean NOT NULL DEFAULT false,
  password_hash text,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE UNIQUE INDEX users_username_key ON users (lower(username));

CREATE TABLE company_users (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT company_users_company_user_key UNIQUE (company_id, user_id)
);
CREATE INDEX company_users_user_idx ON company_users (user_id);

CREATE TABLE user_platforms (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  platform text NOT NULL,
  platform_user_id text NOT NULL,
  platform_username text NOT NULL DEFAULT '',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT user_platforms_identity_key UNIQUE (company_id, platform, platform_user_id)
);
CREATE INDEX user_platforms_user_idx ON user_platforms (user_id);

CREATE TABLE agent_configs (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  enabled boolean NOT NULL DEFAULT true,
  personality text NOT NULL DEFAULT '',
  runner text NOT NULL,
  model text NOT NULL DEFAULT '',
  timeout_seconds integer NOT NULL DEFAULT 900,
  channels jsonb NOT NULL DEFAULT '{}',
  voice jsonb NOT NULL DEFAULT '{}',
  email jsonb NOT NULL DEFAULT '{}',
  mcp_permissions jsonb NOT NULL DEFAULT '{}',
  plugins jsonb NOT NULL DEFAULT '{}',
  context_options jsonb NOT NULL DEFAULT '{}',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT agent_configs_company_name_key UNIQUE (company_id, name),
  CONSTRAINT agent_configs_tenant_key UNIQUE (company_id, id)
);

CREATE TABLE webchat_conversations (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  agent_id uuid,
  title text NOT NULL DEFAULT '',
  context_prompt text NOT NULL DEFAULT '',
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webchat_conversations_tenant_key UNIQUE (company_id, id),
  CONSTRAINT webchat_conversations_agent_fkey FOREIGN KEY (company_id, agent_id)
    REFERENCES agent_configs (company_id, id) ON DELETE SET NULL (agent_id)
);
CREATE INDEX webchat_conversations_agent_idx ON webchat_conversations (agent_id);

CREATE TABLE webchat_participants (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL,
  conversation_id uuid NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  pinned_at timestamptz,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webchat_participants_conversation_user_key UNIQUE (conversation_id, user_id),
  CONSTRAINT webchat_participants_conversation_fkey FOREIGN KEY (company_id, conversation_id)
    REFERENCES webchat_conversations (company_id, id) ON DELETE CASCADE
);
CREATE INDEX webchat_participants_user_idx ON webchat_participants (user_id);

CREATE TABLE webchat_messages (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL,
  conversation_id uuid NOT NULL,
  sender_id uuid REFERENCES users (id) ON DELETE SET NULL,
  agent_id uuid,
  role text NOT NULL CHECK (role IN ('user', 'agent', 'system')),
  text text NOT NULL,
  attachments jsonb NOT NULL DEFAULT '[]',
  status text NOT NULL DEFAULT 'complete' CHECK (status IN ('complete', 'aborted', 'error')),
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webchat_messages_conversation_fkey FOREIGN KEY (company_id, conversation_id)
    REFERENCES webchat_conversations (company_id, id) ON DELETE CASCADE,
  CONSTRAINT webchat_messages_agent_fkey FOREIGN KEY (company_id, agent_id)
    REFERENCES agent_configs (company_id, id) ON DELETE SET NULL (agent_id)
);
CREATE INDEX webchat_messages_conversation_idx ON webchat_messages (conversation_id, id);

CREATE TABLE webchat_documents (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL,
  conversation_id uuid NOT NULL,
  uploaded_by uuid REFERENCES users (id) ON DELETE SET NULL,
  filename text NOT NULL,
  media_type text NOT NULL,
  size_bytes integer NOT NULL CHECK (size_bytes >= 0),
  extracted_text text NOT NULL DEFAULT '',
  truncated boolean NOT NULL DEFAULT false,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webchat_documents_conversation_fkey FOREIGN KEY (company_id, conversation_id)
    REFERENCES webchat_conversations (company_id, id) ON DELETE CASCADE
);
CREATE INDEX webchat_documents_conversation_idx ON webchat_documents (conversation_id);

-- Plans are built out by their own issue; the table exists now because conversation lists report `has_plan`.
CREATE TABLE plans (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL,
  conversation_id uuid NOT NULL,
  title text NOT NULL,
  status text NOT NULL DEFAULT 'draft'
    CHECK (status IN ('draft', 'active', 'paused', 'completed', 'cancelled')),
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT plans_conversation_fkey FOREIGN KEY (company_id, conversation_id)
    REFERENCES webchat_conversations (company_id, id) ON DELETE CASCADE
);
CREATE INDEX plans_conversation_idx ON plans (conversation_id);

CREATE TABLE system_config (
  id uuid PRIMARY KEY,
  key text NOT NULL UNIQUE,
  value jsonb NOT NULL,
  description text NOT NULL DEFAULT '',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE model_acls (
  id uuid PRIMARY KEY,
  model text NOT NULL,
  verb text NOT NULL CHECK (verb IN ('list', 'read', 'create', 'update', 'delete')),
  min_role text NOT NULL CHECK (min_role IN ('member', 'admin', 'owner', 'superadmin')),
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT model_acls_model_verb_key UNIQUE (model, verb)
);
