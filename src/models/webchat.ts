import { z } from '@hono/zod-openapi'
import { sql } from 'kysely'
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import { hasRole, type Actor } from '../auth/actor.ts'
import { ApiError } from '../errors.ts'
import { defineModel } from './define.ts'
import { nullableUuid } from '../db/columns.ts'
import { companyMember, visible } from './references.ts'
import { DOCUMENTS_ARE_UPLOADED, documentsAreUploaded } from '../documents/errors.ts'
import { hasInvisibleCharacters } from '../documents/filename.ts'
import { DOCUMENT_MEDIA_TYPES } from '../documents/media-types.ts'

/**
 * Conversations are private to their participants, whatever the role: chats are not the administrators' to read.
 * The creator is a participant like the others (a row made with the conversation).
 */
export function takesPart(eb: ExpressionBuilder<any, any>, actor: Actor, conversationId: string): Expression<SqlBool> {
  return eb.exists(
    eb.selectFrom('webchat_participants as p').select('p.id').where('p.conversation_id', '=', sql.ref<string>(conversationId)).where('p.user_id', '=', actor.userId),
  )
}

/** Whether the actor started the conversation: they alone may remove others from it, rename or delete it. */
function started(eb: ExpressionBuilder<any, any>, actor: Actor, conversationId: string): Expression<SqlBool> {
  return eb.exists(
    eb.selectFrom('webchat_conversations as c').select('c.id').where('c.id', '=', sql.ref<string>(conversationId)).where('c.created_by', '=', actor.userId),
  )
}

export const conversation = visible(() => WebchatConversation)

export const WebchatConversation = defineModel({
  name: 'WebchatConversation',
  table: 'webchat_conversations',
  description:
    'A web chat conversation with an agent: private to its creator, shared once someone else is added, private again when the others are removed.',
  tenantColumn: 'company_id',
  fields: {
    agent_id: nullableUuid,
    title: z.string().max(300).default(''),
    context_prompt: z.string().max(100_000).default('').openapi({ description: 'Extra context given to the agent.' }),
  },
  readOnly: { created_by: z.uuid().nullable() },
  stamp: (actor) => ({ created_by: actor.userId }),
  // Participants read it; its creator (still taking part) changes or deletes it.
  recordRule: (eb, actor, access) => {
    const participant = takesPart(eb, actor, 'webchat_conversations.id')
    return access === 'read' ? participant : eb.and([participant, eb('webchat_conversations.created_by', '=', actor.userId)])
  },
  // The creator takes part from the start: their row carries their pin and read marker like anyone's.
  afterCreate: async (db, record, actor) => {
    await db
      .insertInto('webchat_participants')
      .values({ id: Bun.randomUUIDv7(), company_id: String(record.company_id), conversation_id: String(record.id), user_id: actor.userId, pinned_at: null, last_read_at: new Date() })
      .execute()
  },
  computed: {
    has_plan: {
      schema: z.boolean().openapi({ description: 'The conversation has a plan that is not cancelled.' }),
      select: () =>
        sql<boolean>`exists (select 1 from plans p where p.conversation_id = webchat_conversations.id and p.status <> 'cancelled')`,
    },
    cost_usd: {
      schema: z.number().openapi({ description: 'What the conversation’s turns have cost so far, in USD.' }),
      select: () => sql<number>`(select coalesce(sum(u.cost_usd), 0)::float8 from usage_records u where u.conversation_id = webchat_conversations.id)`,
    },
    shared: {
      schema: z.boolean().openapi({ description: 'Someone besides one person takes part; the agent then answers only when mentioned (@name).' }),
      select: () => sql<boolean>`(select count(*) from webchat_participants p where p.conversation_id = webchat_conversations.id) > 1`,
    },
  },
  access: { list: 'member', read: 'member', create: 'member', update: 'member', delete: 'member' },
  example: { title: 'Quarterly report', context_prompt: 'Figures are in EUR.' },
})

export const WebchatParticipant = defineModel({
  name: 'WebchatParticipant',
  table: 'webchat_participants',
  description:
    'A user taking part in a conversation, with their own pin and read marker. Any participant may add a member of the company; ' +
    'a participant may leave, and the creator may remove others; the pin and read marker are changed by their owner only.',
  tenantColumn: 'company_id',
  fields: {
    conversation_id: z.uuid(),
    user_id: z.uuid(),
    pinned_at: z.iso.datetime({ offset: true }).nullable().default(null),
    last_read_at: z.iso.datetime({ offset: true }).nullable().default(null).openapi({ description: 'Messages after this are unread for this participant.' }),
    archived_at: z.iso.datetime({ offset: true }).nullable().default(null).openapi({
      description: 'Set: the conversation is archived for this participant (out of their list until they look among the archived).',
    }),
  },
  references: { conversation_id: conversation, user_id: companyMember },
  recordRule: (eb, actor, access) => {
    const participant = takesPart(eb, actor, 'webchat_participants.conversation_id')
    if (access === 'read') return participant
    return eb.and([participant, eb.or([eb('webchat_participants.user_id', '=', actor.userId), started(eb, actor, 'webchat_participants.conversation_id')])])
  },
  guard: async (_tx, actor, { before, after }) => {
    // Adding someone gives them a seat, not a pin or a read marker chosen for them.
    if (!before && after && after.user_id !== actor.userId) {
      const chosen = (['pinned_at', 'last_read_at', 'archived_at'] as const).filter((field) => after[field] != null)
      if (chosen.length > 0) {
        throw new ApiError('validation_error', "A participant's pin, read marker and archive are their own to set.", { errors: chosen.map((path) => ({ path, message: 'only its owner sets it' })) })
      }
    }
    if (!before || !after) return
    // The creator may remove someone, never set their pin or read marker for them.
    if (before.user_id !== actor.userId) throw new ApiError('forbidden', "A participant's pin and read marker are their own to change.")
    const moved = (['conversation_id', 'user_id'] as const).filter((field) => after[field] !== undefined && after[field] !== before[field])
    if (moved.length > 0) {
      throw new ApiError('validation_error', 'A participant row stays with its conversation and user; add a new one instead.', {
        errors: moved.map((path) => ({ path, message: 'cannot be changed' })),
      })
    }
  },
  computed: {
    user_name: {
      schema: z.string().nullable().openapi({ description: 'Display name of the participant.' }),
      select: () => sql<string | null>`(select coalesce(nullif(u.display_name, ''), u.username) from users u where u.id = webchat_participants.user_id)`,
    },
  },
  access: { list: 'member', read: 'member', create: 'member', update: 'member', delete: 'member' },
  example: { conversation_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e', user_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7f' },
})

