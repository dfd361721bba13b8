-- The platform's processes, each beating every few seconds while it runs: what /api/internal/status lists as alive.
-- A process removes its row when it stops; one that died is left behind and judged by its last beat.
CREATE TABLE processes (
  id uuid PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  version text NOT NULL,
  started_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  draining boolean NOT NULL DEFAULT false
);
