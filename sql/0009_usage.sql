-- What model calls cost, per company and user: one row per call made outside a chat turn (an /rlm-query), with
-- the runner and model it went to. A user's rows outlive them (user_id set null), so a company's totals stay.
CREATE TABLE usage_records (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  source text NOT NULL,
  runner text NOT NULL,
  model text NOT NULL,
  input_tokens integer NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
  output_tokens integer NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
  cost_usd double precision NOT NULL DEFAULT 0 CHECK (cost_usd >= 0),
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_records_company_created_idx ON usage_records (company_id, created_at);
