import { sql } from 'kysely'
import type { Actor } from '../auth/actor.ts'
import type { Clock } from '../clock.ts'
import { scoped } from '../db/scoped.ts'
import type { ArtifactMediaType, Db } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import type { Writes, WriteScope } from '../events/writes.ts'
import { Artifact } from '../models/artifact.ts'
import type { RecordOf } from '../models/define.ts'
import { isUuid } from '../models/fields.ts'
import { getRecord, listRecords, type Versioned } from '../models/records.ts'
import { judgeContent, type ArtifactKind } from './content.ts'
import { signShareToken, verifyShareToken } from './share-tokens.ts'

const DAY_MS = 24 * 60 * 60 * 1000
export const DEFAULT_TTL_DAYS = 30
/** A link to a pinned artifact still ends: this many days after it was made, unless asked otherwise. */
export const PINNED_LINK_DAYS = 30
/** What one person may keep at once, all artifacts together: the store is shared by every company. */
export const MAX_BYTES_PER_PERSON = 200 * 1024 * 1024

/** Whom an artifact is made for and acted on by: the person (a tool's user, or an API caller). */
export type ArtifactOwner = Pick<Actor, 'userId' | 'companyId'>

export type ArtifactRecord = RecordOf<'artifacts'>

export interface NewArtifact {
  title: string
  kind: ArtifactKind
  /** Text for the text kinds, base64 for an image. */
  content: string
  ttl_days?: number
  /** Where an agent's chat turn made it. */
  conversation_id?: string
  agent_id?: string
}

/** What a share link opens: the artifact's bytes and what they are. */
export interface SharedArtifact {
  id: string
  title: string
  mediaType: ArtifactMediaType
  content: Uint8Array
  /** When the link stops working: its own expiry, or the artifact's if sooner. */
  linkExpiresAt: Date
}

/** Why a share link opens nothing, as the status its page answers with: 403 bad token, 404 missing, 410 gone. */
export class ShareRefusal extends Error {
  constructor(
    readonly status: 403 | 404 | 410,
    message: string,
  ) {
    super(message)
    this.name = 'ShareRefusal'
  }
}

export interface ArtifactsDeps {
  db: Db
  /** Where its changes are made (in the caller's transaction, when given its scope) and announced. */
  writes: Writes
  clock: Clock
  log: Logger
  /** HMAC-SHA256 key for share tokens, derived from the master key for this purpose only. */
  signingKey: CryptoKey
  /** The browser-facing app's public address: share links point there. */
  shareBaseUrl: string
  /** Days an artifact is kept when its maker does not say (the System setting retention.artifact_days). */
  defaultTtlDays?: () => Promise<number>
}

/**
 * Artifacts: made by the create_artifact tool or a script, listed and acted on by their owner, shared by signed
 * links, swept once expired. The rules live here, for the tool and the API alike. An artifact is its owner's alone:
 * every query on someone's behalf goes through the scoped builder with the Artifact model's rule (owner only).
 */
export class Artifacts {
  constructor(private readonly deps: ArtifactsDeps) {}

