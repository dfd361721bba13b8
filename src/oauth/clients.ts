import { z } from 'zod'
import type { Clock } from '../clock.ts'
import type { Db, Row } from '../db/schema.ts'
import { jsonb } from '../db/jsonb.ts'
import { hashSecret, newSecret, secretsEqual } from '../auth/secrets.ts'
import type { OutboundFetch } from '../net/outbound.ts'
import { OAuthError } from './errors.ts'
import { redirectUriProblem } from './redirects.ts'

export type OAuthClient = Row<'oauth_clients'>
export type AuthMethod = OAuthClient['token_endpoint_auth_method']

export const CLIENT_ID_PREFIX = 'sbc_'
export const CLIENT_SECRET_PREFIX = 'sbs_'
const AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'] as const

/** A metadata document is small; a bigger answer is refused before it is parsed (and before it fills memory). */
const DOCUMENT_MAX_BYTES = 16 * 1024
const DOCUMENT_TIMEOUT_MS = 5_000
/** How long a fetched metadata document is trusted before it is read again. */
const DOCUMENT_FRESH_MS = 60 * 60 * 1000

const redirectUris = z
  .array(z.string())
  .min(1, 'at least one redirect URI is required')
  .max(10, 'at most 10 redirect URIs')
  .superRefine((uris, ctx) => {
    uris.forEach((uri, i) => {
      const problem = redirectUriProblem(uri)
      if (problem) ctx.addIssue({ code: 'custom', path: [i], message: `${JSON.stringify(uri.slice(0, 100))} ${problem}` })
    })
  })
const webUrl = z.string().max(2000).refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), 'must be an http(s) URL')

/** Client metadata (RFC 7591 §2) as far as the platform uses it; other members are ignored. */
const Metadata = z.looseObject({
  redirect_uris: z.unknown().optional(),
  client_name: z.string().trim().max(200).optional(),
  client_uri: webUrl.optional(),
  grant_types: z.array(z.enum(['authorization_code', 'refresh_token'], 'only authorization_code and refresh_token are supported')).optional(),
  response_types: z.array(z.literal('code', 'only the code response type is supported')).optional(),
  token_endpoint_auth_method: z.enum(AUTH_METHODS, `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`).optional(),
})

/** What the registration endpoint answers (RFC 7591 §3.2.1). */
export interface Registered {
  client_id: string
  client_id_issued_at: number
  client_secret?: string
  client_secret_expires_at?: number
  client_name?: string
  client_uri?: string
  redirect_uris: string[]
  grant_types: string[]
  response_types: string[]
  token_endpoint_auth_method: AuthMethod
}

/** The first issue of a zod failure as one sentence naming the member. */
function firstProblem(error: z.ZodError): string {
  const issue = error.issues[0]!
  return issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message
}

/** Whether a client_id is a URL naming a Client ID Metadata Document: https, with a path, nothing hidden in it. */
export function isMetadataDocumentUrl(clientId: string): boolean {
  if (!URL.canParse(clientId)) return false
  const url = new URL(clientId)
  return url.protocol === 'https:' && url.pathname !== '/' && !url.username && !url.password && !url.hash && !/\/\.\.?(\/|$)/.test(url.pathname)
}

/**
 * The MCP hosts the platform knows as OAuth clients: those identified by a Client ID Metadata Document (fetched
 * under the outbound-address policy, kept an hour), those that registered themselves (RFC 7591) and those a
 * superadmin registered.
 */
