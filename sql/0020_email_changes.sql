-- A new address for an account waits here until the person opens the link mailed to it, signed in: until then the
-- old address stays the account's, and the new one counts nowhere (sign-in, the email channel, uniqueness).
CREATE TABLE email_changes (
  user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  email text NOT NULL,
  token_hash text NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
