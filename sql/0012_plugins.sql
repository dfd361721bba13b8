-- Plugins switched on and off at runtime, and their settings. A plugin without a row has the default state:
-- enabled, except themes, which wait to be chosen. Secret settings are not here: they live in the vault as
-- plugins/<plugin>/<key>.
CREATE TABLE plugin_states (
  name text PRIMARY KEY,
  enabled boolean NOT NULL,
  -- The non-secret settings an admin stored, validated against the manifest's config_schema on write.
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Counts the writes: the settings' ETag, and how processes tell that settings changed.
  version integer NOT NULL DEFAULT 1,
  updated_at timestamptz NOT NULL DEFAULT now()
);
