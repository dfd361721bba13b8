-- Plans get their tasks and state machines (DESIGN §4, Plans). Until now a plan's status was anyone's to write, and
-- a conversation could hold several live plans: the newest live one is kept, the others are cancelled.

ALTER TABLE plans ADD COLUMN description text NOT NULL DEFAULT '';
ALTER TABLE plans ADD COLUMN created_by uuid REFERENCES users (id) ON DELETE SET NULL;
-- Whose permissions continuation turns run with: who executed or last resumed the plan.
ALTER TABLE plans ADD COLUMN driven_by uuid REFERENCES users (id) ON DELETE SET NULL;
-- Continuation messages sent since the plan was last executed or resumed (at most 20 per execution).
ALTER TABLE plans ADD COLUMN continuations integer NOT NULL DEFAULT 0;

UPDATE plans SET status = 'cancelled'
WHERE status IN ('draft', 'active', 'paused')
  AND id NOT IN (
    SELECT DISTINCT ON (conversation_id) id FROM plans
    WHERE status IN ('draft', 'active', 'paused')
    ORDER BY conversation_id, created_at DESC, id DESC
  );
CREATE UNIQUE INDEX plans_one_live_idx ON plans (conversation_id) WHERE status IN ('draft', 'active', 'paused');

CREATE TABLE plan_tasks (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL,
  plan_id uuid NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
  position integer NOT NULL,
  title text NOT NULL,
  description text NOT NULL DEFAULT '',
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'in_progress', 'completed', 'failed', 'skipped')),
  -- What the agent said when it finished, failed or skipped the task.
  note text NOT NULL DEFAULT '',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plan_tasks_plan_idx ON plan_tasks (plan_id, position);
