import { sql } from 'kysely'
import type { Executor } from '../db/schema.ts'
import type { ChatMessage } from '../runners/contract.ts'

/** How much of a conversation a turn gives the model. */
const HISTORY = 50

export interface NewMessage {
  company_id: string
  conversation_id: string
  sender_id: string | null
  agent_id: string | null
  role: 'user' | 'agent' | 'system'
  text: string
  status: 'complete' | 'aborted' | 'error'
}

/** Written by the turn loop itself: agent messages are not something a caller may post through the API. */
export async function insertMessage(db: Executor, message: NewMessage): Promise<string> {
  const id = Bun.randomUUIDv7()
  await db.insertInto('webchat_messages').values({ id, ...message, attachments: sql`'[]'::jsonb` }).execute()
  return id
}

/**
 * The id of the conversation's last message when it is older than `ttlMinutes`: the session behind it has
 * expired. Undefined while the session is fresh (or has no messages). Judged by the store's clock.
 */
export async function expiredSessionEnd(db: Executor, conversationId: string, ttlMinutes: number): Promise<string | undefined> {
  const last = await db
    .selectFrom('webchat_messages')
    .select(['id', sql<boolean>`created_at < now() - make_interval(mins => ${ttlMinutes})`.as('stale')])
    .where('conversation_id', '=', conversationId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst()
  return last?.stale ? last.id : undefined
}

/** The latest messages of a conversation (after `afterId`, when given), oldest first, as runners want them. */
export async function history(db: Executor, conversationId: string, afterId?: string): Promise<ChatMessage[]> {
  const rows = await db
    .selectFrom('webchat_messages')
    .select(['role', 'text'])
    .where('conversation_id', '=', conversationId)
    .where('status', '=', 'complete')
    .$if(afterId !== undefined, (q) => q.where('id', '>', afterId!))
    .orderBy('id', 'desc')
    .limit(HISTORY)
    .execute()
  return rows.reverse().map((row) => ({ role: row.role === 'agent' ? 'assistant' : row.role, content: row.text }))
}
