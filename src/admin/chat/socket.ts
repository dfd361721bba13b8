import type { WebSocketHandler } from 'bun'
import type { Context } from 'hono'
import { z } from 'zod'
import type { EventBus } from '../../events/bus.ts'
import type { Logger } from '../../logger.ts'
import { isUuid } from '../../models/fields.ts'
import { problemOf, type ApiClient } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { FrameBudget } from './frame-budget.ts'
import type { ChatSocket, ChatSocketData, ChatSockets, Refusal } from './sockets.ts'

/** The largest client message taken: a message's text is at most 100 000 characters. */
const MAX_MESSAGE_BYTES = 512 * 1024
/** Messages of a reconnect's catch-up, at most; a client further behind reloads the page. */
const CATCH_UP = 500

const conversationId = z.uuid()
/** What a browser may send (DESIGN §4, Web chat), plus `read`: the client has seen the conversation so far. */
const ClientMessage = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message'),
    conversation_id: conversationId,
    text: z.string(),
    attachments: z.array(z.uuid()).max(20).optional(),
    voice_clip_id: z.uuid().optional(),
    context_prompt: z.string().optional(),
  }),
  z.object({ type: z.literal('user_typing'), conversation_id: conversationId }),
  z.object({ type: z.literal('stop'), conversation_id: conversationId }),
  z.object({ type: z.literal('read'), conversation_id: conversationId }),
  // The latest question answered again; with `text`, edited first.
  z.object({ type: z.literal('regenerate'), conversation_id: conversationId, text: z.string().optional() }),
  // A yes or no to a tool call the conversation's turn waits on.
  z.object({ type: z.literal('approval_decision'), conversation_id: conversationId, approval_id: z.uuid(), approve: z.boolean() }),
])
type ClientMessage = z.infer<typeof ClientMessage>

/**
 * The handshake of `/ws/chat`. It is accepted whatever the verdict, so that the browser learns why it was refused
 * from the close code: 4001 without a valid session, 4003 for another site's page or a conversation the user does
 * not take part in. Nothing is sent or run before that close.
 */
export async function upgradeChatSocket(c: Context<AdminEnv>, api: ApiClient, origins: readonly string[]): Promise<Response> {
  const server = c.env as { upgrade?(request: Request, options: { data: ChatSocketData }): boolean } | undefined
  if (c.req.header('upgrade')?.toLowerCase() !== 'websocket' || !server?.upgrade) {
    return c.text('This address takes WebSocket connections (the web chat).', 426, { upgrade: 'websocket' })
  }
  const data = await judge(c, api, origins)
  if (server.upgrade(c.req.raw, { data })) return new Response(null)
  return c.text('The WebSocket handshake failed.', 400)
}

async function judge(c: Context<AdminEnv>, api: ApiClient, origins: readonly string[]): Promise<ChatSocketData> {
  const requested = c.req.query('conversation_id') || null
  const after = c.req.query('after')
  const data: ChatSocketData = {
    id: crypto.randomUUID(),
    userId: '',
    conversationId: requested && isUuid(requested) ? requested.toLowerCase() : null,
    who: api.credentials(c),
    ...(after && isUuid(after) ? { after: after.toLowerCase() } : {}),
    since: Date.now(),
    budget: new FrameBudget(),
  }
  // A page of another site may open a socket here with the user's cookie; its Origin gives it away.
  if (!origins.includes(c.req.header('origin') ?? '')) return { ...data, refused: { code: 4003, reason: 'This page may not open the chat.' } }
  if (requested && !data.conversationId) return { ...data, refused: NOT_YOURS }
  const verdict = await standing(api, data)
  return typeof verdict === 'string' ? { ...data, userId: verdict } : { ...data, refused: verdict }
}

const SIGN_IN: Refusal = { code: 4001, reason: 'Sign in to chat.' }
const NOT_YOURS: Refusal = { code: 4003, reason: 'You do not take part in this conversation.' }
// Anything else (a throttle, a failure on our side) is no verdict on the person: the page tries again later.
const LATER: Refusal = { code: 1013, reason: 'The chat is busy; trying again shortly.' }