const Attachment = z
  .strictObject({
    document_id: z.uuid().optional(),
    voice_clip_id: z.uuid().optional().openapi({ description: 'The voice note the message was transcribed from: GET /api/chat/voice/{id} plays it.' }),
    duration_ms: z.int().min(0).optional(),
    name: z.string().min(1).max(300),
    media_type: z.string().max(200),
    size_bytes: z.int().min(0).optional(),
  })
  .openapi('WebchatAttachment')

export const WebchatMessage = defineModel({
  name: 'WebchatMessage',
  table: 'webchat_messages',
  description: 'One message of a conversation. Messages written through this API are the caller’s own.',
  tenantColumn: 'company_id',
  fields: {
    conversation_id: z.uuid(),
    text: z.string().min(1).max(200_000),
    attachments: z.array(Attachment).max(20).default([]),
  },
  readOnly: {
    sender_id: z.uuid().nullable(),
    agent_id: z.uuid().nullable(),
    role: z.enum(['user', 'agent', 'system']),
    status: z.enum(['complete', 'aborted', 'error']),
    version_of: z.uuid().nullable().openapi({ description: 'A regenerated answer: the first answer it is a version of (POST /api/chat/regenerate).' }),
    superseded_at: z.iso.datetime({ offset: true }).nullable().openapi({ description: 'Set when a regenerated answer replaced this one: kept, but no longer what the agent reads.' }),
  },
  // Messages written through the API are the caller's own; agent and system messages come from the runtime.
  stamp: (actor) => ({ sender_id: actor.userId, role: 'user' }),
  references: { conversation_id: conversation },
  // Participants read the conversation; a message is changed by its author, or by an admin.
  recordRule: (eb, actor, access) => {
    const participant = takesPart(eb, actor, 'webchat_messages.conversation_id')
    if (access === 'read' || hasRole(actor, 'admin')) return participant
    return eb.and([participant, eb('webchat_messages.sender_id', '=', actor.userId)])
  },
  computed: {
    sender_name: {
      schema: z.string().nullable().openapi({ description: 'Display name of the sender (user or agent).' }),
      select: () => sql<string | null>`coalesce(
        (select coalesce(nullif(u.display_name, ''), u.username) from users u where u.id = webchat_messages.sender_id),
        (select a.name from agent_configs a where a.id = webchat_messages.agent_id))`,
    },
  },
  access: { list: 'member', read: 'member', create: 'member', update: 'member', delete: 'admin' },
  example: { conversation_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e', text: 'Summarise the attached report, please.' },
})

export const WebchatDocument = defineModel({
  name: 'WebchatDocument',
  table: 'webchat_documents',
  description:
    'A document uploaded to a conversation with POST /api/chat/documents, and the text the platform extracted from it. ' +
    'Only its filename can be changed here; it cannot be created here.',
  tenantColumn: 'company_id',
  fields: {
    // A rename may not bring in what an upload's name loses (line breaks, bidirectional overrides): the name heads
    // the document's text in the model's context.
    filename: z.string().trim().min(1).max(300).refine((name) => !hasInvisibleCharacters(name), 'no control or invisible characters'),
  },
  // What the document is and says comes from its bytes, read by the platform: never from a client.
  readOnly: {
    conversation_id: z.uuid(),
    uploaded_by: z.uuid().nullable(),
    media_type: z.enum(DOCUMENT_MEDIA_TYPES),
    size_bytes: z.int().min(0),
    extracted_text: z.string().openapi({ description: 'At most 200 KB (UTF-8 bytes) of the document’s text.' }),
    truncated: z.boolean().openapi({ description: 'The text was cut at 200 KB.' }),
  },
  // Participants read it; who uploaded it, or the conversation's creator, renames or deletes it.
  recordRule: (eb, actor, access) => {
    const participant = takesPart(eb, actor, 'webchat_documents.conversation_id')
    if (access === 'read') return participant
    return eb.and([participant, eb.or([eb('webchat_documents.uploaded_by', '=', actor.userId), started(eb, actor, 'webchat_documents.conversation_id')])])
  },
  // The generic create cannot make a document (there is nothing to write but a filename): it is left out and answers
  // 405, and this keeps any other caller of createRecord out.
  createdElsewhere: DOCUMENTS_ARE_UPLOADED,
  async guard(_tx, _actor, change) {
    if (!change.before) throw documentsAreUploaded()
  },
  access: { list: 'member', read: 'member', create: 'member', update: 'member', delete: 'member' },
  example: { filename: 'notes.txt' },
})
