import type { Clock } from '../clock.ts'

/** Where a provider's OAuth device-authorization grant (RFC 8628) is served, and as which client. */
export interface DeviceSignInSettings {
  deviceAuthorizationUrl: string
  tokenUrl: string
  clientId: string
  scope?: string
}

/** Where the sign-in keeps its state: the plugin's own secrets in the vault, shared by every process. */
export interface SignInStore {
  read(key: string): Promise<string | undefined>
  write(key: string, value: string | null): Promise<void>
}

/** What the person signing in is told: where to go, and the code to enter there. */
export interface DeviceCode {
  user_code: string
  verification_uri: string
  verification_uri_complete: string | null
  /** Seconds the code works. */
  expires_in: number
  /** Seconds to wait between checks. */
  interval: number
}

/** Where the sign-in stands. */
export interface SignInStatus {
  state: 'signed_out' | 'pending' | 'signed_in'
  /** While pending: the code the person enters, and where. */
  user_code: string | null
  verification_uri: string | null
  /** While signed in: when the access token ends (it is refreshed before). */
  expires_at: string | null
  /** Why the last attempt ended without a sign-in (denied, expired), if it did. */
  problem: string | null
}

/** A refusal of the provider the caller can act on: a 409 (nothing pending) or 422 (denied, expired) at the API. */
export class SignInRefused extends Error {
  constructor(
    message: string,
    readonly kind: 'nothing_pending' | 'refused',
  ) {
    super(message)
  }
}

interface Pending {
  device_code: string
  user_code: string
  verification_uri: string
  expires_at: number
  interval: number
}

interface Tokens {
  access_token: string
  refresh_token: string | null
  /** Epoch ms; null when the provider gave no lifetime. */
  expires_at: number | null
}

const PENDING = 'device_pending'
const TOKENS = 'device_tokens'
const PROBLEM = 'device_problem'
/** A token this close to its end is refreshed before it is used. */
const REFRESH_MARGIN_MS = 60_000

/**
 * A runner's sign-in to its provider with the device-authorization grant: begin() asks for a code the person enters
 * at the provider, check() asks the token endpoint once whether they did (and keeps the tokens in the vault),
 * token() hands the access token to requests, refreshing it first when it is about to end. Every process reads the
 * same tokens, so a sign-in made through one serves all.
 */
export class DeviceSignIn {
  constructor(
    private readonly settings: DeviceSignInSettings,
    private readonly store: SignInStore,
    private readonly clock: Clock,
    private readonly fetcher: typeof fetch = fetch,
  ) {}

  async begin(): Promise<DeviceCode> {
    const answer = await this.#post(this.settings.deviceAuthorizationUrl, { client_id: this.settings.clientId, ...(this.settings.scope ? { scope: this.settings.scope } : {}) })
    if (!answer.ok) throw new SignInRefused(`The provider refused to start a sign-in: ${describe(answer.body)}`, 'refused')
    const body = answer.body as Record<string, unknown>
    const code = {
      device_code: text(body.device_code),
      user_code: text(body.user_code),
      verification_uri: text(body.verification_uri ?? body.verification_url),
      verification_uri_complete: typeof body.verification_uri_complete === 'string' ? body.verification_uri_complete : null,
      expires_in: Number(body.expires_in) > 0 ? Number(body.expires_in) : 600,
      interval: Number(body.interval) > 0 ? Number(body.interval) : 5,
    }
    if (!code.device_code || !code.user_code || !code.verification_uri) throw new SignInRefused('The provider’s answer lacks a device code, a user code or a verification address.', 'refused')
    const pending: Pending = { device_code: code.device_code, user_code: code.user_code, verification_uri: code.verification_uri, expires_at: this.clock.now() + code.expires_in * 1000, interval: code.interval }
    await this.store.write(PENDING, JSON.stringify(pending))
    await this.store.write(PROBLEM, null)
    const { device_code: _, ...shown } = code
    return shown
  }

