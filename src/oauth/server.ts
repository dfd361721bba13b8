import { audit } from '../audit/trail.ts'
import { sql } from 'kysely'
import type { Actor } from '../auth/actor.ts'
import { hashSecret, newSecret } from '../auth/secrets.ts'
import type { Clock } from '../clock.ts'
import type { Db, Executor } from '../db/schema.ts'
import { execute } from '../db/templates.ts'
import type { Writes } from '../events/writes.ts'
import type { OAuthClient, OAuthClients } from './clients.ts'
import { OAuthError } from './errors.ts'
import { redirectUriMatches } from './redirects.ts'
import { parseResource, resourceUrl, scopesOf, type Target } from './resources.ts'

export const ACCESS_TOKEN_PREFIX = 'sbo_'
export const REFRESH_TOKEN_PREFIX = 'sbr_'
const CODE_PREFIX = 'sbac_'
/** An authorization code is exchanged within seconds of the redirect; a minute is generous (RFC 6749 §4.1.2). */
const CODE_TTL_MS = 60_000
const SWEEP_EVERY_MS = 60_000
/** RFC 7636 §4.1: 43 to 128 characters of the unreserved set. */
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/

/** The parameters of an authorization request (RFC 6749 §4.1.1, RFC 7636, RFC 8707). */
export interface AuthorizationRequest {
  response_type?: string
  client_id?: string
  redirect_uri?: string
  code_challenge?: string
  code_challenge_method?: string
  resource?: string
  scope?: string
  state?: string
}

/** A request the person may approve, as the consent page shows it. */
export interface ConsentRequest {
  client: OAuthClient
  redirectUri: string
  target: Target
  resource: string
  scopes: string[]
  /** The person approved this client before: its redirect URI has their trust. */
  approvedBefore: boolean
}

export type Checked = { kind: 'consent'; consent: ConsentRequest } | { kind: 'redirect'; to: string }

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token: string
  scope: string
}

/** Whether the person may use the MCP server a resource names: a grant for one they cannot reach is refused. */
export type ResourceCheck = (actor: Actor, target: Target) => Promise<boolean>

/**
 * The platform's OAuth 2.1 authorization server for MCP hosts: authorization codes bound to PKCE (S256 only), the
 * redirect URI and a resource; short-lived opaque access tokens and refresh tokens that rotate on every use, a spent
 * one presented again revoking the whole grant; revocation (RFC 7009). Only hashes are stored.
 */
