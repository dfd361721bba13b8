import { sql } from 'kysely'
import type { Executor } from '../db/schema.ts'

/**
 * Deletes the conversations with no message for `days` days (their messages, documents and plans go with them), a
 * batch at a time; none when `days` is 0 (keep them). Answers how many went.
 */
export async function sweepConversations(db: Executor, days: number, now: number, batch = 500): Promise<number> {
  if (days <= 0) return 0
  const cutoff = new Date(now - days * 86_400_000)
  let total = 0
  for (;;) {
    const stale = db
      .selectFrom('webchat_conversations as c')
      .select('c.id')
      .where('c.created_at', '<', cutoff)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('webchat_messages as m').select(sql`1`.as('one')).whereRef('m.conversation_id', '=', 'c.id').where('m.created_at', '>=', cutoff))))
      .limit(batch)
    const deleted = await db.deleteFrom('webchat_conversations').where('id', 'in', stale).executeTakeFirst()
    const n = Number(deleted.numDeletedRows)
    total += n
    if (n < batch) return total
  }
}
