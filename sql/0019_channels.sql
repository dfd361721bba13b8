-- Channels: agents answer on Telegram, Slack, WhatsApp and email. Platforms retry their deliveries and any process
-- may receive one, so what arrives and what goes out are rows: the inbox's unique key makes a delivery count once
-- across processes, and the outbox keeps a reply until the platform took it (retried with backoff, never dropped).

-- One row per delivery a channel plugin accepted (signature verified): the platform's own id is the key.
CREATE TABLE channel_inbox (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  agent_id uuid NOT NULL,
  platform text NOT NULL,
  delivery_id text NOT NULL,
  -- Deliveries of one thread are answered one after the other, in the order they came.
  thread_key text NOT NULL,
  -- The message as the plugin read it: sender, thread, text, attachments.
  message jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- While a process works on it; a lease that ran out (the process is gone) lets another take it. The owner is
  -- that claim's own token: a process that stalled past its lease can no longer write the row.
  lease_until timestamptz,
  lease_owner uuid,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  done_at timestamptz,
  CONSTRAINT channel_inbox_delivery_key UNIQUE (agent_id, platform, delivery_id),
  CONSTRAINT channel_inbox_agent_fkey FOREIGN KEY (company_id, agent_id) REFERENCES agent_configs (company_id, id) ON DELETE CASCADE
);
CREATE INDEX channel_inbox_due_idx ON channel_inbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX channel_inbox_thread_idx ON channel_inbox (agent_id, platform, thread_key, created_at) WHERE status = 'pending';

-- A platform thread (a Telegram chat, a Slack thread, a WhatsApp number, an email thread) of one person is one
-- conversation; `target` is where its answers go, as the plugin last described it.
CREATE TABLE channel_threads (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  agent_id uuid NOT NULL,
  platform text NOT NULL,
  thread_key text NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  conversation_id uuid NOT NULL,
  target jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT channel_threads_key UNIQUE (agent_id, platform, thread_key, user_id),
  CONSTRAINT channel_threads_conversation_key UNIQUE (conversation_id),
  CONSTRAINT channel_threads_agent_fkey FOREIGN KEY (company_id, agent_id) REFERENCES agent_configs (company_id, id) ON DELETE CASCADE,
  CONSTRAINT channel_threads_conversation_fkey FOREIGN KEY (company_id, conversation_id)
    REFERENCES webchat_conversations (company_id, id) ON DELETE CASCADE
);

-- What goes back to a platform. `key` names what is sent (the agent's message id, or the delivery a notice
-- answers), so the same answer is queued once however many processes see it.
CREATE TABLE channel_outbox (
  id uuid PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  agent_id uuid NOT NULL,
  platform text NOT NULL,
  key text NOT NULL,
  -- Answers to one thread go out in the order they were queued: a later one waits while an earlier one is retried.
  thread_key text NOT NULL,
  target jsonb NOT NULL,
  -- The text cut to the platform's limit; parts_sent of them went out (a retry resumes after them).
  parts jsonb NOT NULL,
  parts_sent integer NOT NULL DEFAULT 0,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz,
  lease_owner uuid,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  CONSTRAINT channel_outbox_key UNIQUE (agent_id, platform, key),
  CONSTRAINT channel_outbox_agent_fkey FOREIGN KEY (company_id, agent_id) REFERENCES agent_configs (company_id, id) ON DELETE CASCADE
);
CREATE INDEX channel_outbox_due_idx ON channel_outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX channel_outbox_thread_idx ON channel_outbox (agent_id, platform, thread_key, created_at) WHERE status = 'pending';

-- What the console shows of each agent's channel: when the platform last reached us, the last delivery, the last error.
CREATE TABLE channel_status (
  agent_id uuid NOT NULL,
  platform text NOT NULL,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  last_seen_at timestamptz,
  last_delivery_at timestamptz,
  last_error text,
  last_error_at timestamptz,
  PRIMARY KEY (agent_id, platform),
  CONSTRAINT channel_status_agent_fkey FOREIGN KEY (company_id, agent_id) REFERENCES agent_configs (company_id, id) ON DELETE CASCADE
);

-- A code a person gets on /me and sends to an agent on a platform, linking that platform identity to them. Kept
-- hashed: the code itself is a credential for a few minutes.
CREATE TABLE channel_link_codes (
  code_hash text PRIMARY KEY,
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX channel_link_codes_user_idx ON channel_link_codes (user_id);
