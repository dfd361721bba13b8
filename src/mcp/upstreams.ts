import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { Clock } from '../clock.ts'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import type { VaultTokens } from '../vault/tokens.ts'
import type { SecretRef, Vault } from '../vault/vault.ts'
import { Breaker, type BreakerStatus } from './breaker.ts'

/** An MCP server's stored definition (model McpServer). */
export interface ServerDefinition {
  id: string
  company_id: string
  name: string
  transport: 'stdio' | 'streamable-http'
  command: string | null
  args: string[]
  env: Record<string, { value: string } | { secret: string }>
  url: string | null
  headers: Record<string, { value: string } | { secret: string }>
  vault_secrets: string[]
  version: number
}

interface Connection {
  client: Promise<Client>
  /** The definition's version it was made from: an edited definition gets a fresh connection. */
  version: number
  lastUsed: number
  busy: number
  vaultToken?: string
}

/** One upstream's breaker, with whose it is, for the breaker endpoint. */
export interface BreakerReport extends BreakerStatus {
  company_id: string
  server: string
  user_id: string
}

/** A vault token lives as long as its subprocess, and never longer than this. */
const VAULT_TOKEN_MAX_MS = 24 * 60 * 60 * 1000

/**
 * Errors that say the request was wrong, not that the upstream is in trouble: they neither count towards the
 * breaker nor cost the connection.
 */
function isUpstreamFailure(error: unknown): boolean {
  return !(error instanceof McpError && [ErrorCode.InvalidRequest, ErrorCode.MethodNotFound, ErrorCode.InvalidParams].includes(error.code))
}

/**
 * One upstream connection per (user, server): a subprocess of their own for a stdio server, an HTTP client for a
 * remote one. Connections are made on first use, reused, closed after a while unused, and dropped when they fail
 * so that the next call starts afresh. Each has a circuit breaker, so a failing upstream is not hammered.
 */
export class Upstreams {
  readonly #connections = new Map<string, Connection>()
  readonly #breakers = new Map<string, { breaker: Breaker; companyId: string; server: string; userId: string }>()
  readonly #reaper: ReturnType<typeof setInterval>

  constructor(
    private readonly vault: Vault,
    private readonly vaultTokens: VaultTokens,
    private readonly config: Pick<Config, 'baseUrl' | 'mcpUpstream'>,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    const every = Math.min(Math.max(config.mcpUpstream.idleMs / 2, 1_000), 60_000)
    this.#reaper = setInterval(() => void this.reapIdle(), every)
    this.#reaper.unref()
  }

