import { createRoute, z } from '@hono/zod-openapi'
import { commonErrors, conflictErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'

export const TurnRequest = z
  .object({
    agent_id: z.uuid().optional().openapi({ description: 'The agent of a new conversation. For an existing one it may be left out; given, it must be the conversation’s.' }),
    conversation_id: z.uuid().optional().openapi({ description: 'Continue this conversation; left out, a new one is started.' }),
    text: z.string().trim().min(1).max(100_000),
    attachments: z.array(z.uuid()).max(20).optional().openapi({ description: 'Documents of the conversation (uploaded to POST /api/chat/documents) this message refers to.' }),
    voice_clip_id: z.uuid().optional().openapi({
      description: 'The voice note (heard by POST /api/chat/voice in this conversation) whose transcript `text` is: kept beside the message, and the answer is spoken when the agent answers aloud when spoken to.',
    }),
  })
  .strict()
  .openapi('ChatTurnRequest')

const ChatEvent = z
  .object({
    type: z.enum(['conversation', 'typing', 'notice', 'tool_call', 'tool_result', 'stream', 'stream_end', 'message', 'error', 'aborted']),
  })
  .catchall(z.unknown())
  .openapi('ChatEvent', {
    description:
      'One line of the stream. conversation {conversation_id} · typing · notice {text} · tool_call {tool} · tool_result {tool, result} · ' +
      'stream {text} · stream_end · message {text, agent, message_id} · error {text, details, error_type} · aborted {message_id}',
  })

export const chatRoute = createRoute({
  method: 'post',
  path: '/api/chat',
  operationId: 'chatTurn',
  summary: 'Talk to an agent: one turn, streamed as NDJSON',
  description:
    'The same turn the web chat runs; every participant’s web chat sees it live. The stream ends with `message`, `error` or `aborted`. ' +
    'In a shared conversation the message is stored and the agent answers only when mentioned (`@agent-name`); otherwise the stream ends with a `notice` saying so.',
  tags: ['Chat'],
  security: signedIn,
  request: { body: { content: { 'application/json': { schema: TurnRequest } } } },
  responses: {
    200: { description: 'Events, one JSON object per line.', content: { 'application/x-ndjson': { schema: ChatEvent } } },
    ...commonErrors,
    ...notFoundError,
    ...validationErrors,
    ...conflictErrors,
  },
})

export const regenerateRoute = createRoute({
  method: 'post',
  path: '/api/chat/regenerate',
  operationId: 'chatRegenerate',
  summary: 'Answer the latest question again (edited first, if `text` is given), streamed as NDJSON',
  description:
    'The conversation must end with an answer to a question of the caller’s. The new answer’s `message` event names the group it is a version of ' +
    '(`version_of`); the earlier answers stay, with `superseded_at` set, and no longer go to the model. With `text`, the question is changed first and ' +
    'every participant hears `user_message_edited`.',
  tags: ['Chat'],
  security: signedIn,
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .strictObject({ conversation_id: z.uuid(), text: z.string().trim().min(1).max(100_000).optional().openapi({ description: 'The question, edited.' }) })
            .openapi('ChatRegenerateRequest'),
        },
      },
    },
  },
  responses: {
    200: { description: 'Events, one JSON object per line.', content: { 'application/x-ndjson': { schema: ChatEvent } } },
    ...commonErrors,
    ...notFoundError,
    ...validationErrors,
    ...conflictErrors,
  },
})

export const abortRoute = createRoute({
  method: 'post',
  path: '/api/chat/abort',
  operationId: 'chatAbort',
  summary: 'Stop the running turn of a conversation',
  tags: ['Chat'],
  security: signedIn,
  request: { body: { required: true, content: { 'application/json': { schema: z.strictObject({ conversation_id: z.uuid() }).openapi('ChatAbortRequest') } } } },
  responses: {
    200: {
      description: 'Whether a running turn was stopped.',
      content: { 'application/json': { schema: z.object({ aborted: z.boolean() }).openapi('ChatAbortResult') } },
    },
    ...commonErrors,
    ...notFoundError,
    ...validationErrors,
  },
})

const ConversationId = z.object({ id: z.uuid().openapi({ param: { name: 'id', in: 'path' } }) })

