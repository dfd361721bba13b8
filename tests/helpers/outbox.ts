import { jsonb } from '../../src/db/jsonb.ts'
import type { Db } from '../../src/db/schema.ts'

/**
 * A reply queued for Telegram as the channel worker leaves it: `failed` with the platform's error, `sent`, or
 * `pending` (due a day from now, so that the worker leaves it alone while a test reads it).
 */
export async function queuedReply(db: Db, agentId: string, status: 'pending' | 'sent' | 'failed', error = 'chat not found'): Promise<void> {
  const agent = await db.selectFrom('agent_configs').select('company_id').where('id', '=', agentId).executeTakeFirstOrThrow()
  await db
    .insertInto('channel_outbox')
    .values({
      id: Bun.randomUUIDv7(),
      company_id: agent.company_id,
      agent_id: agentId,
      platform: 'telegram',
      key: `${status}-${crypto.randomUUID()}`,
      thread_key: 'c-1',
      target: jsonb({ chat_id: 'c-1' }),
      parts: jsonb(['hello']),
      status,
      last_error: status === 'failed' ? error : null,
      next_attempt_at: new Date(Date.now() + 86_400_000),
    })
    .execute()
}
