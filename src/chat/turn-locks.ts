import { createHash } from 'node:crypto'
import postgres from 'postgres'
import type { Logger } from '../logger.ts'

/**
 * Who runs a conversation's turn: one turn at a time per conversation, across every process of a deployment.
 * The process that runs a turn holds its conversation's lock until the turn ends.
 *
 * A turn a person asked for also holds one of their places: a person has as many as turns they may have running
 * at once, across every process. A place is taken with the conversation's lock and given back with it.
 */
export interface TurnLocks {
  /** Takes the conversation's lock; false when a turn holds it, in this process or another. */
  acquire(conversationId: string): Promise<boolean>
  /**
   * Takes the conversation's lock and one of the person's `places`, or neither: 'busy' when a turn holds the
   * conversation, 'full' when the person's turns hold every place.
   */
  acquireWithPlace(conversationId: string, userId: string, places: number): Promise<'taken' | 'busy' | 'full'>
  /** Gives back the conversation's lock, and the place taken with it. */
  release(conversationId: string): Promise<void>
  /** Whether a turn holds the conversation's lock in any process. */
  held(conversationId: string): Promise<boolean>
  close(): Promise<void>
}

/** One process (the embedded store): the locks are a set, and the places a count per person. */
export class MemoryTurnLocks implements TurnLocks {
  readonly #held = new Set<string>()
  /** Whose place each conversation's turn holds. */
  readonly #placeOf = new Map<string, string>()
  readonly #placesHeld = new Map<string, number>()

