-- SCIM 2.0 provisioning (RFC 7643/7644): a company's identity system creates, changes and deactivates its people and
-- their groups with a bearer token of the company's; the groups give roles through the company's role mappings.
CREATE TABLE scim_tokens (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  name text NOT NULL,
  token_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  last_used_at timestamptz,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX scim_tokens_company_idx ON scim_tokens (company_id);

CREATE TABLE scim_groups (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  display_name text NOT NULL,
  external_id text,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT scim_groups_name_key UNIQUE (company_id, display_name)
);
CREATE TABLE scim_group_members (
  group_id uuid NOT NULL REFERENCES scim_groups (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX scim_group_members_user_idx ON scim_group_members (user_id);

-- What the company's identity system calls the person, and whether it has deactivated them: a deactivated person
-- signs in nowhere, and their sessions and tokens are gone.
ALTER TABLE users ADD COLUMN external_id text;
ALTER TABLE users ADD COLUMN deactivated_at timestamptz;
-- A token acts with the role of whoever made it: the provisioning it does changes nobody above that role.
ALTER TABLE scim_tokens ADD COLUMN made_by_role text NOT NULL DEFAULT 'admin' CHECK (made_by_role IN ('admin', 'owner', 'superadmin'));
