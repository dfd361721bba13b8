import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js'
import { ConnectionRequired, type McpConnections } from './connections.ts'
import type { Clock } from '../clock.ts'
import type { Config } from '../config.ts'
import type { McpCommand, McpServer } from '../db/schema.ts'
import type { Values } from '../db/columns.ts'
import type { Logger } from '../logger.ts'
import type { SelfAddress } from '../http/self-address.ts'
import type { OutboundPolicy } from '../net/outbound.ts'
import type { VaultTokens } from '../vault/tokens.ts'
import type { SecretRef, Vault } from '../vault/vault.ts'
import { Breaker, type BreakerStatus, type Outcome } from './breaker.ts'
import type { Sandbox } from './sandbox.ts'
import { VAULT_SOCKET_INSIDE, type VaultSocket } from '../vault/socket.ts'
import { clientSdk, loadedClientSdk } from './sdk.ts'

/** A program of the platform's catalogue (model McpCommand), as a stdio server runs it. */
export type ProgramDefinition = Pick<McpCommand, 'name' | 'command' | 'args' | 'env' | 'variables' | 'network' | 'enabled'>

/** An MCP server's stored definition (model McpServer), with its catalogue program when it is a stdio server. */
export type ServerDefinition = Pick<McpServer, 'id' | 'company_id' | 'name' | 'transport' | 'env' | 'url' | 'headers' | 'vault_secrets' | 'oauth'> & {
  program: ProgramDefinition | null
  /** Grows with every edit of the server or of its program: a newer definition gets a fresh connection. */
  version: number
}

interface Connection {
  key: string
  server: Pick<ServerDefinition, 'id' | 'company_id'>
  client: Promise<Client>
  /** The definition's version it was made from: a newer definition gets a fresh connection. */
  version: number
  createdAt: number
  lastUsed: number
  busy: number
  vaultToken?: string
  /** Closed, or to be closed once its last call ends: no new calls are given to it. */
  retired: boolean
  closed: boolean
  /** Its death was counted against the breaker already: the calls that were in flight on it count once together. */
  deathCounted: boolean
}

/**
 * Why the platform itself could not set a connection up (a missing vault secret, a disabled program): its message
 * is the platform's own words, safe to show the admin, unlike errors carrying what an upstream said.
 */
export class UpstreamSetupError extends Error {
  override name = 'UpstreamSetupError'
}

/** Whose connection: a user's own, or an agent's acting as that user (its service account). */
export interface UpstreamUser {
  userId: string
  /** Acting for an agent as its service account: the account's personal secrets stay out of reach. */
  delegated?: boolean
}

/** One upstream's breaker, with whose it is, for the breaker endpoint. */
export interface BreakerReport extends BreakerStatus {
  company_id: string
  server: string
  user_id: string
  delegated: boolean
}

/** A connection is renewed after this long (once idle), so its vault token never expires under it. */
const CONNECTION_MAX_AGE_MS = 12 * 60 * 60 * 1000
const VAULT_TOKEN_TTL_MS = 2 * CONNECTION_MAX_AGE_MS

/** The upstream refused the person's sign-in, and refreshing it did not help. */
function isUnauthorized(error: unknown): boolean {
  const sdk = loadedClientSdk()
  return (sdk !== undefined && error instanceof sdk.UnauthorizedError) || error instanceof OAuthError
}

/**
 * What a failed request says of the upstream. An error response is the upstream answering; a timeout is a failure
 * of the upstream but not of the connection; anything else (closed connection, transport error, a spawn or
 * initialize that failed) is a dead connection.
 */
function classify(error: unknown): 'answered' | 'timeout' | 'dead' {
  if (!(error instanceof McpError)) return 'dead'
  if (error.code === ErrorCode.ConnectionClosed) return 'dead'
  return error.code === ErrorCode.RequestTimeout ? 'timeout' : 'answered'
}

/**
 * One upstream connection per (user, server): a subprocess of their own for a stdio server, an HTTP client for a
 * remote one. Connections are made on first use, reused, closed after a while unused, and dropped when they die,
 * so that the next call starts afresh. Each has a circuit breaker, so a failing upstream is not hammered.
 */
