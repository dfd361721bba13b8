-- The vault: secrets encrypted with AES-256-GCM under a key derived from the master key. Only ciphertext is stored;
-- the name and scope are bound to it as additional data, so a ciphertext copied to another row does not decrypt.
CREATE TABLE vault_secrets (
  id uuid PRIMARY KEY,
  scope text NOT NULL CHECK (scope IN ('global', 'company', 'user', 'agent')),
  -- The company, user or agent the secret belongs to; null for global secrets.
  owner_id uuid,
  name text NOT NULL,
  nonce text NOT NULL,
  ciphertext text NOT NULL,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT vault_secrets_owner_check CHECK ((scope = 'global') = (owner_id IS NULL))
);
CREATE UNIQUE INDEX vault_secrets_name_key ON vault_secrets (scope, coalesce(owner_id, '00000000-0000-0000-0000-000000000000'::uuid), name);
