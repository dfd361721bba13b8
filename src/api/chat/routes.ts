import { createRoute, z } from '@hono/zod-openapi'
import { commonErrors, conflictErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'

export const TurnRequest = z
  .object({
    agent_id: z.uuid(),
    conversation_id: z.uuid().optional().openapi({ description: 'Continue this conversation; left out, a new one is started.' }),
    text: z.string().trim().min(1).max(100_000),
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
  description: 'The same turn the web chat runs. The stream ends with `message`, `error` or `aborted`.',
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