export class Upstreams {
  readonly #connections = new Map<string, Connection>()
  readonly #breakers = new Map<string, { breaker: Breaker; companyId: string; server: string; userId: string; delegated: boolean }>()

  constructor(
    private readonly vault: Vault,
    private readonly vaultTokens: VaultTokens,
    private readonly config: Pick<Config, 'mcpUpstream'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    /**
     * Stdio servers run in the sandbox and call this process back for the vault; remote ones are reached only where
     * the outbound-address policy allows.
     */
    private readonly isolation: { sandbox: Sandbox; outbound: OutboundPolicy; self: SelfAddress; vaultSocket: VaultSocket },
    /** Whether a server is still defined and enabled; connections to one that is not are closed by the reaper. */
    private readonly stillServed: (server: Pick<ServerDefinition, 'id' | 'company_id'>) => Promise<boolean> = async () => true,
    /** People's own OAuth connections, for the servers that sign each person in (McpServer.oauth). */
    private readonly connections?: McpConnections,
  ) {}

  /** How often reapIdle() should run: twice per idle time, within a second and a minute. */
  get reapEveryMs(): number {
    return Math.min(Math.max(this.config.mcpUpstream.idleMs / 2, 1_000), 60_000)
  }

  /**
   * Runs `request` on the user's connection to `server`, through its breaker. A request cancelled through `signal`
   * tells nothing about the upstream: it neither counts nor costs the connection.
   */
  async call<T>(user: UpstreamUser, server: ServerDefinition, request: (client: Client) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const key = `${user.userId}:${server.id}${user.delegated ? ':delegated' : ''}`
    let outcome: Outcome = 'failure'
    return this.#breaker(key, user, server).run(
      async () => {
        const connection = this.#connection(key, user, server)
        connection.busy += 1
        try {
          return await request(await connection.client)
        } catch (error) {
          if (error instanceof ConnectionRequired || (server.oauth && isUnauthorized(error))) {
            // The person's sign-in, not the upstream, is what failed: nothing for the breaker to count.
            outcome = 'neutral'
            this.#drop(connection)
            if (error instanceof ConnectionRequired) throw error
            await this.connections?.expired(user.userId, server.id)
            throw new ConnectionRequired(`Your connection to the MCP server ${server.name} has expired (it refused the sign-in); reconnect it under My connections.`)
          }
          const seen = signal?.aborted ? 'cancelled' : classify(error)
          // An error the upstream answered with shows it is up, like a result.
          outcome = seen === 'cancelled' ? 'neutral' : seen === 'answered' ? 'success' : 'failure'
          if (seen === 'dead') {
            if (connection.deathCounted) outcome = 'neutral'
            connection.deathCounted = true
            // Not awaited: closing a subprocess can take seconds, and the caller should hear at once.
            this.#drop(connection)
          }
          throw error
        } finally {
          connection.busy -= 1
          connection.lastUsed = this.clock.now()
          if (connection.retired && connection.busy === 0) this.#close(connection)
        }
      },
      () => outcome,
    )
  }

  /** Breakers of a company's upstreams (or one user's), for the breaker endpoint. */
  breakers(companyId: string, userId?: string): BreakerReport[] {
    return [...this.#breakers.values()]
      .filter((b) => b.companyId === companyId && (userId === undefined || b.userId === userId))
      .map((b) => ({ company_id: b.companyId, server: b.server, user_id: b.userId, delegated: b.delegated, ...b.breaker.status() }))
  }

  /** This process's breakers by state, for the metrics. */
  breakerStates(): Record<'closed' | 'open' | 'half-open', number> {
    const counts = { closed: 0, open: 0, 'half-open': 0 }
    for (const { breaker } of this.#breakers.values()) counts[breaker.state]++
    return counts
  }

  /** How many connections are open (for tests and the log). */
  get size(): number {
    return this.#connections.size
  }

  /**
   * Closes connections unused for the idle time, or whose server was deleted or disabled since (killing their
   * subprocesses); a busy one is left alone.
   */
  async reapIdle(): Promise<number> {
    const cutoff = this.clock.now() - this.config.mcpUpstream.idleMs
    const quiet = [...this.#connections.values()].filter((c) => c.busy === 0)
    const served = await Promise.all(quiet.map((c) => (c.lastUsed <= cutoff ? false : this.stillServed(c.server).catch(() => true))))
    const idle = quiet.filter((_, i) => !served[i])
    await Promise.all(idle.map((connection) => this.#drop(connection)))
    // A breaker with nothing to remember goes too, so the map does not grow with every user who ever called.
    for (const [key, { breaker }] of this.#breakers) {
      if (!this.#connections.has(key) && breaker.state === 'closed' && breaker.status().failures === 0) this.#breakers.delete(key)
    }
    return idle.length
  }

  /** Closes a person's connections to a server (theirs and as a service account), so the next call signs in afresh. */
  async forget(userId: string, serverId: string): Promise<void> {
    const mine = [...this.#connections.values()].filter((c) => c.key === `${userId}:${serverId}` || c.key === `${userId}:${serverId}:delegated`)
    await Promise.all(mine.map((connection) => this.#drop(connection)))
  }

  /** Ends every upstream: subprocesses are killed (at shutdown). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#connections.values()].map((connection) => this.#drop(connection)))
  }

  #breaker(key: string, user: UpstreamUser, server: ServerDefinition): Breaker {
    let entry = this.#breakers.get(key)
    if (!entry) {
      const settings = { failures: this.config.mcpUpstream.breakerFailures, cooldownMs: this.config.mcpUpstream.breakerCooldownMs }
      entry = { breaker: new Breaker(settings, this.clock), companyId: server.company_id, server: server.name, userId: user.userId, delegated: user.delegated === true }
      this.#breakers.set(key, entry)
    }
    return entry.breaker
  }

  /**
   * The connection for a call. A newer definition, or an old connection, gets a fresh one; the one it replaces is
   * retired and closes when its calls end. A caller holding an older definition than the connection's uses it as is.
   */
  #connection(key: string, user: UpstreamUser, server: ServerDefinition): Connection {
    const existing = this.#connections.get(key)
    const now = this.clock.now()
    if (existing && server.version <= existing.version && now - existing.createdAt < CONNECTION_MAX_AGE_MS) return existing
    if (existing) {
      this.#connections.delete(key)
      existing.retired = true
      if (existing.busy === 0) this.#close(existing)
    }
    const connection: Connection = {
      key,
      server: { id: server.id, company_id: server.company_id },
      client: Promise.resolve() as never,
      version: server.version,
      createdAt: now,
      lastUsed: now,
      busy: 0,
      retired: false,
      closed: false,
      deathCounted: false,
    }
    connection.client = this.#connect(user, server, connection)
    // A connection that never came up is forgotten at once; the caller sees the error.
    connection.client.catch(() => this.#drop(connection))
    this.#connections.set(key, connection)
    return connection
  }

  /** Forgets a connection and closes it. */
  #drop(connection: Connection): Promise<void> {
    if (this.#connections.get(connection.key) === connection) this.#connections.delete(connection.key)
    return this.#close(connection)
  }

  /** Closes a connection once: its process ends and its vault token stops working. */
  async #close(connection: Connection): Promise<void> {
    if (connection.closed) return
    connection.closed = true
    if (connection.vaultToken) await this.vaultTokens.revoke(connection.vaultToken).catch(() => {})
    await connection.client.then((client) => client.close()).catch(() => {})
  }

  /** Values given in a definition, or read by name from the company's vault (the global one for the catalogue). */
  async #resolve(companyId: string | null, values: Values): Promise<Record<string, string>> {
    const resolved: Record<string, string> = {}
    const scope = companyId === null ? 'global' : 'company'
    for (const [key, source] of Object.entries(values)) {
      if ('value' in source) resolved[key] = source.value
      else {
        const secret = await this.vault.get({ scope, ownerId: companyId, name: source.secret })
        if (secret === undefined) throw new UpstreamSetupError(`the vault has no ${scope} secret ${source.secret} for ${key}`)
        resolved[key] = secret
      }
    }
    return resolved
  }

  /**
   * The program's environment: its fixed values, the company's values for the variables it declares (nothing
   * else), PATH to find programs, and the vault token. Never anything of the platform's own environment.
   */
  async #environment(user: UpstreamUser, server: ServerDefinition, program: ProgramDefinition, connection: Connection): Promise<Record<string, string>> {
    const declared = new Set(program.variables)
    const given = Object.fromEntries(Object.entries(server.env).filter(([name]) => declared.has(name)))
    const env = { ...(await this.#resolve(null, program.env)), ...(await this.#resolve(server.company_id, given)) }
    // Dropped while the vault was read: no token is issued, no process started.
    if (connection.closed) throw new UpstreamSetupError('the connection was closed while it was being made')
    const home: Record<string, string> = this.isolation.sandbox.enabled ? { HOME: '/tmp' } : {}
    return { ...env, PATH: process.env.PATH ?? '/usr/bin:/bin', ...home, ...(await this.#vaultToken(user, server, connection)) }
  }

  /**
   * A token for the names the server may read: the user's own secret of a name first, else the company's. Acting
   * as an agent's service account, only the company's.
   */
  async #vaultToken(user: UpstreamUser, server: ServerDefinition, connection: Connection): Promise<Record<string, string>> {
    if (server.vault_secrets.length === 0) return {}
    const refs: SecretRef[] = server.vault_secrets.flatMap((name) => [
      ...(user.delegated ? [] : [{ scope: 'user' as const, ownerId: user.userId, name }]),
      { scope: 'company' as const, ownerId: server.company_id, name },
    ])
    connection.vaultToken = await this.vaultTokens.issue(refs, VAULT_TOKEN_TTL_MS)
    // The token works only on this process's vault socket, which the sandbox shows at a fixed place.
    const socket = this.isolation.sandbox.enabled ? VAULT_SOCKET_INSIDE : this.isolation.vaultSocket.path
    return { SWITCHBOARD_VAULT_SOCKET: socket, SWITCHBOARD_VAULT_TOKEN: connection.vaultToken }
  }

  async #connect(user: UpstreamUser, server: ServerDefinition, connection: Connection): Promise<Client> {
    const { Client, StdioClientTransport, StreamableHTTPClientTransport } = await clientSdk()
    const client = new Client({ name: 'switchboard-gateway', version: '0.1.0' })
    if (server.transport === 'stdio') {
      const program = server.program
      if (!program) throw new UpstreamSetupError(`the server ${server.name} names no program of the platform's catalogue`)
      if (!program.enabled) throw new UpstreamSetupError(`the program ${program.name} is disabled in the platform's catalogue`)
      const { command, args } = this.isolation.sandbox.wrap(program.command, program.args, { network: program.network, vaultSocket: this.isolation.vaultSocket.path })
      const env = await this.#environment(user, server, program, connection)
      await client.connect(new StdioClientTransport({ command, args, env, stderr: 'ignore' }))
    } else {
      const headers = await this.#resolve(server.company_id, server.headers)
      if (server.oauth && !this.connections) throw new UpstreamSetupError(`the server ${server.name} signs people in with OAuth, which this process cannot do`)
      const authProvider = server.oauth ? await this.connections!.forUpstream(user.userId, server) : undefined
      // Checked again at connect time, each request pinned to the address checked: a name that resolved to a public
      // address when it was saved may point inside now.
      const transport = new StreamableHTTPClientTransport(new URL(server.url!), { requestInit: { headers }, fetch: this.isolation.outbound.fetch, authProvider })
      await client.connect(transport)
    }
    if (connection.closed) {
      // Dropped while it came up (a newer definition, shutdown): it must not outlive that.
      if (connection.vaultToken) await this.vaultTokens.revoke(connection.vaultToken).catch(() => {})
      await client.close().catch(() => {})
      throw new UpstreamSetupError('the connection was closed while it was being made')
    }
    // A process that exits or a session that ends drops the connection at once: the next call starts afresh, and
    // the vault token dies with the process.
    client.onclose = () => void this.#drop(connection)
    this.log.info('mcp upstream connected', { server: server.name })
    return client
  }
}