const ConversationSummary = z
  .object({
    id: z.uuid(),
    title: z.string(),
    agent_id: z.uuid().nullable(),
    agent_name: z.string().nullable(),
    participant_id: z.uuid().openapi({ description: 'The caller’s own WebchatParticipant row: their pin and read marker.' }),
    pinned_at: z.string().nullable(),
    archived_at: z.string().nullable().openapi({ description: 'Set when the caller archived it.' }),
    shared: z.boolean(),
    unread: z.int().openapi({ description: 'Messages from others since the caller last read the conversation.' }),
    last_message_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('ChatConversationSummary')

export const conversationsRoute = createRoute({
  method: 'get',
  path: '/api/chat/conversations',
  operationId: 'chatConversations',
  summary: 'The caller’s conversations: pinned first, then the latest, with unread counts',
  description:
    'Without `archived`, the conversations the caller has not archived; with `archived=true`, those they have. ' +
    '`q` keeps those whose title or a message holds every word given, each as the beginning of a word ' +
    '(full-text search, no stemming: `launc` finds “launch”, `plan` finds “planning”).',
  tags: ['Chat'],
  security: signedIn,
  request: {
    query: z.object({
      q: z.string().max(200).optional().openapi({ description: 'Words to find in titles and messages.' }),
      archived: z.enum(['true', 'false']).default('false').openapi({ description: 'The archived conversations instead of the others.' }),
    }),
  },
  responses: {
    200: { description: 'At most 200 conversations.', content: { 'application/json': { schema: z.object({ data: z.array(ConversationSummary) }) } } },
    ...commonErrors,
  },
})

export const exportRoute = createRoute({
  method: 'get',
  path: '/api/chat/conversations/{id}/export',
  operationId: 'chatExport',
  summary: 'The whole conversation as a file: Markdown to read, or JSON to process',
  tags: ['Chat'],
  security: signedIn,
  request: {
    params: ConversationId,
    query: z.object({ format: z.enum(['markdown', 'json']).default('markdown') }),
  },
  responses: {
    200: {
      description: 'The conversation, sent as an attachment (Content-Disposition) named after its title.',
      content: {
        'text/markdown': { schema: z.string() },
        'application/json': { schema: z.object({ conversation: z.record(z.string(), z.unknown()), messages: z.array(z.record(z.string(), z.unknown())) }).openapi('ChatExport') },
      },
    },
    ...commonErrors,
    ...notFoundError,
  },
})

export const readRoute = createRoute({
  method: 'post',
  path: '/api/chat/conversations/{id}/read',
  operationId: 'chatMarkRead',
  summary: 'Mark everything in the conversation so far as read by the caller',
  tags: ['Chat'],
  security: signedIn,
  request: { params: ConversationId },
  responses: { 204: { description: 'Marked.' }, ...commonErrors, ...notFoundError },
})

export const typingRoute = createRoute({
  method: 'post',
  path: '/api/chat/typing',
  operationId: 'chatTyping',
  summary: 'Tell the other participants the caller is typing',
  description: 'Sent on to their web chats as `user_typing`; repeated notices within two seconds are dropped.',
  tags: ['Chat'],
  security: signedIn,
  request: { body: { required: true, content: { 'application/json': { schema: z.strictObject({ conversation_id: z.uuid() }).openapi('ChatTypingRequest') } } } },
  responses: { 204: { description: 'Passed on (or dropped as too soon).' }, ...commonErrors, ...notFoundError, ...validationErrors },
})

export const colleaguesRoute = createRoute({
  method: 'get',
  path: '/api/chat/people',
  operationId: 'chatPeople',
  summary: 'Members of the caller’s company a conversation can be shared with',
  tags: ['Chat'],
  security: signedIn,
  request: { query: z.object({ q: z.string().max(100).default('').openapi({ description: 'Part of a username, display name or email.' }) }) },
  responses: {
    200: {
      description: 'At most 20 people.',
      content: {
        'application/json': {
          schema: z.object({ data: z.array(z.object({ id: z.uuid(), username: z.string(), display_name: z.string() }).openapi('ChatPerson')) }),
        },
      },
    },
    ...commonErrors,
    ...validationErrors,
  },
})
