-- Pictures people upload for themselves (PUT /api/me/avatar), kept in the database because every process serving
-- /static/avatars/ shares it, and local files would be on one machine only. users.avatar names the current one as
-- /static/avatars/<id>.<ext>; a new upload gets a new id, so a cached old picture is never served under the new name.

CREATE TABLE user_avatars (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  media_type text NOT NULL CHECK (media_type IN ('image/png', 'image/jpeg', 'image/gif', 'image/webp')),
  bytes bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One stored picture per person: an upload replaces the previous one.
CREATE UNIQUE INDEX user_avatars_user_key ON user_avatars (user_id);
