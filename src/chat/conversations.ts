import { sql } from 'kysely'
import type { Actor } from '../auth/actor.ts'
import type { Executor } from '../db/schema.ts'
import { companyScoped, scoped } from '../db/scoped.ts'
import { runTemplate, slot } from '../db/templates.ts'
import { ApiError } from '../errors.ts'
import { getRecordFields } from '../models/records.ts'
import { CompanyUser } from '../models/company.ts'
import { WebchatConversation, WebchatDocument, WebchatParticipant } from '../models/webchat.ts'
import type { Attachment } from './events.ts'

/** What the chat reads of a conversation for a turn, a typing notice or a stop. */
export interface ChatConversation {
  id: string
  company_id: string
  agent_id: string | null
  title: string
  context_prompt: string
  /** More than one person takes part. */
  shared: boolean
}

/**
 * The conversation as the chat reads it, where the caller takes part (else not found): without its cost and plan,
 * which the API adds to the record and the chat never uses, and whose sum over every turn's usage grows with the
 * conversation.
 */
export async function chatConversation(db: Executor, actor: Actor, id: string): Promise<ChatConversation> {
  return (await getRecordFields(db, actor, WebchatConversation, id, ['id', 'company_id', 'agent_id', 'title', 'context_prompt', 'shared'])) as ChatConversation
}

/** One line of a person's conversation list: their pin and unread count, and whether others take part. */
export interface ConversationSummary {
  id: string
  title: string
  agent_id: string | null
  agent_name: string | null
  /** The caller's own participant row, where their pin lives. */
  participant_id: string
  pinned_at: string | null
  archived_at: string | null
  shared: boolean
  /** Messages from others (people and the agent) since the caller last read the conversation. */
  unread: number
  last_message_at: string | null
  created_at: string
}

/** How many conversations the list shows: pinned first, then the latest. */
const LIST_LIMIT = 200

export interface ConversationFilter {
  /** Words the title or a message holds (each as a word's beginning: "launc" finds "launch"). */
  q?: string
  /** The archived conversations instead of the others. */
  archived?: boolean
}

/**
 * A full-text query (the 'simple' configuration, as the index has it) in which each word the person typed must begin
 * a word of the text. Only letters and digits are taken from what they typed, so no input is a syntax error.
 */
export function prefixQuery(q: string): string | undefined {
  const words = (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 8)
  return words.length ? words.map((word) => `${word}:*`).join(' & ') : undefined
}

export async function listConversations(db: Executor, actor: Actor, filter: ConversationFilter = {}): Promise<ConversationSummary[]> {
  const query = filter.q === undefined ? undefined : prefixQuery(filter.q)
  const rows = await scoped(db, actor)
    .selectFrom(WebchatParticipant)
    .innerJoin('webchat_conversations as c', 'c.id', 'webchat_participants.conversation_id')
    .leftJoin('agent_configs as a', 'a.id', 'c.agent_id')
    .select([
      'c.id',
      'c.title',
      'c.agent_id',
      'a.name as agent_name',
      'webchat_participants.id as participant_id',
      'webchat_participants.pinned_at',
      'webchat_participants.archived_at',
      'c.created_at',
      sql<boolean>`(select count(*) from webchat_participants o where o.conversation_id = c.id) > 1`.as('shared'),
      sql<number>`(select count(*) from webchat_messages m where m.conversation_id = c.id and m.role <> 'system'
        and m.sender_id is distinct from webchat_participants.user_id
        and m.created_at > coalesce(webchat_participants.last_read_at, '-infinity'::timestamptz))::int`.as('unread'),
      sql<Date | null>`(select max(m.created_at) from webchat_messages m where m.conversation_id = c.id)`.as('last_message_at'),
    ])
    .where('webchat_participants.user_id', '=', actor.userId)
    .where('webchat_participants.archived_at', filter.archived ? 'is not' : 'is', null)
    .$if(query !== undefined, (qb) =>
      qb.where(
        sql<boolean>`(to_tsvector('simple', c.title) @@ to_tsquery('simple', ${query})
          or exists (select 1 from webchat_messages m where m.conversation_id = c.id and to_tsvector('simple', m.text) @@ to_tsquery('simple', ${query})))`,
      ),
    )
    .orderBy(sql`webchat_participants.pinned_at desc nulls last`)
    .orderBy(sql`coalesce((select max(m.created_at) from webchat_messages m where m.conversation_id = c.id), c.created_at) desc`)
    .limit(LIST_LIMIT)
    .execute()
  return rows.map((row) => ({
    ...row,
    unread: Number(row.unread),
    pinned_at: iso(row.pinned_at),
    archived_at: iso(row.archived_at),
    last_message_at: iso(row.last_message_at),
    created_at: iso(row.created_at)!,
  }))
}

function iso(value: Date | string | null): string | null {
  return value === null ? null : new Date(value).toISOString()
}

