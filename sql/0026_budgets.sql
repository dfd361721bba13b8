-- Usage by agent, with the tool calls a turn made; and monthly budgets per company and per person.
ALTER TABLE usage_records ADD COLUMN agent_id uuid REFERENCES agent_configs (id) ON DELETE SET NULL;
ALTER TABLE usage_records ADD COLUMN tool_calls integer NOT NULL DEFAULT 0 CHECK (tool_calls >= 0);
CREATE INDEX usage_records_user_created_idx ON usage_records (user_id, created_at) WHERE user_id IS NOT NULL;

-- What a company (user_id null) or one person in it may spend in a calendar month (UTC), in USD or in tokens. Past
-- 80 % people are told; at 100 % turns and tool calls are refused until the month ends, the limit is raised, or an
-- admin lifts it (lifted_until).
CREATE TABLE budgets (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id uuid REFERENCES users (id) ON DELETE CASCADE,
  metric text NOT NULL CHECK (metric IN ('cost_usd', 'tokens')),
  monthly_limit double precision NOT NULL CHECK (monthly_limit > 0),
  lifted_until timestamptz,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX budgets_scope_key ON budgets (company_id, coalesce(user_id, '00000000-0000-0000-0000-000000000000'::uuid), metric);