export class AuthorizationServer {
  #swept = 0

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    readonly clients: OAuthClients,
    private readonly settings: { issuer: string; accessTokenSeconds: number; refreshTokenSeconds: number },
    private readonly mayUse: ResourceCheck,
    private readonly writes: Writes,
  ) {}

  get issuer(): string {
    return this.settings.issuer
  }

  /**
   * Checks an authorization request for `actor`. A bad client or redirect URI throws (the browser must not be sent
   * to an unverified address, RFC 6749 §4.1.2.1); any other problem goes back to the client's redirect URI when the
   * client is trusted, and throws otherwise.
   */
  async check(request: AuthorizationRequest, actor: Actor): Promise<Checked> {
    const client = await this.clients.find(request.client_id)
    const registered = client.redirect_uris
    const redirectUri = request.redirect_uri ?? (registered.length === 1 ? registered[0]! : undefined)
    if (!redirectUri) throw new OAuthError('invalid_request', 'redirect_uri is required: the client registered more than one.')
    if (!redirectUriMatches(registered, redirectUri)) throw new OAuthError('invalid_request', 'redirect_uri is not one the client registered.')
    // Anyone may register a client with any redirect URI, so sending the browser there with an error would make
    // this origin an open redirector (RFC 9700 §4.11.2). Errors go back only to a client the operator configured or
    // the person approved before; otherwise they are shown here.
    const approvedBefore = await this.#approvedBefore(client, actor)
    const trusted = client.kind === 'preregistered' || approvedBefore
    const fail = (error: string, description: string): Checked => {
      if (!trusted) throw new OAuthError(error, description)
      return { kind: 'redirect', to: this.#redirect(redirectUri, { error, error_description: description, state: request.state }) }
    }

    if (request.response_type !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.')
    if (!request.code_challenge) return fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.')
    if (request.code_challenge_method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256.')
    if (!PKCE_VALUE.test(request.code_challenge)) return fail('invalid_request', 'code_challenge is not a valid S256 challenge.')
    if (!request.resource) return fail('invalid_target', 'resource is required (RFC 8707): the URL of the MCP server, e.g. ' + resourceUrl(this.issuer, { kind: 'mcp', server: '' }))
    const target = parseResource(this.issuer, request.resource)
    if (!target) return fail('invalid_target', `${request.resource} is not a resource of this platform.`)
    if (!(await this.mayUse(actor, target))) return fail('invalid_target', `You may not use ${request.resource}.`)
    const allowed = scopesOf(target)
    const scopes = request.scope ? [...new Set(request.scope.split(' ').filter(Boolean))] : [allowed[0]!]
    const unknown = scopes.filter((s) => !(allowed as string[]).includes(s))
    if (unknown.length > 0 || scopes.length === 0) return fail('invalid_scope', `${request.resource} may be granted only ${allowed.join(', ')}; asked: ${unknown.join(', ')}.`)
    return { kind: 'consent', consent: { client, redirectUri, target, resource: resourceUrl(this.issuer, target), scopes, approvedBefore } }
  }

  /** Whether the person has a grant for this client already (in any company, for any resource). */
  async #approvedBefore(client: OAuthClient, actor: Actor): Promise<boolean> {
    const grant = await this.db.selectFrom('oauth_grants').select('id').where('client_ref', '=', client.id).where('user_id', '=', actor.userId).limit(1).executeTakeFirst()
    return grant !== undefined
  }

  /** The person's answer: a code on approval, access_denied otherwise; either way where to send the browser. */
  async decide(request: AuthorizationRequest, actor: Actor, approve: boolean): Promise<string> {
    const checked = await this.check(request, actor)
    if (checked.kind === 'redirect') return checked.to
    const { client, redirectUri, resource, scopes } = checked.consent
    if (!approve) return this.#redirect(redirectUri, { error: 'access_denied', error_description: 'The person declined.', state: request.state })
    this.#sweep()
    const code = newSecret(CODE_PREFIX)
    const scope = scopes.join(' ')
    await this.db.transaction().execute(async (tx) => {
      const grantId = await this.#grant(tx, client, actor, resource, scope)
      await audit(tx, actor.origin, {
        action: 'oauth_grant',
        model: 'OAuthGrant',
        recordId: grantId,
        companyId: actor.companyId,
        actorId: actor.userId,
        changes: { client: client.client_name || client.client_id, resource, scope },
      })
      await tx
        .insertInto('oauth_codes')
        .values({ code_hash: hashSecret(code), grant_id: grantId, redirect_uri: redirectUri, code_challenge: request.code_challenge!, expires_at: new Date(this.clock.now() + CODE_TTL_MS), used_at: null })
        .execute()
    })
    return this.#redirect(redirectUri, { code, state: request.state })
  }

  /** grant_type=authorization_code: the code, once, with the verifier and redirect URI it was issued for. */
  async exchangeCode(client: OAuthClient, params: URLSearchParams): Promise<TokenResponse> {
    const code = params.get('code')
    const verifier = params.get('code_verifier')
    if (!code) throw new OAuthError('invalid_request', 'code is required.')
    if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE).')
    const hash = hashSecret(code)
    const now = new Date(this.clock.now())
    const spent = await this.db.updateTable('oauth_codes').set({ used_at: now }).where('code_hash', '=', hash).where('used_at', 'is', null).returningAll().executeTakeFirst()
    if (!spent) {
      const reused = await this.db.selectFrom('oauth_codes').select('grant_id').where('code_hash', '=', hash).executeTakeFirst()
      if (reused) {
        // A code presented twice may have been stolen: everything issued under its grant goes (RFC 6749 §4.1.2).
        await this.#revokeGrant(reused.grant_id, 'a used authorization code was presented again')
        throw new OAuthError('invalid_grant', 'The code was used already; the grant it came from is revoked.')
      }
      throw new OAuthError('invalid_grant', 'Unknown code.')
    }
    const grant = await this.#grantOf(spent.grant_id)
    if (!grant || grant.client_ref !== client.id) throw new OAuthError('invalid_grant', 'The code was not issued to this client.')
    if (new Date(spent.expires_at).getTime() <= now.getTime()) throw new OAuthError('invalid_grant', 'The code has expired.')
    if (params.get('redirect_uri') !== spent.redirect_uri) throw new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request’s.')
    if (!PKCE_VALUE.test(verifier) || s256(verifier) !== spent.code_challenge) throw new OAuthError('invalid_grant', 'The code_verifier does not match the code_challenge.')
    this.#sameResource(params, grant.resource)
    return this.#issue(this.db, grant.id, grant.scope)
  }

  /** grant_type=refresh_token: a new pair for an unspent refresh token; a spent one revokes the grant. */
  async refresh(client: OAuthClient, params: URLSearchParams): Promise<TokenResponse> {
    const token = params.get('refresh_token')
    if (!token) throw new OAuthError('invalid_request', 'refresh_token is required.')
    const hash = hashSecret(token)
    const now = new Date(this.clock.now())
    const outcome = await this.db.transaction().execute(async (tx): Promise<TokenResponse | { reusedBy: string }> => {
      const spent = await tx
        .updateTable('oauth_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', hash)
        .where('kind', '=', 'refresh')
        .where('used_at', 'is', null)
        .returningAll()
        .executeTakeFirst()
      if (!spent) {
        const reused = await tx.selectFrom('oauth_tokens').select('grant_id').where('token_hash', '=', hash).where('kind', '=', 'refresh').executeTakeFirst()
        if (reused) return { reusedBy: reused.grant_id }
        throw new OAuthError('invalid_grant', 'Unknown refresh token.')
      }
      const grant = await this.#grantOf(spent.grant_id, tx)
      if (!grant || grant.client_ref !== client.id) throw new OAuthError('invalid_grant', 'The refresh token was not issued to this client.')
      if (new Date(spent.expires_at).getTime() <= now.getTime()) throw new OAuthError('invalid_grant', 'The refresh token has expired.')
      this.#sameResource(params, grant.resource)
      const granted = grant.scope.split(' ')
      const asked = params.get('scope')?.split(' ').filter(Boolean)
      if (asked && asked.some((s) => !granted.includes(s))) throw new OAuthError('invalid_scope', `The grant covers only ${grant.scope}.`)
      return this.#issue(tx, grant.id, asked?.length ? asked.join(' ') : grant.scope)
    })
    if ('access_token' in outcome) return outcome
    // A spent refresh token presented again means two parties hold it: one of them is not the client. Everything
    // issued under the grant goes, and the person approves the host again.
    await this.#revokeGrant(outcome.reusedBy, 'a used refresh token was presented again')
    throw new OAuthError('invalid_grant', 'The refresh token was used already; the grant is revoked.')
  }

  /**
   * Revocation (RFC 7009): an access token ends alone; a refresh token ends its grant and every token of it. An
   * unknown token, or another client's, is answered the same (200), saying nothing about it.
   */
  async revoke(client: OAuthClient, token: string): Promise<void> {
    const row = await this.db
      .selectFrom('oauth_tokens as t')
      .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
      .select(['t.token_hash', 't.kind', 't.grant_id', 'g.client_ref', 'g.user_id'])
      .where('t.token_hash', '=', hashSecret(token))
      .executeTakeFirst()
    if (!row || row.client_ref !== client.id) return
    if (row.kind === 'refresh') return this.#revokeGrant(row.grant_id, 'the client revoked its refresh token')
    await this.db.deleteFrom('oauth_tokens').where('token_hash', '=', row.token_hash).execute()
    await this.writes.announced({ type: 'credentials', user_id: row.user_id })
  }

  /** One grant per client, person, company and resource: approving again widens its scope, keeping its tokens. */
  async #grant(tx: Executor, client: OAuthClient, actor: Actor, resource: string, scope: string): Promise<string> {
    const existing = await tx
      .selectFrom('oauth_grants')
      .select(['id', 'scope'])
      .where('client_ref', '=', client.id)
      .where('user_id', '=', actor.userId)
      .where((eb) => (actor.companyId === null ? eb('company_id', 'is', null) : eb('company_id', '=', actor.companyId)))
      .where('resource', '=', resource)
      .forUpdate()
      .executeTakeFirst()
    if (existing) {
      const merged = [...new Set([...existing.scope.split(' '), ...scope.split(' ')])].join(' ')
      await tx.updateTable('oauth_grants').set({ scope: merged, updated_at: sql`now()`, version: sql`version + 1` }).where('id', '=', existing.id).execute()
      return existing.id
    }
    const id = Bun.randomUUIDv7()
    await tx.insertInto('oauth_grants').values({ id, client_ref: client.id, user_id: actor.userId, company_id: actor.companyId, resource, scope, last_used_at: null }).execute()
    return id
  }

  async #grantOf(id: string, db: Executor = this.db) {
    return db.selectFrom('oauth_grants').select(['id', 'client_ref', 'resource', 'scope']).where('id', '=', id).executeTakeFirst()
  }

  /** Ends a grant and all it issued, in every process at once (access tokens are cached briefly once seen). */
  async #revokeGrant(id: string, reason: string): Promise<void> {
    const ended = await this.db.transaction().execute(async (tx) => {
      const ended = await tx.deleteFrom('oauth_grants').where('id', '=', id).returning(['user_id', 'company_id', 'resource', 'scope']).executeTakeFirst()
      if (ended) await audit(tx, undefined, { action: 'oauth_revoke', model: 'OAuthGrant', recordId: id, companyId: ended.company_id, actorId: null, changes: { reason, resource: ended.resource, scope: ended.scope } })
      return ended
    })
    if (ended) await this.writes.announced({ type: 'credentials', user_id: ended.user_id })
  }

  /** A token request naming a resource must name the one granted (RFC 8707 §2.2). */
  #sameResource(params: URLSearchParams, granted: string): void {
    const asked = params.get('resource')
    if (asked === null) return
    const target = parseResource(this.issuer, asked)
    if (!target || resourceUrl(this.issuer, target) !== granted) throw new OAuthError('invalid_target', `The grant is for ${granted}, not ${asked}.`)
  }

  async #issue(db: Executor, grantId: string, scope: string): Promise<TokenResponse> {
    const access = newSecret(ACCESS_TOKEN_PREFIX)
    const refresh = newSecret(REFRESH_TOKEN_PREFIX)
    const now = this.clock.now()
    const { accessTokenSeconds, refreshTokenSeconds } = this.settings
    await db
      .insertInto('oauth_tokens')
      .values([
        { token_hash: hashSecret(access), grant_id: grantId, kind: 'access', expires_at: new Date(now + accessTokenSeconds * 1000), used_at: null },
        { token_hash: hashSecret(refresh), grant_id: grantId, kind: 'refresh', expires_at: new Date(now + refreshTokenSeconds * 1000), used_at: null },
      ])
      .execute()
    return { access_token: access, token_type: 'Bearer', expires_in: accessTokenSeconds, refresh_token: refresh, scope }
  }

  #redirect(uri: string, params: Record<string, string | undefined>): string {
    const url = new URL(uri)
    for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
    // RFC 9207: the client can tell which authorization server answered (a mix-up attack sends it elsewhere).
    url.searchParams.set('iss', this.issuer)
    return url.toString()
  }

  /** Deletes codes and tokens long dead, at most once a minute per process, off the request's path. */
  #sweep(): void {
    const now = this.clock.now()
    if (now - this.#swept < SWEEP_EVERY_MS) return
    this.#swept = now
    const dayAgo = new Date(now - 86_400_000)
    void execute(this.db, this.db.deleteFrom('oauth_codes').where('expires_at', '<', dayAgo)).catch(() => {})
    void execute(this.db, this.db.deleteFrom('oauth_tokens').where('expires_at', '<', dayAgo)).catch(() => {})
  }
}

function s256(verifier: string): string {
  return new Bun.CryptoHasher('sha256').update(verifier).digest('base64url')
}
