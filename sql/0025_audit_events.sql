-- Who changed what, when and from where: one row per write an admin would ask about, inserted in the write's own
-- transaction so a change and its record stand or fall together. Rows are never updated; the retention sweep
-- deletes the old ones. No foreign keys: the trail outlives the people, companies and records it names.
CREATE TABLE audit_events (
  id uuid PRIMARY KEY,
  company_id uuid,
  actor_id uuid,
  action text NOT NULL,
  model text NOT NULL,
  record_id text,
  changes jsonb NOT NULL DEFAULT '{}'::jsonb,
  request_id text,
  address text,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_events_company_created_idx ON audit_events (company_id, created_at DESC);
CREATE INDEX audit_events_created_idx ON audit_events (created_at);
-- A company's admins also read the account events (sign-ins, passwords) of their members, which belong to no company.
CREATE INDEX audit_events_account_idx ON audit_events (record_id, created_at DESC) WHERE company_id IS NULL;
