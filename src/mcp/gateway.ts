import { execute } from '../db/templates.ts'
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js'
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  isInitializeRequest,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Progress,
  ReadResourceRequestSchema,
  type JSONRPCMessage,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import { sql } from 'kysely'
import type { Actor } from '../auth/actor.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import { isUuid } from '../models/fields.ts'
import { flushOn, type CacheFlusher } from '../events/caches.ts'
import { LRUCache } from 'lru-cache'
import type { McpCatalog } from './catalog.ts'
import { maskSecrets, type Approvals } from '../approvals/approvals.ts'
import type { toolVerdict } from './permissions.ts'
import { errorResult, type Provider } from './providers.ts'
import { split } from './aggregate.ts'
import { serverSdk } from './sdk.ts'

/** A tool behind a person's yes: its server and name, and the rule that asks. */
type Verdict = ReturnType<typeof toolVerdict> & { server: string; tool: string }

/** What serving a request of one server needs: its provider, and the caller's rules for it. */
interface Resolved {
  provider: Provider
  may: (item: string) => boolean
  asking: (tool: string) => Verdict | undefined
}

/** The name a session of the aggregate `/mcp` goes by. */
export const AGGREGATE = ''

/** Sessions one user may hold open; opening one more closes their least recently used. */
const SESSIONS_PER_USER = 32

/** A host that vanished without DELETE leaves its session behind; it is closed after this long unseen. */
const SESSION_IDLE = '1 hour'
/** A session's last use is written at most this often, as sign-in sessions are. */
const TOUCH_AFTER = '1 minute'
const TOUCH_AFTER_MS = 60_000
const SWEEP_EVERY_MS = 60_000
/** Cancellations one HTTP request may announce, and the longest request id: each one is an event to every process. */
const CANCELS_PER_REQUEST = 16
const REQUEST_ID_MAX = 128

/** Whose a session is, as its row says (which never changes), and when this process last noted its use. */
interface SessionOwner {
  user_id: string
  company_id: string | null
  server: string
  /** Its host can be asked (elicitation). */
  elicitation: boolean
  touchedAt: number
}

/** The request-scoped pieces a handler gets from the SDK, as far as cancellation needs them. */
interface HandlerExtra {
  signal: AbortSignal
  requestId: string | number
}

/** What asking the host needs of them: the request's id, and a way to send the host a question on its stream. */
type AskingExtra = Pick<RequestHandlerExtra<ServerRequest, ServerNotification>, 'requestId' | 'sendRequest'>

/**
 * The MCP gateway's sessions, served by any process: a session is a row in the store (whose it is, on which
 * server), and each HTTP request is served by a small MCP server of ours made for it, which offers what the caller
 * may use of one provider and forwards only that; a plain tool call, most of the traffic, is answered the same way
 * without one (#callDirect). Upstream connections are per user and server in each process and
 * made on demand, so nothing of a session lives in one process's memory; a host's cancellation reaches the process
 * running the request over the event bus. The provider and the rules are looked up on every request (both cached
 * and flushed on write), so an edited server or permission applies to open sessions too.
 *
 * There is no GET event stream (405, which the transport specification allows): the gateway sends nothing outside
 * the answer to a request, so a stream held open on one process would carry nothing.
 */
export class Gateway {
  /** Requests this process is serving, by session and JSON-RPC id, to stop when their host cancels them. */
  readonly #running = new Map<string, AbortController>()
  /**
   * Sessions this process has seen, so that a request costs no query: a row's owner never changes, and every
   * process drops what it holds when any closes a session (`mcp-sessions` flush). Only sessions found are kept, so
   * made-up ids cannot crowd out real ones.
   */
  readonly #sessions = new LRUCache<string, SessionOwner>({ max: 10_000, ttl: 10 * 60_000 })
  /** The request of this process waiting for its host's answer (elicitation), by session: one per session at a time. */
  readonly #awaiting = new Map<string, WebStandardStreamableHTTPServerTransport>()
  #swept = 0
  #validator: AjvJsonSchemaValidator | undefined