/** Whose the socket is (their user id) as the API sees its credentials now, or why it may not stay open. */
async function standing(api: ApiClient, data: Pick<ChatSocketData, 'who' | 'conversationId'>): Promise<string | Refusal> {
  const me = await api.asWho(data.who).GET('/api/me')
  if (me.response.status === 401) return SIGN_IN
  if (!me.data) return LATER
  if (!data.conversationId) return me.data.user.id
  const { status } = (await api.asWho(data.who).GET('/api/v1/WebchatConversation/{id}', { params: { path: { id: data.conversationId } } })).response
  if (status === 401) return SIGN_IN
  if (status === 403 || status === 404) return NOT_YOURS
  return status === 200 ? me.data.user.id : LATER
}

/**
 * Checks an open socket again: its session may have ended, its user lost the company or the conversation. Why it
 * may not stay open, if so; a throttled or failed check proves nothing, and leaves it open.
 */
export async function verifySocket(ws: ChatSocket, api: ApiClient): Promise<Refusal | undefined> {
  const verdict = await standing(api, ws.data).catch(() => LATER)
  if (verdict === LATER) return undefined
  if (typeof verdict !== 'string') return verdict
  return verdict === ws.data.userId ? undefined : SIGN_IN
}

/** Bun's handler for the admin port's sockets: the web chat's. */
export function chatSocketHandler(sockets: ChatSockets, api: ApiClient, events: EventBus, log: Logger): WebSocketHandler<ChatSocketData> {
  return {
    maxPayloadLength: MAX_MESSAGE_BYTES,
    // Bun pings a quiet socket and closes one that does not answer: a dead peer is dropped within two minutes.
    idleTimeout: 120,
    sendPings: true,
    open(ws) {
      if (ws.data.refused) {
        ws.close(ws.data.refused.code, ws.data.refused.reason)
        return
      }
      if (!sockets.add(ws)) return
      if (ws.data.conversationId) void resume(ws, api, events, log)
    },
    message(ws, raw) {
      if (ws.data.refused) return
      const admission = ws.data.budget.admit(isMessageFrame(raw))
      if (admission === 'accepted') {
        void receive(ws, raw, api, log).finally(() => ws.data.budget.done())
        return
      }
      if (admission === 'close') ws.close(1008, 'Too many messages; reload the page.')
      else if (admission === 'refused') sendError(ws, undefined, 'Too many at once: that was not sent. Wait a moment and try again.', '', 'rate_limited', 'message')
    },
    close(ws) {
      sockets.remove(ws)
    },
  }
}

/**
 * A socket on a conversation is sent what it missed: the stored messages after the last one it has, and, from the
 * process running a turn there, the answer so far.
 */
async function resume(ws: ChatSocket, api: ApiClient, events: EventBus, log: Logger): Promise<void> {
  const { conversationId, after, who } = ws.data
  try {
    if (after) {
      const query = { conversation_id: `eq.${conversationId}`, id: `gt.${after}`, order: 'id.asc', limit: String(CATCH_UP) }
      const missed = (await api.asWho(who).GET('/api/v1/WebchatMessage', { params: { query } })).data?.data ?? []
      if (missed.length > 0) ws.send(JSON.stringify({ type: 'history', conversation_id: conversationId, messages: missed }))
    }
    await events.publish('chat.resume', { conversation_id: conversationId!, socket: ws.data.id })
  } catch (error) {
    log.warn('web chat resume failed', { conversation_id: conversationId, error: String(error) })
  }
}

/** A chat message (its text would be lost unanswered), told by a look at the frame, before it is parsed. */
function isMessageFrame(raw: string | Buffer): boolean {
  return /"type"\s*:\s*"message"/.test(String(raw).slice(0, 200))
}

