import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { sql } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import type { OutboundFetch } from '../net/outbound.ts'
import type { Vault } from '../vault/vault.ts'
import { clientSdk, type ClientSdk } from './sdk.ts'
import type { ServerDefinition } from './upstreams.ts'

export type ConnectionStatus = 'connected' | 'expired' | 'not_connected'

/** Everything the OAuth client keeps for one person and server, as one vault secret of that person. */
interface Kept {
  client?: OAuthClientInformationMixed
  tokens?: OAuthTokens
  /** When the access token stops working (ms), from its expires_in. */
  expiresAt?: number
  verifier?: string
  state?: string
  discovery?: OAuthDiscoveryState
}

/** A token this close to its end is refreshed before a connection is made with it. */
const REFRESH_AHEAD_MS = 60_000

/** The SDK's OAuth flow (discovery, registration, the code's exchange, a refresh), loaded with its client side. */
async function auth(...args: Parameters<ClientSdk['auth']>): ReturnType<ClientSdk['auth']> {
  return (await clientSdk()).auth(...args)
}

/** Why a server's tools cannot be used until the person (re)connects: its message is for them. */
export class ConnectionRequired extends Error {
  override name = 'ConnectionRequired'
}

/**
 * The OAuth client state of one person for one server, read from and written back to their vault secret. The MCP
 * SDK's client auth drives it (discovery, registration, PKCE, refresh); `interactive` is false on the gateway's
 * path, where no browser can be sent anywhere: the SDK then gives up with UnauthorizedError.
 */
class KeptProvider implements OAuthClientProvider {
  authorizationUrl?: URL

  constructor(
    private kept: Kept,
    private readonly save: (kept: Kept) => Promise<void>,
    readonly redirectUrl: string,
    private readonly serverId: string,
    private readonly clock: Clock,
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Switchboard',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }

  /** The server travels in the state, so the callback knows whose flow it ends; the random part proves it. */
  async state(): Promise<string> {
    const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url')
    await this.#update({ state: nonce })
    return `${this.serverId}.${nonce}`
  }
  clientInformation() {
    return this.kept.client
  }
  async saveClientInformation(client: OAuthClientInformationMixed) {
    await this.#update({ client })
  }
  tokens() {
    return this.kept.tokens
  }
  async saveTokens(tokens: OAuthTokens) {
    await this.#update({ tokens, expiresAt: tokens.expires_in ? this.clock.now() + tokens.expires_in * 1000 : undefined })
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  async saveCodeVerifier(verifier: string) {
    await this.#update({ verifier })
  }
  codeVerifier() {
    if (!this.kept.verifier) throw new ConnectionRequired('No sign-in is under way for this server; start it again.')
    return this.kept.verifier
  }
  discoveryState() {
    return this.kept.discovery
  }
  async saveDiscoveryState(discovery: OAuthDiscoveryState) {
    await this.#update({ discovery })
  }
  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    const drop: Partial<Record<keyof Kept, undefined>> =
      scope === 'all' ? { client: undefined, tokens: undefined, verifier: undefined, discovery: undefined } : scope === 'client' ? { client: undefined } : scope === 'tokens' ? { tokens: undefined } : scope === 'verifier' ? { verifier: undefined } : { discovery: undefined }
    await this.#update(drop)
  }

  get current(): Kept {
    return this.kept
  }

  async #update(change: Partial<Kept>) {
    this.kept = { ...this.kept, ...change }
    await this.save(this.kept)
  }
}

/**
 * Each person's own OAuth connections to the remote MCP servers that ask for them (McpServer.oauth): connecting
 * (the flow runs on the platform, with the SDK's client auth, under the outbound-address policy), the callback,
 * the tokens for an upstream connection (refreshed ahead of expiry), and the mark an upstream 401 leaves.
 */
export class McpConnections {
  constructor(
    private readonly db: Db,
    private readonly vault: Vault,
    private readonly clock: Clock,
    private readonly fetch: OutboundFetch,
    /** The console's callback, which the remote authorization server sends the browser back to. */
    readonly redirectUrl: string,
  ) {}