  /** Asks the provider once whether the person has entered the code; the state it leaves. */
  async check(): Promise<SignInStatus> {
    const pending = await this.#read<Pending>(PENDING)
    if (!pending) throw new SignInRefused('No sign-in is waiting for its code: start one with auth/login.', 'nothing_pending')
    if (this.clock.now() >= pending.expires_at) return this.#endPending('The code expired before it was entered; start again.')
    const answer = await this.#post(this.settings.tokenUrl, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: pending.device_code, client_id: this.settings.clientId })
    if (answer.ok) {
      await this.#keep(answer.body as Record<string, unknown>)
      await this.store.write(PENDING, null)
      return this.status()
    }
    const error = (answer.body as { error?: unknown } | undefined)?.error
    // RFC 8628 §3.5: still waiting (slow_down: and ask less often), or ended.
    if (error === 'authorization_pending' || error === 'slow_down') return this.status()
    if (error === 'access_denied') return this.#endPending('The person declined the sign-in at the provider.')
    if (error === 'expired_token') return this.#endPending('The code expired before it was entered; start again.')
    throw new SignInRefused(`The provider’s token endpoint refused: ${describe(answer.body)}`, 'refused')
  }

  /** Forgets the tokens (and any sign-in waiting): requests go without them. */
  async signOut(): Promise<void> {
    await Promise.all([this.store.write(TOKENS, null), this.store.write(PENDING, null), this.store.write(PROBLEM, null)])
  }

  /** The access token for a request, refreshed first when it is about to end; undefined when not signed in. */
  async token(): Promise<string | undefined> {
    const tokens = await this.#read<Tokens>(TOKENS)
    if (!tokens) return undefined
    if (tokens.expires_at === null || tokens.expires_at - REFRESH_MARGIN_MS > this.clock.now()) return tokens.access_token
    if (!tokens.refresh_token) return undefined
    const answer = await this.#post(this.settings.tokenUrl, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: this.settings.clientId })
    if (answer.ok) return (await this.#keep(answer.body as Record<string, unknown>, tokens.refresh_token)).access_token
    // Another process may have refreshed it meanwhile (a rotated refresh token works once): theirs is kept.
    const now = await this.#read<Tokens>(TOKENS)
    if (now && now.access_token !== tokens.access_token) return now.access_token
    await this.store.write(TOKENS, null)
    await this.store.write(PROBLEM, `The provider would not refresh the sign-in (${describe(answer.body)}); sign in again.`)
    return undefined
  }

  async status(): Promise<SignInStatus> {
    const [tokens, pending, problem] = await Promise.all([this.#read<Tokens>(TOKENS), this.#read<Pending>(PENDING), this.store.read(PROBLEM)])
    const live = pending && pending.expires_at > this.clock.now() ? pending : undefined
    return {
      state: tokens ? 'signed_in' : live ? 'pending' : 'signed_out',
      user_code: live?.user_code ?? null,
      verification_uri: live?.verification_uri ?? null,
      expires_at: tokens?.expires_at ? new Date(tokens.expires_at).toISOString() : null,
      problem: problem ?? null,
    }
  }

  async #keep(body: Record<string, unknown>, previousRefresh: string | null = null): Promise<Tokens> {
    const access = text(body.access_token)
    if (!access) throw new SignInRefused('The provider’s token answer has no access_token.', 'refused')
    const lifetime = Number(body.expires_in)
    const tokens: Tokens = {
      access_token: access,
      // A provider that does not rotate refresh tokens sends none with a refresh: the one used stays good.
      refresh_token: typeof body.refresh_token === 'string' ? body.refresh_token : previousRefresh,
      expires_at: lifetime > 0 ? this.clock.now() + lifetime * 1000 : null,
    }
    await this.store.write(TOKENS, JSON.stringify(tokens))
    await this.store.write(PROBLEM, null)
    return tokens
  }

  /** A sign-in that waited ended without tokens; a sign-in made before stands. */
  async #endPending(problem: string): Promise<SignInStatus> {
    await this.store.write(PENDING, null)
    await this.store.write(PROBLEM, problem)
    return this.status()
  }

  async #read<T>(key: string): Promise<T | undefined> {
    const raw = await this.store.read(key)
    if (!raw) return undefined
    try {
      return JSON.parse(raw) as T
    } catch {
      return undefined
    }
  }

  async #post(url: string, form: Record<string, string>): Promise<{ ok: boolean; body: unknown }> {
    const response = await this.fetcher(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form),
      signal: AbortSignal.timeout(15_000),
    })
    const body = await response.json().catch(() => undefined)
    return { ok: response.ok, body }
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : ''
}

function describe(body: unknown): string {
  if (body && typeof body === 'object' && 'error' in body) {
    const { error, error_description } = body as { error: unknown; error_description?: unknown }
    return typeof error_description === 'string' ? `${String(error)} (${error_description})` : String(error)
  }
  return 'no OAuth error in the answer'
}
