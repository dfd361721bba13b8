-- Background tasks (async_run_tool): a tool run that outlives the chat turn that started it. Rows are the truth for
-- every process: the per-person limit counts them, a cancel moves them, and a task whose process stopped is marked
-- interrupted here rather than lost.

CREATE TABLE background_tasks (
  id uuid PRIMARY KEY,
  version integer NOT NULL DEFAULT 1,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  -- Whose permissions the tool runs with (the agent's service account, when it has one).
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- Where the outcome is told; none when started through the MCP gateway or the API.
  conversation_id uuid,
  agent_id uuid,
  -- The tool by its model-facing name, server__tool.
  tool text NOT NULL,
  arguments jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'running'
    CHECK (status IN ('running', 'completed', 'failed', 'cancelled', 'interrupted')),
  -- The last progress notification of the tool: how far, out of how much, and what it said.
  progress double precision,
  progress_total double precision,
  progress_message text,
  result text,
  -- The result was cut to the stored maximum.
  result_truncated boolean NOT NULL DEFAULT false,
  error text,
  -- The process running it, and when that process last said it still is: a stale heartbeat means the process is gone.
  owner text,
  heartbeat_at timestamptz,
  finished_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT background_tasks_conversation_fkey FOREIGN KEY (company_id, conversation_id)
    REFERENCES webchat_conversations (company_id, id) ON DELETE SET NULL (conversation_id),
  CONSTRAINT background_tasks_agent_fkey FOREIGN KEY (company_id, agent_id)
    REFERENCES agent_configs (company_id, id) ON DELETE SET NULL (agent_id)
);
-- A person's tasks, newest first; and the running ones, which the limit counts and the sweep visits.
CREATE INDEX background_tasks_user_idx ON background_tasks (user_id, id);
CREATE INDEX background_tasks_running_idx ON background_tasks (heartbeat_at) WHERE status = 'running';
