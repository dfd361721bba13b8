-- Sign-in with a company's identity provider (OpenID Connect): the providers a company trusts, and which account
-- each provider's subject is. A person may have several (two providers, or a provider and a password).
CREATE TABLE identity_providers (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  slug text NOT NULL,
  name text NOT NULL,
  issuer text NOT NULL,
  client_id text NOT NULL,
  client_secret_secret text,
  scopes text NOT NULL DEFAULT 'openid email profile',
  enabled boolean NOT NULL DEFAULT true,
  listed boolean NOT NULL DEFAULT false,
  jit boolean NOT NULL DEFAULT true,
  link_by_email boolean NOT NULL DEFAULT false,
  groups_claim text NOT NULL DEFAULT 'groups',
  role_mapping jsonb NOT NULL DEFAULT '[]',
  default_role text CHECK (default_role IN ('member', 'admin')) DEFAULT 'member',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX identity_providers_company_idx ON identity_providers (company_id);
-- The slug is the provider's public name in the sign-in addresses (/auth/sso/{slug}), one per platform.
CREATE UNIQUE INDEX identity_providers_slug_key ON identity_providers (slug);

CREATE TABLE user_identities (
  id uuid PRIMARY KEY,
  provider_id uuid NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  subject text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT user_identities_subject_key UNIQUE (provider_id, subject)
);
CREATE INDEX user_identities_user_idx ON user_identities (user_id);

-- A company may require its members to sign in through one of its providers: passwords are refused for them.
ALTER TABLE companies ADD COLUMN require_sso boolean NOT NULL DEFAULT false;
-- A session begun at a provider remembers it, and the ID token, so signing out also ends the provider's session
-- (OpenID Connect RP-initiated logout).
ALTER TABLE sessions ADD COLUMN identity_provider_id uuid REFERENCES identity_providers (id) ON DELETE SET NULL;
ALTER TABLE sessions ADD COLUMN id_token text;