  constructor(
    private readonly catalog: McpCatalog,
    private readonly db: Db,
    private readonly events: EventBus,
    private readonly caches: CacheFlusher,
    private readonly approvals: Approvals,
  ) {
    events.subscribe('mcp.cancel', ({ session_id, request_id, reason }) => {
      this.#running.get(runningKey(session_id, request_id))?.abort(new Error(reason ?? 'cancelled by the MCP host'))
    })
    // A host's answer that reached another process: handed to the request here that asked.
    events.subscribe('mcp.answer', ({ session_id, messages }, origin) => {
      if (origin === 'elsewhere') void this.#handOn(session_id, messages)
    })
    flushOn(events, 'mcp-sessions', () => this.#sessions.clear())
  }

  /**
   * Serves one HTTP request of the gateway for `actor` on `server`: an initialize opens a session; any other request
   * must name a session of this user on this server in this company, or is answered 404 (the host starts over). A
   * named server is judged once, first: 404 when there is none, 403 when the caller may not use it.
   */
  async handle(request: Request, actor: Actor, server: string): Promise<Response> {
    const admitted = server === AGGREGATE ? undefined : await this.#admit(actor, server)
    const sessionId = request.headers.get('mcp-session-id')
    const session = sessionId === null ? undefined : await this.#session(sessionId, actor, server)
    if (sessionId !== null && !session) throw new ApiError('not_found', 'No such MCP session; initialize a new one.')
    if (sessionId === null && request.method !== 'POST') throw new ApiError('bad_request', 'Start with an initialize request (POST), then send its Mcp-Session-Id.')
    if (request.method === 'DELETE') {
      await this.db.deleteFrom('mcp_sessions').where('id', '=', sessionId).execute()
      await this.caches.flush('mcp-sessions')
      return new Response(null, { status: 200 })
    }
    if (request.method === 'GET') {
      return new Response(null, { status: 405, headers: { allow: 'POST, DELETE' } })
    }
    let body: unknown
    try {
      body = JSON.parse(await request.text())
    } catch {
      return jsonRpcError(400, -32700, 'Parse error: Invalid JSON')
    }
    const messages: unknown[] = Array.isArray(body) ? body : [body]
    // The host answering what a request of its session asked (elicitation): for that request's server, wherever it runs.
    if (sessionId !== null && messages.length > 0 && messages.every(isAnswer)) {
      // Only a host that can be asked has anything to answer (another's answers are taken and dropped), and an
      // answer to a one-box form is small: nothing else is carried to the other processes (a large one would be a
      // row of the bus's).
      if (session?.elicitation !== true) return new Response(null, { status: 202 })
      if (messages.length > ANSWERS_MAX || JSON.stringify(messages).length > ANSWER_BYTES_MAX) return jsonRpcError(413, -32600, 'Invalid Request: these answers are larger than any question of this gateway asks for.')
      if (!(await this.#handOn(sessionId, messages))) await this.events.publish('mcp.answer', { session_id: sessionId, messages })
      return new Response(null, { status: 202 })
    }
    // By its method alone: the transport validates the message itself, and a full parse of every message costs.
    const initialize = messages.some(isInitialize)
    if (initialize && sessionId !== null) return jsonRpcError(400, -32600, 'Invalid Request: this session is initialized already.')
    if (!initialize && sessionId === null) throw new ApiError('bad_request', 'Start with an initialize request (POST), then send its Mcp-Session-Id.')
    if (sessionId !== null && messages.some(isCancellation)) await this.#announceCancellations(sessionId, messages)
    const id = sessionId ?? crypto.randomUUID()
    const askable = session?.elicitation === true
    if (sessionId !== null && !askable && isDirectCall(body) && takesJson(request)) return this.#callDirect(request, actor, server, sessionId, body, admitted)
    // An event stream where something may be sent before the result: progress, or a question to an askable host.
    const json = !messages.some(wantsProgress) && !(askable && messages.some(isToolCall))
    const response = await (await this.#serverFor(actor, server, id, json, askable, admitted)).handleRequest(request, { parsedBody: body })
    // Recorded once the initialize succeeded (one refused for its headers leaves nothing behind), and before the
    // host learns the id.
    if (initialize && response.ok) {
      await this.#open(id, actor, server, messages.some(canBeAsked))
      response.headers.set('mcp-session-id', id)
    }
    return response
  }

  /** Ends a question's hold on its session, unless a later question of the session holds it by now. */
  #forget(sessionKey: string, transport: WebStandardStreamableHTTPServerTransport): void {
    if (this.#awaiting.get(sessionKey) === transport) this.#awaiting.delete(sessionKey)
  }

  /** Hands a host's answers to the request of this process that asked; false when none here did. */
  async #handOn(sessionId: string, messages: unknown[]): Promise<boolean> {
    const transport = this.#awaiting.get(sessionId.toLowerCase())
    if (!transport) return false
    // Straight to the server the transport feeds (a transport serves one HTTP request only, so this one cannot take
    // the answer's request): what its onmessage does with every message it receives.
    for (const message of messages) transport.onmessage?.(message as JSONRPCMessage)
    return true
  }

  /** Stops every request this process serves (at shutdown), which ends their streams. */
  async closeAll(): Promise<void> {
    for (const controller of this.#running.values()) controller.abort(new Error('the platform is shutting down'))
    this.#running.clear()
  }

  /** The session, if it exists and is this user's on this server in this company; its last use is noted. */
  async #session(id: string, actor: Actor, server: string): Promise<SessionOwner | undefined> {
    // Only a uuid can be one (its form is checked below, before the store is asked): nothing longer is lower-cased.
    if (id.length !== 36) return undefined
    const key = id.toLowerCase()
    let owner = this.#sessions.get(key)
    if (!owner) {
      if (!isUuid(id)) return undefined
      const row = await this.db
        .selectFrom('mcp_sessions')
        .select(['user_id', 'company_id', 'server', 'elicitation', sql<boolean>`last_seen_at < now() - ${TOUCH_AFTER}::interval`.as('stale')])
        .where('id', '=', key)
        .executeTakeFirst()
      if (!row) return undefined
      owner = { user_id: row.user_id, company_id: row.company_id, server: row.server, elicitation: row.elicitation, touchedAt: row.stale ? 0 : Date.now() }
      this.#sessions.set(key, owner)
    }
    if (owner.user_id !== actor.userId || owner.company_id !== actor.companyId || owner.server !== server) return undefined
    if (Date.now() - owner.touchedAt >= TOUCH_AFTER_MS) {
      owner.touchedAt = Date.now()
      // Not awaited, so on the direct path (see #sweep).
      void execute(this.db, this.db.updateTable('mcp_sessions').set({ last_seen_at: sql`now()` }).where('id', '=', key), 'keyed').catch(() => {})
    }
    return owner
  }

  /** A new session: the user's least recently used ones beyond the cap are closed, and long-idle ones swept. */
  async #open(id: string, actor: Actor, server: string, elicitation: boolean): Promise<void> {
    this.#sweep()
    await this.db.insertInto('mcp_sessions').values({ id, user_id: actor.userId, company_id: actor.companyId, server, elicitation, last_seen_at: sql`now()` as never }).execute()
    const [trimmed] = await this.db
      .deleteFrom('mcp_sessions')
      .where('user_id', '=', actor.userId)
      .where('id', 'in', (eb) =>
        eb.selectFrom('mcp_sessions').select('id').where('user_id', '=', actor.userId).orderBy('last_seen_at', 'desc').orderBy('created_at', 'desc').offset(SESSIONS_PER_USER),
      )
      .execute()
    if (trimmed && trimmed.numDeletedRows > 0n) await this.caches.flush('mcp-sessions')
  }

  /**
   * A host's `notifications/cancelled` goes to whichever process serves that request, this one included. Each is an
   * event to every process, so a request announces a few, with ids of sane length: a batch of thousands would
   * otherwise hold up the bus for everyone.
   */
  async #announceCancellations(sessionId: string, messages: unknown[]): Promise<void> {
    let announced = 0
    for (const message of messages) {
      if (!isCancellation(message)) continue
      const m = message as { params?: { requestId?: unknown; reason?: unknown } }
      const requestId = m.params?.requestId
      const valid = typeof requestId === 'number' || (typeof requestId === 'string' && requestId.length <= REQUEST_ID_MAX)
      if (!valid || announced++ >= CANCELS_PER_REQUEST) continue
      const reason = typeof m.params?.reason === 'string' ? m.params.reason.slice(0, 200) : undefined
      await this.events.publish('mcp.cancel', { session_id: sessionId, request_id: requestId, ...(reason === undefined ? {} : { reason }) })
    }
  }

  /**
   * The MCP server that answers one HTTP request of a session, connected to a transport made for it alone. `json`:
   * the answer is one JSON body (the transport allows either); a request that asks for progress is answered as an
   * event stream instead, since only a stream carries the notifications before the result.
   */
  async #serverFor(actor: Actor, name: string, sessionId: string, json: boolean, askable: boolean, admitted: Resolved | undefined): Promise<WebStandardStreamableHTTPServerTransport> {
    const { Server, WebStandardStreamableHTTPServerTransport, AjvJsonSchemaValidator } = await serverSdk()
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: json })
    const mcp = new Server(
      { name: name === AGGREGATE ? 'switchboard' : `switchboard/${name}`, version: '0.1.0' },
      // One validator for every request's server: the SDK would otherwise build a JSON Schema compiler per request.
      { capabilities: { tools: {}, resources: {}, prompts: {} }, jsonSchemaValidator: (this.#validator ??= new AjvJsonSchemaValidator()) },
    )
    const running = this.#running
    /**
     * The request's signal, which also aborts when the host cancels the request through another HTTP request, on
     * any process; `end` forgets it once the request is answered.
     */
    const cancellable = (extra: HandlerExtra): { signal: AbortSignal; end: () => void } => {
      const key = runningKey(sessionId, extra.requestId)
      const controller = new AbortController()
      running.set(key, controller)
      return {
        signal: AbortSignal.any([extra.signal, controller.signal]),
        end: () => {
          if (running.get(key) === controller) running.delete(key)
        },
      }
    }

    const resolve = async () => admitted ?? this.#aggregate(actor)

    /**
     * Asks the host's user whether the call may run (MCP elicitation), as a tool approval like any: recorded,
     * audited, answerable in the console too, and decided once. The host's answer comes back in another request of
     * the session, which #handOn passes to this transport.
     */
    const askHost = async (verdict: Verdict, args: Record<string, unknown>, signal: AbortSignal, extra: AskingExtra): Promise<string> => {
      const sessionKey = sessionId.toLowerCase()
      if (!actor.companyId) return 'denied'
      const rule = verdict.rule
      const request = {
        companyId: actor.companyId,
        conversationId: null,
        agentId: null,
        userId: actor.userId,
        server: verdict.server,
        tool: verdict.tool,
        arguments: args,
        rule: `permission rule ${rule?.id ?? `${rule?.server}/${rule?.tool}`}`,
        approvers: rule?.approvers ?? 'self',
        timeoutSeconds: rule?.approval_timeout_seconds ?? 300,
      }
      // One question at a time per session: the host's answer names the question by an id each request's server
      // counts from 0, so two open at once could not be told apart.
      if (this.#awaiting.has(sessionKey)) return 'busy'
      // The question is over once the approval is decided, however (the host, another approver, the timeout): the
      // session may ask again as soon as the caller hears the outcome, not only once the host's answer has settled.
      const asked = this.approvals.ask(request, signal, (approvalId) => {
        const key = sessionKey
        this.#awaiting.set(key, transport)
        const message = `Allow ${verdict.tool} on ${verdict.server} to run with these arguments?\n${JSON.stringify(maskSecrets(args), null, 2)}`
        const requestedSchema = { type: 'object' as const, properties: { approve: { type: 'boolean' as const, title: 'Allow this call', description: 'Yes runs the tool; no declines it.' } }, required: ['approve'] }
        void extra
          .sendRequest({ method: 'elicitation/create', params: { message, requestedSchema } }, ElicitResultSchema, { signal })
          .then((answer) => this.approvals.decide(actor, approvalId, answer.action === 'accept' && answer.content?.approve === true))
          .catch(() => undefined)
          .finally(() => this.#forget(key, transport))
      })
      return asked.finally(() => this.#forget(sessionKey, transport))
    }
    const refuse = (what: string) => new McpError(ErrorCode.InvalidParams, `You may not use ${what} on ${name}.`)

    mcp.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const { provider, may, asking } = await resolve()
      const listed = await provider.listTools(actor, request.params?.cursor)
      // A tool behind a person's yes is offered to a host that can be asked.
      return { ...listed, tools: listed.tools.filter((tool) => may(tool.name) || (askable && asking(tool.name) !== undefined)) }
    })
    mcp.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { provider, may, asking } = await resolve()
      // A tool behind a person's yes, for a host that can be asked: asked, and run only on a yes.
      const behindYes = askable ? asking(request.params.name) : undefined
      let approved = false
      if (behindYes) {
        const { signal, end } = cancellable(extra)
        try {
          const outcome = await askHost(behindYes, request.params.arguments ?? {}, signal, extra)
          if (outcome === 'busy') return errorResult(`The call of ${behindYes.tool} on ${behindYes.server} was not made: this session is already asking for another approval; answer that one, then call again.`)
          if (outcome !== 'approved') return errorResult(`The call of ${behindYes.tool} on ${behindYes.server} was not made: ${outcome === 'denied' ? 'it was declined' : outcome === 'expired' ? 'nobody answered in time' : 'the request ended'}.`)
          approved = true
        } finally {
          end()
        }
      }
      // A tool hidden from the list is refused by name too.
      if (!approved && !may(request.params.name)) return toolRefused(request.params.name, name)
      // The host's progress token travels on: the upstream's progress notifications reach the host, in order and
      // all of them before the result.
      const token = request.params._meta?.progressToken
      let relayed = Promise.resolve()
      const onProgress =
        token === undefined
          ? undefined
          : (progress: Progress) => {
              relayed = relayed.then(() => extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } })).catch(() => {})
            }
      const { signal, end } = cancellable(extra)
      try {
        const result = await provider.callTool(actor, request.params, { signal, onProgress, ...(approved ? { approved } : {}) })
        await relayed
        return result
      } finally {
        end()
      }
    })

    // Resources and prompts are judged as `resource:<uri>` and `prompt:<name>`: a server-wide rule covers them,
    // and a rule naming one allows or denies just that one.
    mcp.setRequestHandler(ListResourcesRequestSchema, async (request) => {
      const { provider, may } = await resolve()
      const listed = await provider.listResources(actor, request.params?.cursor)
      return { ...listed, resources: listed.resources.filter((r) => may(`resource:${r.uri}`)) }
    })
    mcp.setRequestHandler(ListResourceTemplatesRequestSchema, async (request) => {
      const { provider, may } = await resolve()
      const listed = await provider.listResourceTemplates(actor, request.params?.cursor)
      return { ...listed, resourceTemplates: listed.resourceTemplates.filter((t) => may(`resource:${t.uriTemplate}`)) }
    })
    mcp.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      const { provider, may } = await resolve()
      if (!may(`resource:${request.params.uri}`)) throw refuse(`the resource ${request.params.uri}`)
      return provider.readResource(actor, request.params)
    })
    mcp.setRequestHandler(ListPromptsRequestSchema, async (request) => {
      const { provider, may } = await resolve()
      const listed = await provider.listPrompts(actor, request.params?.cursor)
      return { ...listed, prompts: listed.prompts.filter((p) => may(`prompt:${p.name}`)) }
    })
    mcp.setRequestHandler(GetPromptRequestSchema, async (request) => {
      const { provider, may } = await resolve()
      if (!may(`prompt:${request.params.name}`)) throw refuse(`the prompt ${request.params.name}`)
      return provider.getPrompt(actor, request.params)
    })

    // Stateless as far as the SDK knows: the session is ours to keep (above), and this transport serves one request.
    await mcp.connect(transport)
    return transport
  }

  /** A named server the caller may use, with their judge; the HTTP error that says why not otherwise. */
  async #admit(actor: Actor, name: string): Promise<Resolved> {
    const [provider, judge] = await Promise.all([this.catalog.provider(actor, name), this.catalog.judge(actor)])
    if (!provider) throw new ApiError('not_found', `There is no MCP server ${name}.`)
    if (!judge.server(name)) throw new ApiError('forbidden', `You may not use the MCP server ${name}.`)
    return resolved(provider, name, judge)
  }

  /** Every server the caller may use as one provider, made afresh for each request; it judges each item by its own server's rules. */
  async #aggregate(actor: Actor): Promise<Resolved> {
    const [provider, judge] = await Promise.all([this.catalog.aggregate(actor), this.catalog.judge(actor)])
    return { provider, may: () => true, asking: (tool) => (split(tool) ? behindYes(judge, ...split(tool)!) : undefined) }
  }

  /**
   * A tools/call on its own (not in a batch) of a session that is not asked anything, answered as the SDK's server
   * answers it in JSON (the same result, the same JSON-RPC error) without making a server and a transport for it:
   * those are most of what a call costs this process, and such calls most of what a host sends. Anything else goes
   * through the SDK.
   */
  async #callDirect(request: Request, actor: Actor, name: string, sessionId: string, call: DirectCall, admitted: Resolved | undefined): Promise<Response> {
    const key = runningKey(sessionId, call.id)
    const controller = new AbortController()
    this.#running.set(key, controller)
    try {
      const { provider, may } = admitted ?? (await this.#aggregate(actor))
      const tool = call.params.name
      const signal = AbortSignal.any([request.signal, controller.signal])
      const result = may(tool) ? await provider.callTool(actor, call.params, { signal }) : toolRefused(tool, name)
      return jsonRpcAnswer({ result, jsonrpc: '2.0', id: call.id })
    } catch (error) {
      return jsonRpcAnswer({ jsonrpc: '2.0', id: call.id, error: asRpcError(error) })
    } finally {
      if (this.#running.get(key) === controller) this.#running.delete(key)
    }
  }

  /** Deletes sessions unseen for long, at most once a minute per process (on the way to opening a new one). */
  #sweep(): void {
    const now = Date.now()
    if (now - this.#swept < SWEEP_EVERY_MS) return
    this.#swept = now
    // Not awaited, so on the direct path: a query of Kysely's own still waiting for a connection when the store
    // closes would hold the close up.
    void execute(this.db, this.db.deleteFrom('mcp_sessions').where('last_seen_at', '<', sql<Date>`now() - ${SESSION_IDLE}::interval`).returning('id'))
      .then((swept) => (swept.length > 0 ? this.caches.flush('mcp-sessions') : undefined))
      .catch(() => {})
  }
}