  /** Starts connecting: where to send the person's browser, or nothing when a refresh was all it took. */
  async start(userId: string, server: ServerDefinition): Promise<{ authorizationUrl?: string }> {
    const provider = await this.#provider(userId, server)
    const result = await auth(provider, { serverUrl: server.url!, fetchFn: this.fetch })
    if (result === 'AUTHORIZED') {
      await this.#mark(userId, server.id, 'connected')
      return {}
    }
    return { authorizationUrl: provider.authorizationUrl!.toString() }
  }

  /** The callback of a flow `start` began: the state must be the one issued, then the code is exchanged. */
  async finish(userId: string, server: ServerDefinition, code: string, state: string): Promise<void> {
    const provider = await this.#provider(userId, server)
    const nonce = state.slice(state.indexOf('.') + 1)
    if (!provider.current.state || provider.current.state !== nonce) throw new ConnectionRequired('This sign-in answer is not the one expected (it is old, or was started elsewhere); connect again.')
    await auth(provider, { serverUrl: server.url!, authorizationCode: code, fetchFn: this.fetch })
    await this.vault.set(this.#ref(userId, server.id), JSON.stringify({ ...provider.current, state: undefined, verifier: undefined }))
    await this.#mark(userId, server.id, 'connected')
  }

  /**
   * The provider an upstream connection signs its requests with. Without a connection it is refused with a message
   * for the person; a token about to expire is refreshed first.
   */
  async forUpstream(userId: string, server: ServerDefinition): Promise<OAuthClientProvider> {
    const status = (await this.statuses(userId)).get(server.id)?.status
    if (status === 'expired') throw new ConnectionRequired(`Your connection to the MCP server ${server.name} has expired; reconnect it under My connections.`)
    const provider = await this.#provider(userId, server)
    const kept = provider.current
    if (!kept.tokens) throw new ConnectionRequired(`Connect your account for the MCP server ${server.name} under My connections first.`)
    if (kept.expiresAt !== undefined && kept.expiresAt - this.clock.now() < REFRESH_AHEAD_MS && kept.tokens.refresh_token) {
      // auth() with a refresh token refreshes; were that refused, it would start a new flow nobody can finish here.
      const result = await auth(provider, { serverUrl: server.url!, fetchFn: this.fetch }).catch(() => 'REDIRECT' as const)
      if (result !== 'AUTHORIZED') {
        await this.expired(userId, server.id)
        throw new ConnectionRequired(`Your connection to the MCP server ${server.name} has expired; reconnect it under My connections.`)
      }
    }
    return provider
  }

  /** The upstream answered 401 and a refresh did not help: the person must reconnect. */
  async expired(userId: string, serverId: string): Promise<void> {
    await this.#mark(userId, serverId, 'expired')
  }

  /** Forgets the connection: the tokens leave the vault. */
  async disconnect(userId: string, serverId: string): Promise<void> {
    await this.vault.delete(this.#ref(userId, serverId))
    await this.db.deleteFrom('mcp_connections').where('user_id', '=', userId).where('server_id', '=', serverId).execute()
  }

  /** Where each of the person's connections stands, by server id. */
  async statuses(userId: string): Promise<Map<string, { status: 'connected' | 'expired'; changed_at: Date }>> {
    const rows = await this.db.selectFrom('mcp_connections').select(['server_id', 'status', 'changed_at']).where('user_id', '=', userId).execute()
    return new Map(rows.map((r) => [r.server_id, { status: r.status, changed_at: new Date(r.changed_at) }]))
  }

  async #provider(userId: string, server: ServerDefinition): Promise<KeptProvider> {
    const ref = this.#ref(userId, server.id)
    const stored = await this.vault.get(ref)
    const kept: Kept = stored ? JSON.parse(stored) : {}
    return new KeptProvider(kept, (value) => this.vault.set(ref, JSON.stringify(value)).then(() => undefined), this.redirectUrl, server.id, this.clock)
  }

  #ref(userId: string, serverId: string) {
    return { scope: 'user' as const, ownerId: userId, name: `mcp-oauth/${serverId}` }
  }

  async #mark(userId: string, serverId: string, status: 'connected' | 'expired'): Promise<void> {
    await this.db
      .insertInto('mcp_connections')
      .values({ user_id: userId, server_id: serverId, status })
      .onConflict((oc) => oc.columns(['user_id', 'server_id']).doUpdateSet({ status, changed_at: sql`now()` }))
      .execute()
  }
}