  async acquire(conversationId: string): Promise<boolean> {
    if (this.#held.has(conversationId)) return false
    this.#held.add(conversationId)
    return true
  }

  async acquireWithPlace(conversationId: string, userId: string, places: number): Promise<'taken' | 'busy' | 'full'> {
    if (this.#held.has(conversationId)) return 'busy'
    const held = this.#placesHeld.get(userId) ?? 0
    if (held >= places) return 'full'
    this.#held.add(conversationId)
    this.#placeOf.set(conversationId, userId)
    this.#placesHeld.set(userId, held + 1)
    return 'taken'
  }

  async release(conversationId: string): Promise<void> {
    this.#held.delete(conversationId)
    const userId = this.#placeOf.get(conversationId)
    if (userId === undefined) return
    this.#placeOf.delete(conversationId)
    const left = this.#placesHeld.get(userId)! - 1
    if (left === 0) this.#placesHeld.delete(userId)
    else this.#placesHeld.set(userId, left)
  }

  async held(conversationId: string): Promise<boolean> {
    return this.#held.has(conversationId)
  }

  async close(): Promise<void> {}
}

/** The 64-bit advisory-lock key of a conversation: the first 8 bytes of a hash, so no two ids plausibly meet. */
export function lockKey(conversationId: string): bigint {
  return createHash('sha256').update(`switchboard turn ${conversationId}`).digest().readBigInt64BE(0)
}

/** The advisory-lock key of a person's place number `place` (from 0), made as a conversation's is. */
export function placeKey(userId: string, place: number): bigint {
  return createHash('sha256').update(`switchboard place ${userId} ${place}`).digest().readBigInt64BE(0)
}

/** Keys as a PostgreSQL array literal: this connection does not load the server's array types to send arrays itself. */
function arrayOf(keys: ReadonlyArray<bigint | string>): string {
  return `{${keys.join(',')}}`
}

/**
 * One statement, one round trip: the conversation's lock and, only once it is taken (MATERIALIZED tries it once;
 * CASE makes the rest wait for it), the first of the offered places that is free. The places are tried in order
 * and no further than the first taken (LIMIT stops the scan), so a turn holds one place, never several.
 */
const LOCK_WITH_PLACE = `WITH conversation AS MATERIALIZED (SELECT pg_try_advisory_lock($1::bigint) AS taken)
SELECT taken, CASE WHEN taken THEN (SELECT key FROM unnest($2::bigint[]) AS key WHERE pg_try_advisory_lock(key) LIMIT 1) END AS place
FROM conversation`

/**
 * Several processes: PostgreSQL session advisory locks, all held on one dedicated connection of this process. A
 * process that dies loses its connection, and PostgreSQL frees its locks: no turn stays "running" for ever, and no
 * place stays taken. Should the connection drop while the process lives, its locks are taken again; a
 * conversation whose lock another process took meanwhile has its turn here stopped (`lost`), so two turns never
 * run on. A place is a lock too (a person's place n has a key of its own), so taking one writes nothing.
 */
export class PostgresTurnLocks implements TurnLocks {
  readonly #sql: postgres.Sql
  /** Held by this process's turns, to take again after a reconnect. */
  readonly #held = new Set<string>()
  /** The key of the place each conversation's turn holds, and whose it is with its number. */
  readonly #placeOf = new Map<string, { key: bigint; userId: string; place: number }>()
  /** Per person, the taking of a place under way in this process. */
  readonly #placing = new Map<string, Promise<void>>()
  #closing = false

  constructor(
    url: string,
    private readonly log: Logger,
    private readonly lost: (conversationId: string) => void = () => {},
  ) {
    this.#sql = postgres(url, { max: 1, idle_timeout: 0, max_lifetime: null, fetch_types: false, onnotice: () => {}, onclose: () => this.#dropped() })
  }

  async acquire(conversationId: string): Promise<boolean> {
    // Session locks nest: the same connection would get a held lock again. So a conversation this process holds
    // is refused here, before PostgreSQL is asked.
    if (this.#held.has(conversationId)) return false
    this.#held.add(conversationId)
    try {
      const [row] = await this.#sql`SELECT pg_try_advisory_lock(${lockKey(conversationId).toString()}::bigint) AS ok`
      if (!row!.ok) this.#held.delete(conversationId)
      return Boolean(row!.ok)
    } catch (error) {
      this.#held.delete(conversationId)
      throw error
    }
  }

  /**
   * One person's places are taken one request at a time in this process: two at once would be offered the same
   * free place, and this connection would get it twice.
   */
  acquireWithPlace(conversationId: string, userId: string, places: number): Promise<'taken' | 'busy' | 'full'> {
    const before = this.#placing.get(userId)
    // Sent at once when nothing waits before it, so that it leaves ahead of the turn's reads.
    const attempt = before ? before.then(() => this.#acquireWithPlace(conversationId, userId, places)) : this.#acquireWithPlace(conversationId, userId, places)
    const settled = attempt.then(
      () => {},
      () => {},
    )
    this.#placing.set(userId, settled)
    void settled.then(() => {
      if (this.#placing.get(userId) === settled) this.#placing.delete(userId)
    })
    return attempt
  }

  async #acquireWithPlace(conversationId: string, userId: string, places: number): Promise<'taken' | 'busy' | 'full'> {
    if (this.#held.has(conversationId)) return 'busy'
    // Session locks nest, so the places this process's turns hold are not offered: the same connection would get
    // them again.
    const ours = new Set([...this.#placeOf.values()].filter((held) => held.userId === userId).map((held) => held.place))
    const offered = new Map<string, number>()
    for (let place = 0; place < places; place++) if (!ours.has(place)) offered.set(placeKey(userId, place).toString(), place)
    this.#held.add(conversationId)
    try {
      // Prepared once (this connection is the server's own, never a pooler's): a statement with parameters would
      // otherwise first ask for their types, a round trip of its own.
      const [row] = await this.#sql.unsafe<{ taken: boolean; place: string | null }[]>(LOCK_WITH_PLACE, [lockKey(conversationId).toString(), arrayOf([...offered.keys()])], { prepare: true })
      if (!row!.taken) {
        this.#held.delete(conversationId)
        return 'busy'
      }
      if (row!.place === null) {
        await this.release(conversationId)
        return 'full'
      }
      this.#placeOf.set(conversationId, { key: BigInt(row!.place), userId, place: offered.get(row!.place)! })
      return 'taken'
    } catch (error) {
      // Session locks outlive a failed statement: whatever it took is given back.
      this.#held.delete(conversationId)
      await this.#unlock(conversationId, [lockKey(conversationId), ...[...offered.keys()].map(BigInt)])
      throw error
    }
  }

  async release(conversationId: string): Promise<void> {
    if (!this.#held.delete(conversationId)) return
    const place = this.#placeOf.get(conversationId)
    this.#placeOf.delete(conversationId)
    await this.#unlock(conversationId, place ? [lockKey(conversationId), place.key] : [lockKey(conversationId)])
  }

  async #unlock(conversationId: string, keys: bigint[]): Promise<void> {
    // Unlocking a key this session does not hold only says so (a warning, which is not heard here).
    await this.#sql`SELECT pg_advisory_unlock(key) FROM unnest(${arrayOf(keys)}::bigint[]) AS key`.catch((error: Error) => {
      // The connection is gone, and the locks with it.
      this.log.warn('a turn lock could not be released', { conversation_id: conversationId, error: error.message })
    })
  }

  async held(conversationId: string): Promise<boolean> {
    if (this.#held.has(conversationId)) return true
    // pg_locks shows a bigint advisory key as its high and low 32 bits (classid, objid), with objsubid 1.
    const key = BigInt.asUintN(64, lockKey(conversationId))
    const [row] = await this.#sql`
      SELECT EXISTS (
        SELECT 1 FROM pg_locks
        WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid = ${(key >> 32n).toString()}::bigint::oid AND objid = ${(key & 0xffffffffn).toString()}::bigint::oid
          AND objsubid = 1 AND granted
      ) AS held`
    return Boolean(row!.held)
  }

  async close(): Promise<void> {
    this.#closing = true
    await this.#sql.end({ timeout: 1 })
  }

  /** The connection dropped and its locks with it: take them again (the next query reconnects). */
  #dropped(): void {
    if (this.#closing || this.#held.size === 0) return
    const ours = [...this.#held]
    this.log.warn('the turn-lock connection dropped; taking the locks again', { turns: ours.length })
    void (async () => {
      for (const conversationId of ours) {
        if (!this.#held.has(conversationId)) continue
        const ok = await this.#sql`SELECT pg_try_advisory_lock(${lockKey(conversationId).toString()}::bigint) AS ok`.then(
          ([row]) => Boolean(row!.ok),
          () => false,
        )
        if (!ok) {
          this.#held.delete(conversationId)
          this.#placeOf.delete(conversationId)
          this.lost(conversationId)
          continue
        }
        // The turn goes on, and its place is taken again too: should another process have taken it meanwhile, the
        // person has one turn more than the cap until one ends, which is better than stopping a turn for it.
        const place = this.#placeOf.get(conversationId)
        if (place) await this.#sql`SELECT pg_try_advisory_lock(${place.key.toString()}::bigint)`.catch(() => {})
      }
    })()
  }
}