type CallerJudge = Awaited<ReturnType<McpCatalog['judge']>>

/** A named server's provider, judged by the caller's permissions there. */
function resolved(provider: Provider, name: string, judge: CallerJudge): Resolved {
  return { provider, may: (item) => judge(name, item), asking: (tool) => behindYes(judge, name, tool) }
}

/** The rule that lets the tool run after a person's yes, if that is what the caller's permissions say of it. */
function behindYes(judge: CallerJudge, server: string, tool: string): Verdict | undefined {
  const verdict = judge.verdict(server, tool)
  return verdict.decision === 'approve' ? { server, tool, ...verdict } : undefined
}

/** Whether a JSON-RPC message asks to hear its progress (a `progressToken` in its `_meta`). */
function wantsProgress(message: unknown): boolean {
  const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta
  return meta?.progressToken !== undefined
}

/** Answers one request of a host may carry, and their size: one question is open per session at a time. */
const ANSWERS_MAX = 4
const ANSWER_BYTES_MAX = 16 * 1024

/** A JSON-RPC answer (a result or an error for an id), not a request or a notification. */
function isAnswer(message: unknown): boolean {
  const m = message as { method?: unknown; id?: unknown; result?: unknown; error?: unknown } | null
  return m !== null && typeof m === 'object' && m.method === undefined && (typeof m.id === 'string' || typeof m.id === 'number') && ('result' in m || 'error' in m)
}

