import type * as jose from 'jose'
import type * as oidc from 'openid-client'
import type { Clock } from '../../clock.ts'
import type { Transaction } from 'kysely'
import type { Database, Db, Row } from '../../db/schema.ts'
import type { Logger } from '../../logger.ts'
import type { OutboundPolicy } from '../../net/outbound.ts'
import type { Vault } from '../../vault/vault.ts'
import { accountFor, SignInRefused, type IdentityClaims } from './accounts.ts'
import { FLOW_TTL_MS, openFlow, sealFlow, type Flow } from './flow.ts'

/** A provider's discovery and keys are asked again after this long (a rotated key is fetched on demand anyway). */
const DISCOVERY_TTL_MS = 60 * 60_000

/** Why a sign-in through a provider failed, as the sign-in page says it (fixed sentences, nothing reflected). */
export type SignInFailure = 'sso_state' | 'sso_verify' | 'sso_provider' | 'sso_denied' | `sso_${SignInRefused['reason']}`

export class SignInFailed extends Error {
  /** The company of the provider, once it is known: the failure is audited there. */
  companyId: string | undefined

  constructor(
    readonly failure: SignInFailure,
    /** For the log and the audit trail: what exactly went wrong. */
    readonly detail: string,
  ) {
    super(detail)
    this.name = 'SignInFailed'
  }
}

type Provider = Row<'identity_providers'>

let loaded: Promise<{ oidc: typeof import('openid-client'); jose: typeof import('jose') }> | undefined

/**
 * openid-client and jose, loaded when single sign-on is first used: most deployments have no identity provider, and
 * importing them took about 18 ms of every start.
 */
const libraries = () => (loaded ??= Promise.all([import('openid-client'), import('jose')]).then(([oidc, jose]) => ({ oidc, jose })))

/**
 * Sign-in through the identity providers companies configure: OpenID Connect's authorization code flow with PKCE,
 * through openid-client (discovery, the token request, and the ID token's checks: signature by the provider's
 * JWKS, issuer, audience, nonce, expiry). Every request to a provider goes through the outbound-address policy, as
 * the issuer is a tenant's setting.
 */
export class SingleSignOn {
  readonly #configs = new Map<string, { config: oidc.Configuration; keys: ReturnType<typeof jose.createRemoteJWKSet>; at: number }>()

  constructor(
    private readonly deps: { db: Db; vault: Vault; outbound: OutboundPolicy; clock: Clock; log: Logger; adminBaseUrl: string; allowHttp: boolean; flowKey: Promise<CryptoKey> },
  ) {}

  /**
   * The providers a sign-in page offers: a company's own (its page, by the company's slug), or those a superadmin
   * listed on the shared page.
   */
  async offered(companySlug?: string): Promise<Array<{ slug: string; name: string; company: string }>> {
    return this.deps.db
      .selectFrom('identity_providers as p')
      .innerJoin('companies as c', 'c.id', 'p.company_id')
      .select(['p.slug', 'p.name', 'c.name as company'])
      .where('p.enabled', '=', true)
      .$if(companySlug !== undefined, (q) => q.where('c.slug', '=', companySlug!))
      .$if(companySlug === undefined, (q) => q.where('p.listed', '=', true))
      .orderBy('p.name')
      .orderBy('p.id')
      .limit(50)
      .execute()
  }

