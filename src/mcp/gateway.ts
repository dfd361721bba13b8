import { execute } from '../db/templates.ts'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  isInitializeRequest,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type Progress,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { sql } from 'kysely'
import type { Actor } from '../auth/actor.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import { isUuid } from '../models/fields.ts'
import { flushCaches, flushOn } from '../events/caches.ts'
import { LRUCache } from 'lru-cache'
import type { McpCatalog } from './catalog.ts'
import { errorResult, type Provider } from './providers.ts'

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

/** What a request to the gateway is: a session's, or the initialize that opens one. */
export type Admission = { kind: 'open' } | { kind: 'session'; id: string } | { kind: 'refused'; response: Response }

/** Whose a session is, as its row says (which never changes), and when this process last noted its use. */
interface SessionOwner {
  user_id: string
  company_id: string | null
  server: string
  touchedAt: number
}

/** The request-scoped pieces a handler gets from the SDK, as far as cancellation needs them. */
interface HandlerExtra {
  signal: AbortSignal
  requestId: string | number
}

/**
 * The MCP gateway's sessions, served by any process: a session is a row in the store (whose it is, on which
 * server), and each HTTP request is served by a small MCP server of ours made for it, which offers what the caller
 * may use of one provider and forwards only that. Upstream connections are per user and server in each process and
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
  #swept = 0
  #validator: AjvJsonSchemaValidator | undefined

  constructor(
    private readonly catalog: McpCatalog,
    private readonly db: Db,
    private readonly events: EventBus,
  ) {
    events.subscribe('mcp.cancel', ({ session_id, request_id, reason }) => {
      this.#running.get(runningKey(session_id, request_id))?.abort(new Error(reason ?? 'cancelled by the MCP host'))
    })
    flushOn(events, 'mcp-sessions', () => this.#sessions.clear())
  }

  /**
   * Serves one HTTP request of the gateway for `actor` on `server`: an initialize opens a session; any other request
   * must name a session of this user on this server in this company, or is answered 404 (the host starts over).
   */
  async handle(request: Request, actor: Actor, server: string): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id')
    if (sessionId !== null && !(await this.#owns(sessionId, actor, server))) throw new ApiError('not_found', 'No such MCP session; initialize a new one.')
    if (sessionId === null && request.method !== 'POST') throw new ApiError('bad_request', 'Start with an initialize request (POST), then send its Mcp-Session-Id.')
    if (request.method === 'DELETE') {
      await this.db.deleteFrom('mcp_sessions').where('id', '=', sessionId).execute()
      await flushCaches(this.events, 'mcp-sessions')
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
    const initialize = messages.some((message) => isInitializeRequest(message))
    if (initialize && sessionId !== null) return jsonRpcError(400, -32600, 'Invalid Request: this session is initialized already.')
    if (!initialize && sessionId === null) throw new ApiError('bad_request', 'Start with an initialize request (POST), then send its Mcp-Session-Id.')
    if (sessionId !== null) await this.#announceCancellations(sessionId, messages)
    const id = sessionId ?? crypto.randomUUID()
    const response = await (await this.#serverFor(actor, server, id, !messages.some(wantsProgress))).handleRequest(request, { parsedBody: body })
    // Recorded once the initialize succeeded (one refused for its headers leaves nothing behind), and before the
    // host learns the id.
    if (initialize && response.ok) {
      await this.#open(id, actor, server)
      response.headers.set('mcp-session-id', id)
    }
    return response
  }

  /** Stops every request this process serves (at shutdown), which ends their streams. */
  async closeAll(): Promise<void> {
    for (const controller of this.#running.values()) controller.abort(new Error('the platform is shutting down'))
    this.#running.clear()
  }

  /** Whether the session exists and is this user's on this server in this company; its last use is noted. */
  async #owns(id: string, actor: Actor, server: string): Promise<boolean> {
    if (!isUuid(id)) return false
    const key = id.toLowerCase()
    let owner = this.#sessions.get(key)
    if (!owner) {
      const row = await this.db
        .selectFrom('mcp_sessions')
        .select(['user_id', 'company_id', 'server', sql<boolean>`last_seen_at < now() - ${TOUCH_AFTER}::interval`.as('stale')])
        .where('id', '=', key)
        .executeTakeFirst()
      if (!row) return false
      owner = { user_id: row.user_id, company_id: row.company_id, server: row.server, touchedAt: row.stale ? 0 : Date.now() }
      this.#sessions.set(key, owner)
    }
    if (owner.user_id !== actor.userId || owner.company_id !== actor.companyId || owner.server !== server) return false
    if (Date.now() - owner.touchedAt >= TOUCH_AFTER_MS) {
      owner.touchedAt = Date.now()
      // Not awaited, so on the direct path (see #sweep).
      void execute(this.db, this.db.updateTable('mcp_sessions').set({ last_seen_at: sql`now()` }).where('id', '=', key)).catch(() => {})
    }
    return true
  }

  /** A new session: the user's least recently used ones beyond the cap are closed, and long-idle ones swept. */
  async #open(id: string, actor: Actor, server: string): Promise<void> {
    this.#sweep()
    await this.db.insertInto('mcp_sessions').values({ id, user_id: actor.userId, company_id: actor.companyId, server, last_seen_at: sql`now()` as never }).execute()
    const [trimmed] = await this.db
      .deleteFrom('mcp_sessions')
      .where('user_id', '=', actor.userId)
      .where('id', 'in', (eb) =>
        eb.selectFrom('mcp_sessions').select('id').where('user_id', '=', actor.userId).orderBy('last_seen_at', 'desc').orderBy('created_at', 'desc').offset(SESSIONS_PER_USER),
      )
      .execute()
    if (trimmed && trimmed.numDeletedRows > 0n) await flushCaches(this.events, 'mcp-sessions')
  }

  /**
   * A host's `notifications/cancelled` goes to whichever process serves that request, this one included. Each is an
   * event to every process, so a request announces a few, with ids of sane length: a batch of thousands would
   * otherwise hold up the bus for everyone.
   */
  async #announceCancellations(sessionId: string, messages: unknown[]): Promise<void> {
    let announced = 0
    for (const message of messages) {
      const m = message as { method?: unknown; params?: { requestId?: unknown; reason?: unknown } }
      if (m?.method !== 'notifications/cancelled') continue
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
  async #serverFor(actor: Actor, name: string, sessionId: string, json: boolean): Promise<WebStandardStreamableHTTPServerTransport> {
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

    /** The provider and the caller's judge, afresh for each request. */
    const resolve = async (): Promise<{ provider: Provider; may: (item: string) => boolean }> => {
      // The aggregate judges each item by its own server's rules.
      if (name === AGGREGATE) return { provider: await this.catalog.aggregate(actor), may: () => true }
      const [provider, judge] = await Promise.all([this.catalog.provider(actor, name), this.catalog.judge(actor)])
      if (!provider || !judge.server(name)) throw new McpError(ErrorCode.InvalidRequest, `The MCP server ${name} is no longer available to you.`)
      return { provider, may: (item) => judge(name, item) }
    }
    const refuse = (what: string) => new McpError(ErrorCode.InvalidParams, `You may not use ${what} on ${name}.`)

    mcp.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const { provider, may } = await resolve()
      const listed = await provider.listTools(actor, request.params?.cursor)
      return { ...listed, tools: listed.tools.filter((tool) => may(tool.name)) }
    })
    mcp.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { provider, may } = await resolve()
      // A tool hidden from the list is refused by name too.
      if (!may(request.params.name)) return errorResult(`You may not use the tool ${request.params.name} on ${name}.`)
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
        const result = await provider.callTool(actor, request.params, { signal, onProgress })
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
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: json })
    await mcp.connect(transport)
    return transport
  }

  /** Deletes sessions unseen for long, at most once a minute per process (on the way to opening a new one). */
  #sweep(): void {
    const now = Date.now()
    if (now - this.#swept < SWEEP_EVERY_MS) return
    this.#swept = now
    // Not awaited, so on the direct path: a query of Kysely's own still waiting for a connection when the store
    // closes would hold the close up.
    void execute(this.db, this.db.deleteFrom('mcp_sessions').where('last_seen_at', '<', sql<Date>`now() - ${SESSION_IDLE}::interval`).returning('id'))
      .then((swept) => (swept.length > 0 ? flushCaches(this.events, 'mcp-sessions') : undefined))
      .catch(() => {})
  }
}

/** Whether a JSON-RPC message asks to hear its progress (a `progressToken` in its `_meta`). */
function wantsProgress(message: unknown): boolean {
  const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta
  return meta?.progressToken !== undefined
}

function runningKey(sessionId: string, requestId: string | number): string {
  return `${sessionId} ${typeof requestId}:${requestId}`
}

/** A JSON-RPC error answer, as the transport itself answers the requests it refuses. */
function jsonRpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status })
}