export class OAuthClients {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly fetch: OutboundFetch,
  ) {}

  /** The client a request names; invalid_client when there is none, or its metadata document cannot be used. */
  async find(clientId: string | undefined): Promise<OAuthClient> {
    if (!clientId) throw new OAuthError('invalid_request', 'client_id is required.')
    const stored = await this.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst()
    if (!isMetadataDocumentUrl(clientId)) {
      if (!stored) throw new OAuthError('invalid_client', `There is no client ${JSON.stringify(clientId.slice(0, 100))}; register it first.`, 401)
      return stored
    }
    const fresh = stored?.fetched_at && this.clock.now() - new Date(stored.fetched_at).getTime() < DOCUMENT_FRESH_MS
    return fresh ? stored! : this.#readDocument(clientId)
  }

  /** The client a token or revocation request authenticates as (RFC 6749 §2.3.1); invalid_client (401) otherwise. */
  async authenticate(params: URLSearchParams, authorization: string | undefined): Promise<OAuthClient> {
    let clientId = params.get('client_id') ?? undefined
    let secret = params.get('client_secret') ?? undefined
    let method: AuthMethod = secret === undefined ? 'none' : 'client_secret_post'
    const basic = authorization && /^Basic\s+(\S+)$/i.exec(authorization)
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8')
      const colon = decoded.indexOf(':')
      if (colon < 0) throw new OAuthError('invalid_client', 'The Basic credentials are not client_id:client_secret.', 401)
      clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '))
      secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '))
      method = 'client_secret_basic'
    }
    if (!clientId) throw new OAuthError('invalid_client', 'The client is not identified: send client_id.', 401)
    const client = await this.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst()
    if (!client) throw new OAuthError('invalid_client', 'Unknown client.', 401)
    if (client.token_endpoint_auth_method === 'none') {
      if (method !== 'none') throw new OAuthError('invalid_client', 'This is a public client: it authenticates with no secret.', 401)
      return client
    }
    if (method === 'none' || !client.secret_hash || !secretsEqual(hashSecret(secret!), client.secret_hash)) {
      throw new OAuthError('invalid_client', 'The client secret is missing or wrong.', 401)
    }
    return client
  }

  /** Dynamic client registration (RFC 7591): a confidential client unless it asks for `none`. */
  async register(body: unknown): Promise<Registered> {
    const parsed = Metadata.safeParse(body)
    if (!parsed.success) throw new OAuthError('invalid_client_metadata', firstProblem(parsed.error))
    const uris = redirectUris.safeParse(parsed.data.redirect_uris)
    if (!uris.success) throw new OAuthError('invalid_redirect_uri', `redirect_uris: ${firstProblem(uris.error)}`)
    const metadata = parsed.data
    // RFC 7591 §2: without a method given, the client authenticates with a secret over Basic.
    const method = metadata.token_endpoint_auth_method ?? 'client_secret_basic'
    const clientId = newSecret(CLIENT_ID_PREFIX).slice(0, CLIENT_ID_PREFIX.length + 22)
    const secret = method === 'none' ? undefined : newSecret(CLIENT_SECRET_PREFIX)
    const now = this.clock.now()
    await this.db
      .insertInto('oauth_clients')
      .values({
        id: Bun.randomUUIDv7(),
        client_id: clientId,
        kind: 'dynamic',
        client_name: metadata.client_name ?? '',
        client_uri: metadata.client_uri ?? null,
        redirect_uris: jsonb(uris.data),
        token_endpoint_auth_method: method,
        secret_hash: secret === undefined ? null : hashSecret(secret),
        fetched_at: null,
        created_at: new Date(now),
        updated_at: new Date(now),
      })
      .execute()
    return {
      client_id: clientId,
      client_id_issued_at: Math.floor(now / 1000),
      ...(secret === undefined ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
      ...(metadata.client_name ? { client_name: metadata.client_name } : {}),
      ...(metadata.client_uri ? { client_uri: metadata.client_uri } : {}),
      redirect_uris: uris.data,
      grant_types: metadata.grant_types ?? ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: method,
    }
  }

  /** Fetches and checks a Client ID Metadata Document, and keeps it. */
  async #readDocument(clientId: string): Promise<OAuthClient> {
    const refuse = (why: string) => new OAuthError('invalid_client', `The client metadata document at ${clientId} ${why}.`, 400)
    let response: Response
    try {
      response = await this.fetch(clientId, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(DOCUMENT_TIMEOUT_MS) })
    } catch (error) {
      throw refuse(`could not be fetched (${(error as Error).message})`)
    }
    if (response.status !== 200) throw refuse(`answered ${response.status} instead of 200`)
    if (!/\bjson\b/i.test(response.headers.get('content-type') ?? '')) throw refuse('is not JSON')
    const text = await readCapped(response, DOCUMENT_MAX_BYTES)
    if (text === undefined) throw refuse(`is larger than ${DOCUMENT_MAX_BYTES} bytes`)
    let document: unknown
    try {
      document = JSON.parse(text)
    } catch {
      throw refuse('is not valid JSON')
    }
    const parsed = Metadata.extend({ client_id: z.string() }).safeParse(document)
    if (!parsed.success) throw refuse(`is not valid: ${firstProblem(parsed.error)}`)
    // The document speaks for the URL it was fetched from, and for nothing else.
    if (parsed.data.client_id !== clientId) throw refuse('names a different client_id')
    const method = parsed.data.token_endpoint_auth_method ?? 'none'
    if (method !== 'none') throw refuse('asks for a client secret, which a metadata document cannot hold; use token_endpoint_auth_method "none"')
    const uris = redirectUris.safeParse(parsed.data.redirect_uris)
    if (!uris.success) throw refuse(`has unusable redirect_uris: ${firstProblem(uris.error)}`)
    const now = new Date(this.clock.now())
    const values = {
      client_name: parsed.data.client_name ?? '',
      client_uri: parsed.data.client_uri ?? null,
      redirect_uris: jsonb(uris.data),
      token_endpoint_auth_method: 'none' as const,
      fetched_at: now,
      updated_at: now,
    }
    return this.db
      .insertInto('oauth_clients')
      .values({ id: Bun.randomUUIDv7(), client_id: clientId, kind: 'metadata_document', secret_hash: null, created_at: now, ...values })
      .onConflict((oc) => oc.column('client_id').doUpdateSet(values))
      .returningAll()
      .executeTakeFirstOrThrow()
  }
}

/** The body as text, or undefined once it passes `max` bytes (reading stops there). */
async function readCapped(response: Response, max: number): Promise<string | undefined> {
  const reader = response.body?.getReader()
  if (!reader) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      return undefined
    }
    chunks.push(value)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}