  async create(owner: ArtifactOwner, input: NewArtifact, within?: WriteScope): Promise<Versioned<ArtifactRecord>> {
    const actor = actorOf(owner)
    if (actor.companyId === null) throw new ApiError('forbidden', 'Artifacts belong to a company, and you are not a member of any.')
    const title = input.title.trim()
    if (title === '' || title.length > 300) {
      throw new ApiError('validation_error', 'The title must be 1 to 300 characters.', { errors: [{ path: 'title', message: 'must be 1 to 300 characters' }] })
    }
    const ttlDays = input.ttl_days ?? (await this.deps.defaultTtlDays?.()) ?? DEFAULT_TTL_DAYS
    if (!Number.isInteger(ttlDays) || ttlDays < 1 || ttlDays > 365) {
      throw new ApiError('validation_error', 'ttl_days must be a whole number of days from 1 to 365.', { errors: [{ path: 'ttl_days', message: 'must be an integer from 1 to 365' }] })
    }
    const { mediaType, bytes } = await judgeContent(input.kind, input.content)
    const id = Bun.randomUUIDv7()
    return this.deps.writes.transaction(actor, async ({ db: tx, announce }) => {
      // One person's writes take turns here, so two creations cannot both squeeze under the allowance.
      await sql`SELECT pg_advisory_xact_lock(hashtext(${`artifacts:${actor.userId}`}))`.execute(tx)
      const held = await scoped(tx, actor).selectFrom(Artifact).select(sql<number>`coalesce(sum(size_bytes), 0)::bigint`.as('bytes')).executeTakeFirstOrThrow()
      if (Number(held.bytes) + bytes.length > MAX_BYTES_PER_PERSON) {
        throw new ApiError('conflict', `You keep ${Math.round(Number(held.bytes) / 1024)} KiB of artifacts; with this one it would be over the ${MAX_BYTES_PER_PERSON / (1024 * 1024)} MiB each person may keep. Delete some first.`)
      }
      await scoped(tx, actor)
        .insertInto(Artifact, {
          id,
          user_id: actor.userId,
          conversation_id: input.conversation_id ?? null,
          agent_id: input.agent_id ?? null,
          title,
          media_type: mediaType,
          size_bytes: bytes.length,
          content: bytes,
          ttl_days: ttlDays,
          pinned: false,
          expires_at: new Date(this.#now() + ttlDays * DAY_MS),
          revoked_at: null,
        })
        .execute()
      announce({ type: 'artifact', verb: 'create', id, user_id: actor.userId })
      return getRecord(tx, actor, Artifact, id)
    }, within)
  }

  /** The artifact as its owner sees it; 404 for anyone else's, or none. */
  read(owner: ArtifactOwner, id: string): Promise<Versioned<ArtifactRecord>> {
    if (!isUuid(id)) throw notFound(id)
    return getRecord(this.deps.db, actorOf(owner), Artifact, id)
  }

  /** The owner's artifacts, newest first. */
  async list(owner: ArtifactOwner, limit = 50): Promise<ArtifactRecord[]> {
    const { data } = await listRecords(this.deps.db, actorOf(owner), Artifact, { filters: [], order: [{ field: 'created_at', direction: 'desc' }], limit, offset: 0, count: false })
    return data as ArtifactRecord[]
  }

  /** Never expires from now on. */
  pin(owner: ArtifactOwner, id: string, within?: WriteScope): Promise<Versioned<ArtifactRecord>> {
    return this.#change(owner, id, within, () => ({ pinned: true, expires_at: null }))
  }

  /** Expires again, its time to live counted afresh from now. */
  unpin(owner: ArtifactOwner, id: string, within?: WriteScope): Promise<Versioned<ArtifactRecord>> {
    return this.#change(owner, id, within, (row) => ({ pinned: false, expires_at: new Date(this.#now() + row.ttl_days * DAY_MS) }))
  }

  /** Kept, but every share link made so far or later answers 410 until unrevoked. */
  revoke(owner: ArtifactOwner, id: string, within?: WriteScope): Promise<Versioned<ArtifactRecord>> {
    return this.#change(owner, id, within, (row) => ({ revoked_at: row.revoked_at ?? new Date(this.#now()) }))
  }

  /** Its links work again (those not expired meanwhile). */
  unrevoke(owner: ArtifactOwner, id: string, within?: WriteScope): Promise<Versioned<ArtifactRecord>> {
    return this.#change(owner, id, within, () => ({ revoked_at: null }))
  }

  /** Gone for good: its links answer 404. */
  async remove(owner: ArtifactOwner, id: string, within?: WriteScope): Promise<void> {
    if (!isUuid(id)) throw notFound(id)
    const actor = actorOf(owner)
    await this.deps.writes.transaction(actor, async ({ db, announce }) => {
      const result = await scoped(db, actor).deleteFrom(Artifact).where('artifacts.id', '=', id).executeTakeFirst()
      if (Number(result.numDeletedRows) === 0) throw notFound(id)
      announce({ type: 'artifact', verb: 'delete', id, user_id: actor.userId })
    }, within)
  }

  /**
   * A share link: anyone holding it sees the artifact, without signing in, until the link expires — at the artifact's
   * own expiry, or `days` from now if sooner; for a pinned artifact `days` (default 30) from now.
   */
  async shareLink(owner: ArtifactOwner, id: string, days?: number): Promise<{ url: string; expires_at: string }> {
    if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > 365)) {
      throw new ApiError('validation_error', 'A link lasts 1 to 365 days.', { errors: [{ path: 'expires_in_days', message: 'must be an integer from 1 to 365' }] })
    }
    const { record } = await this.read(owner, id)
    if (record.revoked_at) throw new ApiError('conflict', 'This artifact is revoked, so no link to it works: unrevoke it first.')
    const now = this.#now()
    const artifactEnds = record.expires_at ? Date.parse(record.expires_at) : undefined
    if (artifactEnds !== undefined && artifactEnds <= now) throw expired(record.expires_at!)
    const asked = now + (days ?? PINNED_LINK_DAYS) * DAY_MS
    const ends = new Date(artifactEnds === undefined ? asked : days === undefined ? artifactEnds : Math.min(asked, artifactEnds))
    const token = await signShareToken(this.deps.signingKey, record.id, ends)
    const seconds = new Date(Math.floor(ends.getTime() / 1000) * 1000)
    return { url: `${this.deps.shareBaseUrl}/share/artifacts/${record.id}?token=${token}`, expires_at: seconds.toISOString() }
  }

  /**
   * What a share link opens, for whoever holds it (no sign-in: the signed token is the permission). The token is
   * judged first, so probing ids without one learns nothing: 403 for a token not made for this id, 410 once it has
   * expired, then 404 for an artifact that is gone, 410 for one revoked or expired.
   */
  async openShared(id: string, token: string): Promise<SharedArtifact> {
    const linkEnds = await verifyShareToken(this.deps.signingKey, id, token)
    if (!linkEnds || !isUuid(id)) throw new ShareRefusal(403, 'This link is not valid: it was changed, or it belongs to another artifact.')
    const now = this.#now()
    if (linkEnds.getTime() <= now) throw new ShareRefusal(410, `This link expired on ${readable(linkEnds)}.`)
    // Not on anyone's behalf: the link holder may be no user at all, and the token names the one row they may see.
    const row = await this.deps.db
      .selectFrom('artifacts')
      .select(['id', 'title', 'media_type', 'content', 'expires_at', 'revoked_at'])
      .where('id', '=', id)
      .executeTakeFirst()
    if (!row) throw new ShareRefusal(404, 'There is no such artifact: it was deleted.')
    if (row.revoked_at) throw new ShareRefusal(410, 'Its owner revoked this artifact.')
    if (row.expires_at && row.expires_at.getTime() <= now) throw new ShareRefusal(410, `This artifact expired on ${readable(row.expires_at)}.`)
    const ends = row.expires_at && row.expires_at < linkEnds ? row.expires_at : linkEnds
    return { id: row.id, title: row.title, mediaType: row.media_type, content: new Uint8Array(row.content), linkExpiresAt: ends }
  }

  /** Deletes every unpinned artifact past its expiry; the number deleted. */
  async sweep(): Promise<number> {
    const result = await this.deps.db.deleteFrom('artifacts').where('expires_at', '<=', new Date(this.#now())).executeTakeFirst()
    const deleted = Number(result.numDeletedRows)
    if (deleted > 0) this.deps.log.info('expired artifacts swept', { deleted })
    return deleted
  }

  #now(): number {
    return this.deps.clock.now()
  }

  /** A state change of one artifact, judged on its current row (locked): 404 if not the owner's, 409 once expired. */
  async #change(owner: ArtifactOwner, id: string, within: WriteScope | undefined, next: (row: { ttl_days: number; revoked_at: Date | null }) => Record<string, unknown>) {
    if (!isUuid(id)) throw notFound(id)
    const actor = actorOf(owner)
    return this.deps.writes.transaction(actor, async ({ db: tx, announce }) => {
      const row = await scoped(tx, actor)
        .selectWritable(Artifact)
        .select(['artifacts.ttl_days', 'artifacts.expires_at', 'artifacts.revoked_at'])
        .where('artifacts.id', '=', id)
        .forUpdate()
        .executeTakeFirst()
      if (!row) throw notFound(id)
      if (row.expires_at && row.expires_at.getTime() <= this.#now()) throw expired(row.expires_at.toISOString())
      await scoped(tx, actor)
        .updateTable(Artifact)
        .set({ ...next(row), version: sql`version + 1`, updated_at: sql`now()` })
        .where('artifacts.id', '=', id)
        .execute()
      announce({ type: 'artifact', verb: 'update', id, user_id: actor.userId })
      return getRecord(tx, actor, Artifact, id) as Promise<Versioned<ArtifactRecord>>
    }, within)
  }
}

/** The scoped builder's actor for an owner: the Artifact rule looks only at whose it is. */
function actorOf(owner: ArtifactOwner): Actor {
  return { userId: owner.userId, companyId: owner.companyId, role: null, isSuperadmin: false }
}

function notFound(id: string): ApiError {
  return new ApiError('not_found', `No Artifact with id ${id}.`)
}

function expired(at: string): ApiError {
  return new ApiError('conflict', `This artifact expired on ${readable(new Date(at))} and is about to be deleted; it can no longer be changed or shared.`)
}

function readable(at: Date): string {
  return at.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')
}