  async #provider(slug: string): Promise<Provider> {
    const provider = await this.deps.db.selectFrom('identity_providers').selectAll().where('slug', '=', slug).executeTakeFirst()
    if (!provider?.enabled) throw new SignInFailed('sso_provider', `no enabled identity provider ${JSON.stringify(slug.slice(0, 64))}`)
    return provider
  }

  redirectUri(slug: string): string {
    return `${this.deps.adminBaseUrl}/auth/sso/${slug}/callback`
  }

  /** The provider's configuration: discovered (and cached) with the client secret the vault holds now. */
  async #config(provider: Provider): Promise<{ config: oidc.Configuration; keys: ReturnType<typeof jose.createRemoteJWKSet> }> {
    const secret = provider.client_secret_secret ? await this.deps.vault.get({ scope: 'company', ownerId: provider.company_id, name: provider.client_secret_secret }) : undefined
    if (provider.client_secret_secret && !secret) throw new SignInFailed('sso_provider', `the vault holds no secret ${provider.client_secret_secret} for the client secret`)
    const key = `${provider.id}|${provider.version}|${secret ?? ''}`
    const cached = this.#configs.get(key)
    if (cached && this.deps.clock.now() - cached.at < DISCOVERY_TTL_MS) return cached
    const issuer = new URL(provider.issuer)
    if (issuer.protocol === 'http:' && !this.deps.allowHttp) throw new SignInFailed('sso_provider', `the issuer ${provider.issuer} is not https (SWITCHBOARD_OIDC_ALLOW_HTTP allows it for development)`)
    try {
      const { oidc, jose } = await libraries()
      const options: oidc.DiscoveryRequestOptions = {
        [oidc.customFetch]: (url, init) => this.deps.outbound.fetch(url, init as RequestInit),
        ...(issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
      }
      // client_secret_basic is what OpenID Connect assumes when a client says nothing else.
      const config = await oidc.discovery(issuer, provider.client_id, undefined, secret ? oidc.ClientSecretBasic(secret) : oidc.None(), options)
      const jwksUri = config.serverMetadata().jwks_uri
      if (!jwksUri) throw new Error('the provider publishes no jwks_uri, so its ID tokens cannot be verified')
      // The provider's keys, fetched through the same policy and again when a token names a key not seen yet.
      const keys = jose.createRemoteJWKSet(new URL(jwksUri), { [jose.customFetch]: (url, init) => this.deps.outbound.fetch(url, init as RequestInit) })
      const discovered = { config, keys, at: this.deps.clock.now() }
      this.#configs.set(key, discovered)
      return discovered
    } catch (error) {
      throw new SignInFailed('sso_provider', `discovery at ${provider.issuer} failed: ${(error as Error).message}`)
    }
  }

  /** Where to send the browser to sign in, and the sealed flow for its cookie. */
  async start(slug: string, redirect: string): Promise<{ url: URL; cookie: string }> {
    const provider = await this.#provider(slug)
    const { config } = await this.#config(provider)
    const { oidc } = await libraries()
    const flow: Flow = {
      provider: provider.id,
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier: oidc.randomPKCECodeVerifier(),
      redirect,
      expires: this.deps.clock.now() + FLOW_TTL_MS,
    }
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri(provider.slug),
      scope: provider.scopes,
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
    })
    return { url, cookie: await sealFlow(await this.deps.flowKey, flow) }
  }

  /**
   * Where to send a browser signing out of a session begun at a provider, so the provider's session ends too
   * (RP-initiated logout); undefined when the provider is gone or has no end_session_endpoint.
   */
  async endSessionUrl(providerId: string, idToken: string, after: string): Promise<URL | undefined> {
    const provider = await this.deps.db.selectFrom('identity_providers').selectAll().where('id', '=', providerId).executeTakeFirst()
    if (!provider?.enabled) return undefined
    try {
      const { config } = await this.#config(provider)
      if (!config.serverMetadata().end_session_endpoint) return undefined
      const { oidc } = await libraries()
      return oidc.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: after })
    } catch (error) {
      this.deps.log.warn('the identity provider’s session could not be ended', { provider: providerId, error: String(error) })
      return undefined
    }
  }

  /**
   * The callback: the flow of this browser (its cookie), the provider's answer checked against it, the ID token
   * verified, and the account it is, in one transaction with `then` (the session and the audit event).
   */
  async finish<T>(slug: string, callback: URL, sealed: string | undefined, then: (account: { userId: string; created: boolean; idToken: string }, provider: Provider, tx: Transaction<Database>) => Promise<T>): Promise<{ result: T; redirect: string; provider: Provider }> {
    const provider = await this.#provider(slug)
    try {
      const flow = await openFlow(await this.deps.flowKey, sealed, this.deps.clock.now())
      if (!flow || flow.provider !== provider.id) throw new SignInFailed('sso_state', 'no sign-in of this browser was under way with this provider (absent, expired or forged flow cookie)')
      if (callback.searchParams.get('state') !== flow.state) throw new SignInFailed('sso_state', 'the state the provider sent back is not the one this browser started with')
      if (callback.searchParams.get('error') === 'access_denied') throw new SignInFailed('sso_denied', 'the person declined at the provider')
      const { config, keys } = await this.#config(provider)
      const { oidc, jose } = await libraries()
      // The callback as the provider was told to call it: the configured public address, not whatever Host came in.
      const expected = new URL(this.redirectUri(provider.slug))
      expected.search = callback.search
      let claims: IdentityClaims
      let idToken: string
      try {
        const tokens = await oidc.authorizationCodeGrant(config, expected, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true })
        // openid-client checks issuer, audience, nonce and expiry, but may trust the signature of a token it got over
        // TLS straight from the token endpoint; the signature is checked here too, against the provider's JWKS.
        idToken = tokens.id_token!
        await jose.jwtVerify(idToken, keys, { issuer: config.serverMetadata().issuer, audience: provider.client_id })
        claims = tokens.claims() as unknown as IdentityClaims
      } catch (error) {
        throw new SignInFailed('sso_verify', `the provider's answer was refused: ${(error as Error).message}`)
      }
      try {
        const result = await this.deps.db.transaction().execute(async (tx) => {
          const { userId, created } = await accountFor(tx, provider, claims, new Date(this.deps.clock.now()))
          return then({ userId, created, idToken }, provider, tx)
        })
        return { result, redirect: flow.redirect, provider }
      } catch (error) {
        if (error instanceof SignInRefused) throw new SignInFailed(`sso_${error.reason}`, error.message)
        throw error
      }
    } catch (error) {
      if (error instanceof SignInFailed) error.companyId ??= provider.company_id
      throw error
    }
  }
}