  /** Runs `request` on the user's connection to `server`, through its breaker. */
  async call<T>(userId: string, server: ServerDefinition, request: (client: Client) => Promise<T>): Promise<T> {
    const key = `${userId}:${server.id}`
    return this.#breaker(key, userId, server).run(async () => {
      const connection = this.#connection(key, userId, server)
      connection.busy += 1
      try {
        return await request(await connection.client)
      } catch (error) {
        // The connection may be dead (a killed subprocess, a lost session): the next call makes a new one.
        if (isUpstreamFailure(error)) await this.#drop(key, connection)
        throw error
      } finally {
        connection.busy -= 1
        connection.lastUsed = this.clock.now()
      }
    }, isUpstreamFailure)
  }

  /** Breakers of a company's upstreams (or one user's), for the breaker endpoint. */
  breakers(companyId: string, userId?: string): BreakerReport[] {
    return [...this.#breakers.values()]
      .filter((b) => b.companyId === companyId && (userId === undefined || b.userId === userId))
      .map((b) => ({ company_id: b.companyId, server: b.server, user_id: b.userId, ...b.breaker.status() }))
  }

  /** How many connections are open (for tests and the log). */
  get size(): number {
    return this.#connections.size
  }

  /** Closes connections unused for the idle time (killing their subprocesses); a busy one is left alone. */
  async reapIdle(): Promise<number> {
    const cutoff = this.clock.now() - this.config.mcpUpstream.idleMs
    const idle = [...this.#connections].filter(([, c]) => c.busy === 0 && c.lastUsed <= cutoff)
    await Promise.all(idle.map(([key, connection]) => this.#drop(key, connection)))
    // A breaker with nothing to remember goes too, so the map does not grow with every user who ever called.
    for (const [key, { breaker }] of this.#breakers) {
      if (!this.#connections.has(key) && breaker.state === 'closed' && breaker.status().failures === 0) this.#breakers.delete(key)
    }
    return idle.length
  }

  /** Ends every upstream: subprocesses are killed (at shutdown). */
  async closeAll(): Promise<void> {
    clearInterval(this.#reaper)
    await Promise.all([...this.#connections].map(([key, connection]) => this.#drop(key, connection)))
  }

  #breaker(key: string, userId: string, server: ServerDefinition): Breaker {
    let entry = this.#breakers.get(key)
    if (!entry) {
      const settings = { failures: this.config.mcpUpstream.breakerFailures, cooldownMs: this.config.mcpUpstream.breakerCooldownMs }
      entry = { breaker: new Breaker(settings, this.clock), companyId: server.company_id, server: server.name, userId }
      this.#breakers.set(key, entry)
    }
    return entry.breaker
  }

  #connection(key: string, userId: string, server: ServerDefinition): Connection {
    const existing = this.#connections.get(key)
    if (existing && existing.version === server.version) return existing
    if (existing) void this.#drop(key, existing)
    const connection: Connection = { client: Promise.resolve() as never, version: server.version, lastUsed: this.clock.now(), busy: 0 }
    connection.client = this.#connect(userId, server, connection)
    // A connection that never came up is forgotten at once; the caller sees the error.
    connection.client.catch(() => this.#drop(key, connection))
    this.#connections.set(key, connection)
    return connection
  }

  async #drop(key: string, connection: Connection): Promise<void> {
    if (this.#connections.get(key) === connection) this.#connections.delete(key)
    if (connection.vaultToken) this.vaultTokens.revoke(connection.vaultToken)
    await connection.client.then((client) => client.close()).catch(() => {})
  }

  /** Values given in the definition, or read from the company's vault by name. */
  async #resolve(server: ServerDefinition, values: ServerDefinition['env']): Promise<Record<string, string>> {
    const resolved: Record<string, string> = {}
    for (const [key, source] of Object.entries(values)) {
      if ('value' in source) resolved[key] = source.value
      else {
        const secret = await this.vault.get({ scope: 'company', ownerId: server.company_id, name: source.secret })
        if (secret === undefined) throw new Error(`the vault has no company secret ${source.secret} for ${key}`)
        resolved[key] = secret
      }
    }
    return resolved
  }

  /** A token for the names the server may read: the user's own secret of a name first, else the company's. */
  #vaultToken(userId: string, server: ServerDefinition, connection: Connection): Record<string, string> {
    if (server.vault_secrets.length === 0) return {}
    const refs: SecretRef[] = server.vault_secrets.flatMap((name) => [
      { scope: 'user' as const, ownerId: userId, name },
      { scope: 'company' as const, ownerId: server.company_id, name },
    ])
    connection.vaultToken = this.vaultTokens.issue(refs, VAULT_TOKEN_MAX_MS)
    return { SWITCHBOARD_VAULT_URL: `${this.config.baseUrl}/api/vault`, SWITCHBOARD_VAULT_TOKEN: connection.vaultToken }
  }

  async #connect(userId: string, server: ServerDefinition, connection: Connection): Promise<Client> {
    const client = new Client({ name: 'switchboard-gateway', version: '0.1.0' })
    if (server.transport === 'stdio') {
      // Only the server's own environment (and PATH to find the program): never the platform's.
      const env = { PATH: process.env.PATH ?? '', ...(await this.#resolve(server, server.env)), ...this.#vaultToken(userId, server, connection) }
      await client.connect(new StdioClientTransport({ command: server.command!, args: server.args, env, stderr: 'ignore' }))
    } else {
      const headers = await this.#resolve(server, server.headers)
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url!), { requestInit: { headers } }))
    }
    this.log.info('mcp upstream connected', { server: server.name })
    return client
  }
}
