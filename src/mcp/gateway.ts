import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type Progress,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { Actor } from '../auth/actor.ts'
import type { Clock } from '../clock.ts'
import type { McpCatalog } from './catalog.ts'
import { errorResult, type Provider } from './providers.ts'

interface Session {
  transport: WebStandardStreamableHTTPServerTransport
  userId: string
  companyId: string | null
  server: string
  lastSeen: number
}

/** The name a session of the aggregate `/mcp` goes by. */
export const AGGREGATE = ''

/** Sessions one user may hold open; opening one more closes their least recently used. */
const SESSIONS_PER_USER = 32

/** A host that vanished without DELETE leaves its session behind; it is closed after this long unseen. */
const SESSION_IDLE_MS = 60 * 60 * 1000

/**
 * The MCP gateway's sessions: each MCP host session is a small MCP server of ours, speaking Streamable HTTP, that
 * offers what the caller may use of one provider and forwards only that. The provider and the rules are looked up
 * on every request (both cached), so an edited server or permission applies to open sessions too.
 */
export class Gateway {
  readonly #sessions = new Map<string, Session>()

  #swept = 0

  constructor(
    private readonly catalog: McpCatalog,
    private readonly clock: Clock,
  ) {}

  /** The session a request names, if it is this user's on this server in this company. */
  session(id: string, actor: Actor, server: string): Session | undefined {
    const session = this.#sessions.get(id)
    if (!session || session.userId !== actor.userId || session.companyId !== actor.companyId || session.server !== server) return undefined
    session.lastSeen = this.clock.now()
    return session
  }

  /** A new session for an initialize request. */
  async open(actor: Actor, name: string): Promise<WebStandardStreamableHTTPServerTransport> {
    this.#sweep()
    this.#makeRoom(actor.userId)
    const mcp = new Server({ name: name === AGGREGATE ? 'switchboard' : `switchboard/${name}`, version: '0.1.0' }, { capabilities: { tools: {}, resources: {}, prompts: {} } })

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
      const result = await provider.callTool(actor, request.params, { signal: extra.signal, onProgress })
      await relayed
      return result
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

    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        this.#sessions.set(id, { transport, userId: actor.userId, companyId: actor.companyId, server: name, lastSeen: this.clock.now() })
      },
    })
    transport.onclose = () => {
      if (transport.sessionId) this.#sessions.delete(transport.sessionId)
    }
    await mcp.connect(transport)
    return transport
  }

  /** Keeps a user below their session cap by closing the one they used least recently. */
  #makeRoom(userId: string): void {
    const theirs = [...this.#sessions.values()].filter((s) => s.userId === userId)
    if (theirs.length < SESSIONS_PER_USER) return
    const oldest = theirs.reduce((a, b) => (a.lastSeen <= b.lastSeen ? a : b))
    this.#sessions.delete(oldest.transport.sessionId!)
    void oldest.transport.close().catch(() => {})
  }

  /** Closes sessions unseen for long, at most once a minute (on the way to opening a new one). */
  #sweep(): void {
    const now = this.clock.now()
    if (now - this.#swept < 60_000) return
    this.#swept = now
    for (const session of this.#sessions.values()) if (now - session.lastSeen > SESSION_IDLE_MS) void session.transport.close().catch(() => {})
  }

  /** Ends every host session (at shutdown). */
  async closeAll(): Promise<void> {
    const sessions = [...this.#sessions.values()]
    this.#sessions.clear()
    await Promise.all(sessions.map((s) => s.transport.close().catch(() => {})))
  }
}