/** Everything in the conversation up to now counts as read by the caller. 404 unless they take part. */
export async function markRead(db: Executor, actor: Actor, conversationId: string): Promise<void> {
  const row = await scoped(db, actor)
    .updateTable(WebchatParticipant)
    .set({ last_read_at: sql`now()` })
    .where('webchat_participants.conversation_id', '=', conversationId)
    .where('webchat_participants.user_id', '=', actor.userId)
    .returning('webchat_participants.id')
    .executeTakeFirst()
  if (!row) throw new ApiError('not_found', `No WebchatConversation with id ${conversationId}.`)
}

/** Who takes part in a conversation, by user id: whose sockets hear of it when they are elsewhere. */
export async function participantIds(db: Executor, conversationId: string): Promise<string[]> {
  const rows = await db.selectFrom('webchat_participants').select('user_id').where('conversation_id', '=', conversationId).execute()
  return rows.map((row) => row.user_id)
}

/**
 * The people of the caller's company a conversation may be shared with, matched on part of a name, or on a whole
 * email address: a member may not read colleagues' records, so a part of an address must not reveal it.
 */
export async function colleagues(db: Executor, actor: Actor, query: string): Promise<Array<{ id: string; username: string; display_name: string }>> {
  const pattern = `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  return scoped(db, actor)
    .selectFrom(CompanyUser)
    .innerJoin('users as u', 'u.id', 'company_users.user_id')
    .select(['u.id', 'u.username', 'u.display_name'])
    .where((eb) => eb.or([eb('u.username', 'ilike', pattern), eb('u.display_name', 'ilike', pattern), eb(eb.fn('lower', ['u.email']), '=', query.toLowerCase())]))
    .orderBy('u.username')
    .limit(20)
    .execute()
}

/** The name a user goes by in the chat. */
export async function displayName(db: Executor, userId: string): Promise<string> {
  // Compiled once: every turn reads it beside its other reads, before the first token.
  const [row] = await runTemplate<{ name: string }>(
    db,
    'users|display-name',
    () => db.selectFrom('users').select(sql<string>`coalesce(nullif(display_name, ''), username)`.as('name')).where('id', '=', slot(0)),
    [userId],
    'keyed',
  )
  return row?.name ?? 'someone'
}

/** The documents a message attaches, as it stores them; each must be one of the conversation's. */
export async function attachmentsOf(db: Executor, actor: Actor, conversationId: string, ids: string[], voiceClipId?: string): Promise<Attachment[]> {
  const wanted = [...new Set(ids.map((id) => id.toLowerCase()))]
  const rows = wanted.length
    ? await scoped(db, actor)
        .selectFrom(WebchatDocument)
        .select(['id', 'filename', 'media_type', 'size_bytes'])
        .where('webchat_documents.conversation_id', '=', conversationId.toLowerCase())
        .where('webchat_documents.id', 'in', wanted)
        .execute()
    : []
  if (rows.length !== wanted.length) {
    throw new ApiError('validation_error', 'An attachment is not a document of this conversation.', { errors: [{ path: 'attachments', message: 'no such document in this conversation' }] })
  }
  const documents: Attachment[] = rows.map((row) => ({ document_id: row.id, name: row.filename, media_type: row.media_type, size_bytes: row.size_bytes }))
  return voiceClipId ? [await heardClip(db, actor, conversationId, voiceClipId), ...documents] : documents
}

/** A voice note heard in this conversation and not yet said as a message: what the message's text was heard from. */
async function heardClip(db: Executor, actor: Actor, conversationId: string, id: string): Promise<Attachment> {
  const clip = await db
    .selectFrom('voice_clips')
    .select(['id', 'media_type', sql<number>`octet_length(bytes)::int`.as('size_bytes'), 'duration_ms'])
    .where('id', '=', id.toLowerCase())
    .where('company_id', '=', actor.companyId)
    .where('conversation_id', '=', conversationId.toLowerCase())
    .where('direction', '=', 'heard')
    .where('message_id', 'is', null)
    .executeTakeFirst()
  if (!clip) throw new ApiError('validation_error', 'That voice note is not one heard in this conversation, or it was said already.', { errors: [{ path: 'voice_clip_id', message: 'no such voice note' }] })
  return { voice_clip_id: clip.id, name: 'Voice note', media_type: clip.media_type, size_bytes: clip.size_bytes, ...(clip.duration_ms === null ? {} : { duration_ms: clip.duration_ms }) }
}

/** Gives an untitled conversation its title; false when it had one meanwhile (another message was first). */
export async function nameUntitled(db: Executor, conversation: { id: string; company_id: string }, title: string): Promise<boolean> {
  const row = await companyScoped(db, conversation.company_id)
    .updateTable(WebchatConversation)
    .set({ title, version: sql`version + 1`, updated_at: sql`now()` })
    .where('webchat_conversations.id', '=', conversation.id)
    .where('webchat_conversations.title', '=', '')
    .returning('webchat_conversations.id')
    .executeTakeFirst()
  return row !== undefined
}
