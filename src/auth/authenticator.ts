import { sql } from 'kysely'
import { ApiError } from '../errors.ts'
import { TtlCache } from '../cache.ts'
import type { Clock } from '../clock.ts'
import type { CompanyRole, Db } from '../db/schema.ts'
import type { EventBus } from '../events/bus.ts'
import { flushOn } from '../events/caches.ts'
import type { Actor } from './actor.ts'
import { ACCESS_TOKEN_PREFIX } from '../oauth/server.ts'
import { hashSecret } from './secrets.ts'
import { isLive, type SessionPolicy } from './sessions.ts'

export const SESSION_COOKIE = 'switchboard_session_token'
export const TOKEN_PREFIX = 'sb_'

export interface Credentials {
  kind: 'session' | 'token'
  secret: string
}

/** A credential resolved to an actor, kept briefly so a request does not cost an extra query. */
interface Entry {
  actor: Actor
  credentialId: string
  /** Which table the credential is in: an OAuth access token's use is noted on its grant. */
  table: 'sessions' | 'api_tokens' | 'oauth_grants'
  expiresAt: number
  lastSeen: number
  lastWritten: number
}

// Sign-outs, revocations and role changes flush the cache in every process as they happen (event `cache.flush`);
// this bound is the backstop for a change made behind the API's back, or an event a silently dead connection lost.
const CACHE_MS = 10_000
const CACHE_MAX = 10_000
// Sliding expiry is recorded at most this often per credential.
const TOUCH_MS = 60_000

export function readCredentials(headers: Headers): Credentials | undefined {
  const authorization = headers.get('authorization')
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization)
    return match ? { kind: 'token', secret: match[1]! } : { kind: 'token', secret: '' }
  }
  const cookie = headers.get('cookie')
  if (!cookie) return undefined
  for (const part of cookie.split(';')) {
    const eq = part.indexOf('=')
    if (part.slice(0, eq).trim() === SESSION_COOKIE) return { kind: 'session', secret: part.slice(eq + 1).trim() }
  }
  return undefined
}