async function receive(ws: ChatSocket, raw: string | Buffer, api: ApiClient, log: Logger): Promise<void> {
  let message: ClientMessage
  try {
    message = ClientMessage.parse(JSON.parse(String(raw)))
  } catch {
    return sendError(ws, undefined, 'That message could not be understood.', 'Expected JSON with a type of message, regenerate, user_typing, stop, read or approval_decision.', 'bad_request', 'message')
  }
  try {
    await act(ws, message, api)
  } catch (error) {
    log.error('web chat message failed', { type: message.type, error: String((error as Error)?.stack ?? error) })
    sendError(ws, message.conversation_id, 'The message could not be handled on our side.', '', 'internal_error', message.type)
  }
}

/** Each client message is a call to the public API as the socket's user. */
async function act(ws: ChatSocket, message: ClientMessage, api: ApiClient): Promise<void> {
  const { who } = ws.data
  const conversation_id = message.conversation_id
  switch (message.type) {
    case 'message': {
      if (message.context_prompt !== undefined) {
        const patched = await api.asWho(who).PATCH('/api/v1/WebchatConversation/{id}', { params: { path: { id: conversation_id } }, body: { context_prompt: message.context_prompt } })
        if (!patched.data) return refused(ws, message.type, conversation_id, patched)
      }
      const body = {
        conversation_id,
        text: message.text,
        ...(message.attachments?.length ? { attachments: message.attachments } : {}),
        ...(message.voice_clip_id ? { voice_clip_id: message.voice_clip_id } : {}),
      }
      const response = await api.fetchAs(who, 'POST', '/api/chat', { json: body })
      if (response.status !== 200) return refused(ws, message.type, conversation_id, { response, error: await response.json().catch(() => undefined) })
      // Everyone in the conversation, this socket too, hears the turn from the bus; the stream is only drained.
      for await (const _ of response.body ?? []) void _
      return
    }
    case 'regenerate': {
      const body = { conversation_id, ...(message.text === undefined ? {} : { text: message.text }) }
      const response = await api.fetchAs(who, 'POST', '/api/chat/regenerate', { json: body })
      if (response.status !== 200) return refused(ws, message.type, conversation_id, { response, error: await response.json().catch(() => undefined) })
      for await (const _ of response.body ?? []) void _
      return
    }
    case 'stop':
      return checked(ws, message.type, conversation_id, await api.asWho(who).POST('/api/chat/abort', { body: { conversation_id } }))
    case 'user_typing':
      return checked(ws, message.type, conversation_id, await api.asWho(who).POST('/api/chat/typing', { body: { conversation_id } }))
    case 'read':
      return checked(ws, message.type, conversation_id, await api.asWho(who).POST('/api/chat/conversations/{id}/read', { params: { path: { id: conversation_id } } }))
    case 'approval_decision':
      return checked(ws, message.type, conversation_id, await api.asWho(who).POST('/api/approvals/{id}/decision', { params: { path: { id: message.approval_id } }, body: { approve: message.approve } }))
  }
}

/** A call's answer as the socket judges it: what came back, and the problem when it was refused. */
type Answered = { response: Response; error?: unknown }

function checked(ws: ChatSocket, asked: ClientMessage['type'], conversationId: string, answered: Answered): void {
  if (answered.response.status >= 300) refused(ws, asked, conversationId, answered)
}

/**
 * The API refused what the socket asked: the person sees why; an ended session closes the socket (4001). The error
 * says what was refused (`refused`), so that the page tells a message it must give back to its writer from a turn
 * that failed: a message refused while an answer streams leaves that answer alone.
 */
function refused(ws: ChatSocket, asked: ClientMessage['type'], conversationId: string, { response, error }: Answered): void {
  if (response.status === 401) {
    ws.close(4001, 'Your session has ended; sign in again.')
    return
  }
  const problem = problemOf(error)
  const details = (problem.errors ?? []).map((e) => `${e.path}: ${e.message}`).join('; ')
  sendError(ws, conversationId, problem.detail ?? `The request failed (${response.status}).`, details, problem.code ?? 'error', asked)
}

function sendError(ws: ChatSocket, conversationId: string | undefined, text: string, details: string, errorType: string, asked?: ClientMessage['type']): void {
  ws.send(JSON.stringify({ type: 'error', text, details, error_type: errorType, ...(conversationId ? { conversation_id: conversationId } : {}), ...(asked ? { refused: asked } : {}) }))
}
