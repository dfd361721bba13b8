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
  /** A regenerated answer: the first answer of its group. */
  version_of?: string
}
export type MessageStatus = NewMessage['status']

/**
 * Written by the turn loop itself: agent messages are not something a caller may post through the API. Into the
 * conversation's company, through the scoped builder like every tenant write.
 */
export async function insertMessage(db: Executor, message: NewMessage, id = Bun.randomUUIDv7()): Promise<string> {
  const { company_id, conversation_id, sender_id, agent_id, role, text, status, attachments = [], version_of = null } = message
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
        version_of: slot(9),
      }),
    [id, company_id, conversation_id, sender_id, agent_id, role, text, status, JSON.stringify(attachments), version_of],
    'keyed',
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
        .where('superseded_at', 'is', null)
        .where('id', '>', slot(1))
        .where('id', '<', slot(2))
        .orderBy('id', 'desc')
        .limit(HISTORY),
    values,
    'keyed',
  )
  return rows.reverse().map((row) => ({ role: row.role === 'agent' ? 'assistant' : 'user', content: row.text }))
}

/** What a regeneration answers again: the conversation's latest answer and the question before it. */
export interface LastExchange {
  question: { id: string; text: string; sender_id: string | null; attachments: Attachment[] }
  answer: { id: string; group: string }
}

/**
 * The conversation's latest question and the answer after it (the current version, whatever its status); undefined
 * when the conversation does not end with an answer to a person's message.
 */
export async function lastExchange(db: Executor, conversationId: string): Promise<LastExchange | undefined> {
  const rows = await db
    .selectFrom('webchat_messages')
    .select(['id', 'role', 'text', 'sender_id', 'attachments', 'version_of'])
    .where('conversation_id', '=', conversationId)
    .where('role', '<>', 'system')
    .where('superseded_at', 'is', null)
    .orderBy('id', 'desc')
    .limit(2)
    .execute()
  const [answer, question] = rows
  if (answer?.role !== 'agent' || question?.role !== 'user') return undefined
  return {
    question: { id: question.id, text: question.text, sender_id: question.sender_id, attachments: question.attachments as Attachment[] },
    answer: { id: answer.id, group: answer.version_of ?? answer.id },
  }
}

/** The answers of a group a new version replaces: kept, no longer current. */
export async function supersede(db: Executor, conversationId: string, group: string, newest: string): Promise<void> {
  await db
    .updateTable('webchat_messages')
    .set({ superseded_at: sql`now()` })
    .where('conversation_id', '=', conversationId)
    .where((eb) => eb.or([eb('id', '=', group), eb('version_of', '=', group)]))
    .where('id', '<>', newest)
    .where('superseded_at', 'is', null)
    .execute()
}
