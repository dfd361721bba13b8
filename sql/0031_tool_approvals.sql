-- A tool call that waits for a person's yes. A permission rule may ask for approval beside allowing or denying,
-- saying who may give it (the person whose turn it is, or the company's admins too) and how long it waits.
ALTER TABLE mcp_permissions DROP CONSTRAINT mcp_permissions_effect_check;
ALTER TABLE mcp_permissions ADD CONSTRAINT mcp_permissions_effect_check CHECK (effect IN ('allow', 'deny', 'approve'));
ALTER TABLE mcp_permissions ADD COLUMN approvers text NOT NULL DEFAULT 'self' CHECK (approvers IN ('self', 'admins'));
ALTER TABLE mcp_permissions ADD COLUMN approval_timeout_seconds integer NOT NULL DEFAULT 300 CHECK (approval_timeout_seconds BETWEEN 10 AND 86400);

-- Each request and its one decision: the conditional update from pending is what makes a decision happen once,
-- whichever process or person gets there first.
CREATE TABLE tool_approvals (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  conversation_id uuid REFERENCES webchat_conversations (id) ON DELETE SET NULL,
  agent_id uuid REFERENCES agent_configs (id) ON DELETE SET NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  server text NOT NULL,
  tool text NOT NULL,
  arguments jsonb NOT NULL DEFAULT '{}',
  rule text NOT NULL,
  approvers text NOT NULL CHECK (approvers IN ('self', 'admins')),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled')),
  decided_by uuid REFERENCES users (id) ON DELETE SET NULL,
  decided_at timestamptz,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tool_approvals_company_idx ON tool_approvals (company_id, created_at DESC);
CREATE INDEX tool_approvals_conversation_idx ON tool_approvals (conversation_id) WHERE status = 'pending';
