import { createHash } from 'node:crypto'
import postgres from 'postgres'
import type { Logger } from '../logger.ts'

/**
 * Who runs a conversation's turn: one turn at a time per conversation, across every process of a deployment.
 * The process that runs a turn holds its conversation's lock until the turn ends.
 */
export interface TurnLocks {
  /** Takes the conversation's lock; false when a turn holds it, in this process or another. */
  acquire(conversationId: string): Promise<boolean>
  release(conversationId: string): Promise<void>
  /** Whether a turn holds the conversation's lock in any process. */
  held(conversationId: string): Promise<boolean>
  close(): Promise<void>
}

/** One process (the embedded store): the locks are a set. */
export class MemoryTurnLocks implements TurnLocks {
  readonly #held = new Set<string>()

  async acquire(conversationId: string): Promise<boolean> {
    if (this.#held.has(conversationId)) return false
    this.#held.add(conversationId)
    return true
  }

  async release(conversationId: string): Promise<void> {
    this.#held.delete(conversationId)
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

/**
 * Several processes: PostgreSQL session advisory locks, all held on one dedicated connection of this process. A
 * process that dies loses its connection, and PostgreSQL frees its locks: no turn stays "running" for ever. Should
 * the connection drop while the process lives, its locks are taken again; a conversation whose lock another
 * process took meanwhile has its turn here stopped (`lost`), so two turns never run on.
 */
export class PostgresTurnLocks implements TurnLocks {
  readonly #sql: postgres.Sql
  /** Held by this process's turns, to take again after a reconnect. */
  readonly #held = new Set<string>()
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

  async release(conversationId: string): Promise<void> {
    if (!this.#held.delete(conversationId)) return
    await this.#sql`SELECT pg_advisory_unlock(${lockKey(conversationId).toString()}::bigint)`.catch((error: Error) => {
      // The connection is gone, and the lock with it.
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
          this.lost(conversationId)
        }
      }
    })()
  }
}
