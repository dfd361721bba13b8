import { sql } from 'kysely'
import type { Executor } from '../db/schema.ts'

/** A channel delivery or reply that failed, for the overview to say where to look. */
export interface ChannelFailure {
  agent_id: string
  agent_name: string
  platform: string
  direction: 'inbound' | 'reply'
  error: string
  at: string
}

/** "Is everything all right?" for one company, since the start of the day (UTC). */
export interface CompanyOverview {
  since: string
  turns: number
  failed_turns: number
  /** Conversations with a message in the last 24 hours. */
  active_conversations: number
  channels: { waiting_inbound: number; waiting_replies: number; failed: number; latest_failures: ChannelFailure[] }
  background_tasks: { running: number; failed: number }
}

const DAY_MS = 86_400_000

/**
 * One round trip's worth of counts over the company's rows (each a sub-select on an indexed or company-bounded set),
 * read by the console's overview. Counts are cast in SQL: the drivers disagree on count()'s type.
 */
export async function companyOverview(db: Executor, companyId: string, now: number): Promise<CompanyOverview> {
  const since = new Date(Math.floor(now / DAY_MS) * DAY_MS)
  const dayAgo = new Date(now - DAY_MS)
  const counts = await sql<{
    turns: number
    failed_turns: number
    active_conversations: number
    waiting_inbound: number
    waiting_replies: number
    failed_inbound: number
    failed_replies: number
    running_tasks: number
    failed_tasks: number
  }>`
    select
      (select count(*)::int from webchat_messages where company_id = ${companyId} and role = 'agent' and created_at >= ${since}) as turns,
      (select count(*)::int from webchat_messages where company_id = ${companyId} and role = 'agent' and status = 'error' and created_at >= ${since}) as failed_turns,
      (select count(distinct conversation_id)::int from webchat_messages where company_id = ${companyId} and created_at >= ${dayAgo}) as active_conversations,
      (select count(*)::int from channel_inbox where company_id = ${companyId} and status = 'pending') as waiting_inbound,
      (select count(*)::int from channel_outbox where company_id = ${companyId} and status = 'pending') as waiting_replies,
      (select count(*)::int from channel_inbox where company_id = ${companyId} and status = 'failed' and created_at >= ${since}) as failed_inbound,
      (select count(*)::int from channel_outbox where company_id = ${companyId} and status = 'failed' and created_at >= ${since}) as failed_replies,
      (select count(*)::int from background_tasks where company_id = ${companyId} and status = 'running') as running_tasks,
      (select count(*)::int from background_tasks where company_id = ${companyId} and status in ('failed', 'interrupted') and created_at >= ${since}) as failed_tasks
  `.execute(db)
  const failures = await sql<{ agent_id: string; agent_name: string; platform: string; direction: 'inbound' | 'reply'; error: string | null; at: Date | string }>`
    select f.agent_id, a.name as agent_name, f.platform, f.direction, f.last_error as error, f.at
    from (
      select agent_id, platform, 'inbound' as direction, last_error, created_at as at from channel_inbox
        where company_id = ${companyId} and status = 'failed' and created_at >= ${since}
      union all
      select agent_id, platform, 'reply' as direction, last_error, created_at as at from channel_outbox
        where company_id = ${companyId} and status = 'failed' and created_at >= ${since}
    ) f
    join agent_configs a on a.id = f.agent_id
    order by f.at desc
    limit 5
  `.execute(db)
  const row = counts.rows[0]!
  return {
    since: since.toISOString(),
    turns: row.turns,
    failed_turns: row.failed_turns,
    active_conversations: row.active_conversations,
    channels: {
      waiting_inbound: row.waiting_inbound,
      waiting_replies: row.waiting_replies,
      failed: row.failed_inbound + row.failed_replies,
      latest_failures: failures.rows.map((f) => ({ ...f, error: f.error ?? 'no error was recorded', at: new Date(f.at).toISOString() })),
    },
    background_tasks: { running: row.running_tasks, failed: row.failed_tasks },
  }
}
