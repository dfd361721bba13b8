import type { Actor } from '../auth/actor.ts'
import type { Origin } from '../audit/trail.ts'
import type { Db, Executor } from '../db/schema.ts'
import type { Logger } from '../logger.ts'
import type { VaultScope } from '../db/schema.ts'
import type { Model, WriteContext } from '../models/define.ts'
import type { ApiRecord } from '../models/records.ts'
import type { PlanView } from '../plans/view.ts'

/** A record the records layer created, changed or deleted. */
export interface RecordWritten {
  type: 'record'
  model: Model
  verb: 'create' | 'update' | 'delete'
  id: string
  /** The record as written; for a delete, as it was. */
  record: ApiRecord
  actor: Actor
}

/**
 * Every kind of write whose consequences (cache flushes, agent reloads, chat feeds; next, the audit trail and
 * metrics) the kernel's parts follow. A type added here is typed at both ends.
 */
export type Written =
  | RecordWritten
  /** A person's ways in changed (password set or reset, a session or grant ended): who they are is read afresh. */
  | { type: 'credentials'; user_id: string }
  /** A secret of the vault was set or deleted. */
  | { type: 'secret'; scope: VaultScope }
  /** A runner's model registry was curated or refreshed. */
  | { type: 'runner-models'; runner: string }
  /** A background task was started: its tool runs once this has committed. */
  | { type: 'task'; verb: 'start'; id: string; user_id: string }
  /** Someone's artifact was made, changed (pinned, revoked…) or deleted. */
  | { type: 'artifact'; verb: 'create' | 'update' | 'delete'; id: string; user_id: string }
  /** A plan or its tasks changed, as it now stands: its conversation's panel redraws; `activated` wakes continuation. */
  | { type: 'plan'; change: 'plan_created' | 'plan_task_update' | 'plan_updated'; plan: PlanView; activated: boolean }

export type WriteListener = (write: Written) => void | Promise<void>

/**
 * Where writes happen: their executor (the pool, or the caller's transaction), who makes them, the checks model
 * guards may ask for, and where each write says what it did. What is announced reaches the listeners only once it
 * has committed.
 */
export interface WriteScope extends WriteContext, Announcing {
  actor: Actor
}

/** Where a write happens and says what it did, for writes nobody signed in makes (a reset link spent). */
export interface Announcing {
  db: Executor
  announce(write: Written): void
  /** The request making the writes, which the audit trail records. */
  origin?: Origin
}

/**
 * The one path of every write's consequences. Whatever door a write comes through (the REST API, the console, a
 * plugin's tool, a channel message), it is made in a scope from here, and the kernel's parts hear it the same way.
 */
export class Writes {
  readonly #listeners = new Set<WriteListener>()

  constructor(
    private readonly db: Db,
    private readonly checks: WriteContext,
    private readonly log: Logger,
  ) {}

  /** Hears every committed write of this process; the listener passes on to other processes what they must know. */
  on(listener: WriteListener): () => void {
    this.#listeners.add(listener)
    return () => void this.#listeners.delete(listener)
  }

  /**
   * Runs `work` on the pool: each write commits on its own (the records layer opens a transaction where one write
   * needs it), and what was announced is heard once `work` is over, whether it ended well or not.
   */
  async run<T>(actor: Actor, work: (scope: WriteScope) => Promise<T>): Promise<T> {
    const written: Written[] = []
    try {
      return await work(this.#scope(this.db, actor, written))
    } finally {
      await this.#hear(written)
    }
  }

  /**
   * Runs `work` in one transaction, or in the caller's when `within` is given (its writes are then heard when the
   * caller's commits): a tool call, its writes and their consequences stand or fall together.
   */
  async transaction<T>(actor: Actor, work: (scope: WriteScope) => Promise<T>, within?: WriteScope): Promise<T> {
    if (within) return work(within.actor === actor ? within : { ...within, actor })
    const written: Written[] = []
    const result = await this.db.transaction().execute((tx) => work(this.#scope(tx, actor, written)))
    await this.#hear(written)
    return result
  }

  /** Runs `work`, which no signed-in person does (a reset link is spent by whoever holds it), as run() does. */
  async unattended<T>(work: (scope: Announcing) => Promise<T>, origin?: Origin): Promise<T> {
    const written: Written[] = []
    try {
      return await work({ db: this.db, origin, announce: (write) => void written.push(write) })
    } finally {
      await this.#hear(written)
    }
  }

  /** A write made without a scope (one statement of a service's own) that has committed. */
  announced(write: Written): Promise<void> {
    return this.#hear([write])
  }

  #scope(db: Executor, actor: Actor, written: Written[]): WriteScope {
    return { db, actor, origin: actor.origin, checkOutbound: (path, url) => this.checks.checkOutbound(path, url), announce: (write) => void written.push(write) }
  }

  async #hear(written: Written[]): Promise<void> {
    let failure: unknown
    for (const write of written) {
      for (const listener of this.#listeners) {
        try {
          await listener(write)
        } catch (error) {
          // The write stands; every part still hears it, and the caller learns that a consequence failed.
          this.log.error('a write’s consequence failed', { type: write.type, error: String(error) })
          failure ??= error
        }
      }
    }
    if (failure !== undefined) throw failure
  }
}
