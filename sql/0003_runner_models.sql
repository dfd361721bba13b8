-- The model registry of each runner: what agents may pick (`model_id`), and what is sent on the wire and priced
-- (`api_id`). Hand-curated rows keep their name and api_id through catalogue refreshes.
CREATE TABLE runner_models (
  id uuid PRIMARY KEY,
  runner text NOT NULL,
  model_id text NOT NULL,
  name text NOT NULL,
  api_id text NOT NULL,
  placeholder boolean NOT NULL DEFAULT false,
  curated boolean NOT NULL DEFAULT false,
  in_catalogue boolean NOT NULL DEFAULT false,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT runner_models_runner_model_key UNIQUE (runner, model_id)
);