export class Authenticator {
  readonly #cache: TtlCache<string, Entry | undefined>

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly policy: SessionPolicy,
    events: EventBus,
  ) {
    this.#cache = new TtlCache(clock, CACHE_MS, CACHE_MAX)
    flushOn(events, 'identities', () => this.#cache.clear())
  }

  /** The actor for a credential, or undefined when it is unknown, revoked or expired. */
  async actorFor(credentials: Credentials, companyId?: string): Promise<Actor | undefined> {
    if (!credentials.secret) return undefined
    const now = this.clock.now()
    // Keyed by the secret itself, which this process holds for the request anyway: hashing is for the store,
    // and is paid only on a miss.
    // An OAuth token works in the company it was granted in, whatever the request names.
    if (credentials.secret.startsWith(ACCESS_TOKEN_PREFIX)) companyId = undefined
    const key = `${credentials.kind}:${credentials.secret}:${companyId ?? ''}`
    const entry = await this.#cache.get(key, () => this.#load(credentials, hashSecret(credentials.secret), companyId, now))
    // Only the living are kept: guessed secrets cannot fill the cache, and one that died is read afresh next time.
    if (!entry || !this.#live(credentials, entry, now)) {
      this.#cache.delete(key)
      return undefined
    }
    entry.lastSeen = now
    if (now - entry.lastWritten >= TOUCH_MS) {
      entry.lastWritten = now
      await this.#touch(entry, now)
    }
    return entry.actor
  }

  #live(credentials: Credentials, entry: Entry, now: number): boolean {
    if (credentials.kind === 'token') return now < entry.expiresAt
    return isLive({ last_seen_at: new Date(entry.lastSeen), expires_at: new Date(entry.expiresAt) }, this.policy, now)
  }

  async #load(credentials: Credentials, hash: string, companyId: string | undefined, now: number): Promise<Entry | undefined> {
    if (credentials.secret.startsWith(ACCESS_TOKEN_PREFIX)) return this.#loadGrant(hash)
    const credential =
      credentials.kind === 'session'
        ? await this.db
            .selectFrom('sessions')
            .select(['id', 'user_id', 'expires_at', 'last_seen_at'])
            .where('token_hash', '=', hash)
            .executeTakeFirst()
        : await this.db
            .selectFrom('api_tokens')
            .select(['id', 'user_id', 'expires_at', sql<Date | null>`last_used_at`.as('last_seen_at')])
            .where('token_hash', '=', hash)
            .executeTakeFirst()
    if (!credential) return undefined
    const actor = await this.#actor(credential.user_id, companyId)
    const lastSeen = credential.last_seen_at ? new Date(credential.last_seen_at).getTime() : 0
    return {
      actor,
      credentialId: credential.id,
      table: credentials.kind === 'session' ? 'sessions' : 'api_tokens',
      expiresAt: credential.expires_at ? new Date(credential.expires_at).getTime() : Number.POSITIVE_INFINITY,
      lastSeen: credentials.kind === 'session' ? lastSeen : now,
      lastWritten: credentials.kind === 'session' ? lastSeen : lastSeen || 0,
    }
  }

  /** An OAuth access token: its person in the company of the grant, limited to what was granted. */
  async #loadGrant(hash: string): Promise<Entry | undefined> {
    const token = await this.db
      .selectFrom('oauth_tokens as t')
      .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
      .select(['g.id', 'g.user_id', 'g.company_id', 'g.resource', 'g.scope', 'g.last_used_at', 't.expires_at'])
      .where('t.token_hash', '=', hash)
      .where('t.kind', '=', 'access')
      .executeTakeFirst()
    if (!token) return undefined
    // Someone who left the company the grant was made in can no longer act there.
    const actor = await this.#actor(token.user_id, token.company_id ?? undefined).catch(() => undefined)
    if (!actor || actor.companyId !== token.company_id) return undefined
    const lastWritten = token.last_used_at ? new Date(token.last_used_at).getTime() : 0
    return {
      actor: { ...actor, grant: { resource: token.resource, scopes: token.scope.split(' ') } },
      credentialId: token.id,
      table: 'oauth_grants',
      expiresAt: new Date(token.expires_at).getTime(),
      lastSeen: lastWritten,
      lastWritten,
    }
  }

  /**
   * Who a user is in a company, for work the platform does on their behalf with no request to carry it (a plan's
   * continuation turns). Refused (403) when they are no longer a member there.
   */
  memberActor(userId: string, companyId: string): Promise<Actor> {
    return this.#actor(userId, companyId)
  }

  /** The user with their membership in the asked company, or in their first company when none is asked. */
  async #actor(userId: string, companyId: string | undefined): Promise<Actor> {
    const row = await this.db
      .selectFrom('users as u')
      .leftJoinLateral(
        (eb) =>
          eb
            .selectFrom('company_users as m')
            .select(['m.company_id', 'm.role'])
            .whereRef('m.user_id', '=', 'u.id')
            .$if(companyId !== undefined, (q) => q.where('m.company_id', '=', companyId!))
            .orderBy('m.created_at')
            .orderBy('m.id')
            .limit(1)
            .as('membership'),
        (join) => join.onTrue(),
      )
      .select(['u.id', 'u.is_superadmin', 'u.deactivated_at', 'membership.company_id', 'membership.role'])
      .where('u.id', '=', userId)
      .executeTakeFirstOrThrow()
    // Deactivation ends every credential; this closes the instant between a sign-in's check and its new session.
    if (row.deactivated_at !== null) throw new ApiError('unauthorized', 'This account is deactivated by its company’s identity system.')
    const actor: Actor = { userId: row.id, companyId: row.company_id, role: row.role as CompanyRole | null, isSuperadmin: row.is_superadmin }
    if (companyId === undefined || actor.companyId !== null) return actor
    // A superadmin may work in any company that exists; anyone else only in their own.
    const exists = row.is_superadmin && (await this.db.selectFrom('companies').select('id').where('id', '=', companyId).executeTakeFirst())
    if (!exists) throw new ApiError('forbidden', `You are not a member of company ${companyId}.`)
    return { ...actor, companyId, role: 'owner' }
  }

  async #touch(entry: Entry, now: number): Promise<void> {
    const at = new Date(now)
    if (entry.table === 'sessions') await this.db.updateTable('sessions').set({ last_seen_at: at }).where('id', '=', entry.credentialId).execute()
    else if (entry.table === 'api_tokens') await this.db.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', entry.credentialId).execute()
    else await this.db.updateTable('oauth_grants').set({ last_used_at: at }).where('id', '=', entry.credentialId).execute()
  }
}
