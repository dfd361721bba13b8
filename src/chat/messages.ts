import { sql } from 'kysely'
import type { Executor, NewWebchatMessage } from '../db/schema.ts'
import { companyScoped } from '../db/scoped.ts'
import { runTemplate, slot } from '../db/templates.ts'
import { WebchatMessage } from '../models/webchat.ts'
import type { ChatMessage } from '../runners/contract.ts'
import type { Attachment } from './events.ts'

/** How much of a conversation a turn gives the model. */
const HISTORY = 50

export type NewMessage = Required<Pick<NewWebchatMessage, 'company_id' | 'conversation_id' | 'sender_id' | 'agent_id' | 'role' | 'text' | 'status'>> & {
  attachments?: Attachment[]
}
export type MessageStatus = NewMessage['status']

/**
 * Written by the turn loop itself: agent messages are not something a caller may post through the API. Into the
 * conversation's company, through the scoped builder like every tenant write.
 */
export async function insertMessage(db: Executor, message: NewMessage, id = Bun.randomUUIDv7()): Promise<string> {
  const { company_id, conversation_id, sender_id, agent_id, role, text, status, attachments = [] } = message
  // Compiled once: on every turn this insert is time before the first token.
  await runTemplate(
    db,
    'chat|insert',
    () =>
      companyScoped(db, slot(1)).insertInto(WebchatMessage, {
        id: slot(0),
        conversation_id: slot(2),
        sender_id: slot(3),
        agent_id: slot(4),
        role: slot(5),
        text: slot(6),
        status: slot(7),
        attachments: sql`${slot(8)}::text::jsonb`,
      }),
    [id, company_id, conversation_id, sender_id, agent_id, role, text, status, JSON.stringify(attachments)],
  )
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

/**
 * The latest messages of a conversation before `beforeId` (and after `afterId`, when given), oldest first, as
 * runners want them. Ids are UUIDv7, so they order messages in time. System messages are the platform's notices
 * to the people in the conversation (a session that expired), not something the model said or was told.
 */
export async function history(db: Executor, conversationId: string, range: { beforeId?: string; afterId?: string } = {}): Promise<ChatMessage[]> {
  // An absent bound is the widest one (the nil and max UUIDs), so every turn shares one compiled query.
  const values = [conversationId, range.afterId ?? '00000000-0000-0000-0000-000000000000', range.beforeId ?? 'ffffffff-ffff-ffff-ffff-ffffffffffff']
  const rows = await runTemplate<{ role: 'user' | 'agent'; text: string }>(
    db,
    'chat|history',
    () =>
      db
        .selectFrom('webchat_messages')
        .select(['role', 'text'])
        .where('conversation_id', '=', slot(0))
        .where('status', '=', 'complete')
        .where('role', '<>', 'system')
        .where('id', '>', slot(1))
        .where('id', '<', slot(2))
        .orderBy('id', 'desc')
        .limit(HISTORY),
    values,
  )
  return rows.reverse().map((row) => ({ role: row.role === 'agent' ? 'assistant' : 'user', content: row.text }))
}