function isCancellation(message: unknown): boolean {
  return (message as { method?: unknown } | null)?.method === 'notifications/cancelled'
}

function isToolCall(message: unknown): boolean {
  return (message as { method?: unknown } | null)?.method === 'tools/call'
}

function isInitialize(message: unknown): boolean {
  return (message as { method?: unknown } | null)?.method === 'initialize'
}

/** An initialize whose host says it can be asked (elicitation). */
function canBeAsked(message: unknown): boolean {
  return isInitializeRequest(message) && message.params.capabilities.elicitation !== undefined
}

function runningKey(sessionId: string, requestId: string | number): string {
  return `${sessionId} ${typeof requestId}:${requestId}`
}

/** A JSON-RPC error answer, as the transport itself answers the requests it refuses. */
function jsonRpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status })
}

/** What a tools/call the gateway answers itself carries (see isDirectCall). */
interface DirectCall {
  id: string | number
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params'])
const CALL_KEYS = new Set(['name', 'arguments', '_meta'])

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const onlyKeys = (value: Record<string, unknown>, allowed: Set<string>) => Object.keys(value).every((key) => allowed.has(key))

/**
 * A tools/call as hosts send it, and nothing the SDK would parse otherwise or treat specially: a request the SDK's
 * schemas accept as they stand, with no progress asked for and no task. Checked by hand, since parsing it with the
 * schemas is part of the cost saved; whatever does not pass goes to the SDK, which answers it as it does any.
 */
function isDirectCall(message: unknown): message is DirectCall {
  if (!isObject(message) || message.jsonrpc !== '2.0' || message.method !== 'tools/call' || !onlyKeys(message, REQUEST_KEYS)) return false
  if (!(typeof message.id === 'string' || Number.isSafeInteger(message.id))) return false
  const params = message.params
  if (!isObject(params) || !onlyKeys(params, CALL_KEYS) || typeof params.name !== 'string') return false
  if (params.arguments !== undefined && !isObject(params.arguments)) return false
  const meta = params._meta
  return meta === undefined || (isObject(meta) && meta.progressToken === undefined && !(RELATED_TASK_META_KEY in meta))
}

/** The transport's own conditions on a request (what it accepts, what it is, the protocol it speaks), all met. */
function takesJson(request: Request): boolean {
  const accept = request.headers.get('accept')
  const version = request.headers.get('mcp-protocol-version')
  return (
    accept !== null &&
    accept.includes('application/json') &&
    accept.includes('text/event-stream') &&
    isJsonContentType(request.headers.get('content-type')) &&
    (version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version))
  )
}

/** A JSON-RPC error as the SDK's protocol makes it from a handler's failure. */
function asRpcError(error: unknown): { code: number; message: string; data?: unknown } {
  const { code, message, data } = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown }
  return {
    code: Number.isSafeInteger(code) ? (code as number) : ErrorCode.InternalError,
    message: typeof message === 'string' ? message : 'Internal error',
    ...(data !== undefined ? { data } : {}),
  }
}

function jsonRpcAnswer(body: object): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } })
}

/** A tool the caller may not use: the call's result says so, as a tool's failure does. */
function toolRefused(tool: string, server: string) {
  return errorResult(`You may not use the tool ${tool} on ${server}.`)
}
