-- Addresses each user has signed in from. Failed sign-ins from them are limited per address only, not by the
-- account's hourly cap, so someone guessing from elsewhere cannot lock the owner out.

CREATE TABLE known_login_addresses (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  address text NOT NULL,
  last_success_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, address)
);
