import { ApiError } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import type { TurnLocks } from './turn-locks.ts'

/** A conversation's lock and its asker's place under the cap, taken ahead of its turn (see ActiveTurns.reserve). */
export interface Reservation {
  conversationId: string
  /** The lock and the person's place: false when a turn holds the lock, rejected with the 429 when every place is. */
  taken: Promise<boolean>
  /** Handed to start() or given back: either way no longer the reserver's. */
  used: boolean
}

/**
 * The turns running in this process, by conversation, and the way to stop any turn of the deployment: the lock
 * admits one turn per conversation across processes, and an abort for a turn running elsewhere travels on the bus
 * to the process that runs it.
 */
export class ActiveTurns {
  readonly #turns = new Map<string, AbortController>()

  constructor(
    private readonly locks: TurnLocks,
    private readonly events: EventBus,
    /** How many turns one person may have running at once, across every process (none: no limit). */
    private readonly turnsPerUser?: number,
  ) {
    events.subscribe('turn.abort', ({ conversation_id }) => this.#abortHere(conversation_id))
  }

  /** Turns running in this process. */
  get running(): number {
    return this.#turns.size
  }

  /**
   * Takes the conversation's lock and the person's place ahead of `start`, so that the round trip runs beside the
   * turn's reads. A reservation is handed to `start`, or given back with `unreserve`.
   */
  reserve(conversationId: string, userId: string): Reservation {
    const taken = this.#turns.has(conversationId) ? Promise.resolve(false) : this.#take(conversationId, userId)
    taken.catch(() => {})
    return { conversationId, taken, used: false }
  }

  /** Gives back a reservation no turn used (the reads refused the caller, or nothing was to be answered). */
  async unreserve(reservation: Reservation): Promise<void> {
    if (reservation.used) return
    reservation.used = true
    if (await reservation.taken.catch(() => false)) await this.locks.release(reservation.conversationId)
  }

  /**
   * Admits a turn, or refuses with 409 when one runs in the conversation (in any process). A turn a person asked
   * for (`userId`) also takes one of their places: 429 when they have as many running as one person may.
   * `reserved` holds what `reserve` took already: from here on, the lock and the place are this turn's to release.
   */
  async start(conversationId: string, userId?: string, reserved?: Reservation): Promise<AbortController> {
    if (reserved) {
      if (reserved.conversationId !== conversationId || reserved.used) throw new Error('a reservation serves one start of its own conversation')
      reserved.used = true
    }
    if (this.#turns.has(conversationId) || !(await (reserved?.taken ?? this.#take(conversationId, userId)))) {
      throw new ApiError('conflict', 'A turn is already running in this conversation; wait for it or abort it.')
    }
    const controller = new AbortController()
    this.#turns.set(conversationId, controller)
    return controller
  }

  async finish(conversationId: string, controller: AbortController): Promise<void> {
    if (this.#turns.get(conversationId) !== controller) return
    this.#turns.delete(conversationId)
    await this.locks.release(conversationId)
  }

  /** True when a turn was running, here or in another process, and was told to stop. */
  async abort(conversationId: string): Promise<boolean> {
    if (this.#abortHere(conversationId)) return true
    if (!(await this.locks.held(conversationId))) return false
    await this.events.publish('turn.abort', { conversation_id: conversationId })
    return true
  }

  /** Stops a turn of this process whose lock was lost to another process. */
  lost(conversationId: string): void {
    this.#turns.get(conversationId)?.abort(new Error('the turn lost its lock to another process'))
  }

  /** The conversation's lock and, for a person's turn, one of their places: false when a turn holds the lock. */
  async #take(conversationId: string, userId?: string): Promise<boolean> {
    if (!userId || this.turnsPerUser === undefined) return this.locks.acquire(conversationId)
    const outcome = await this.locks.acquireWithPlace(conversationId, userId, this.turnsPerUser)
    if (outcome === 'full') {
      throw new ApiError('rate_limited', `You have ${this.turnsPerUser} answers being written at once, the most one person may; wait for one to finish or stop one.`, {
        headers: { 'Retry-After': '5' },
      })
    }
    return outcome === 'taken'
  }

  #abortHere(conversationId: string): boolean {
    const controller = this.#turns.get(conversationId)
    if (!controller) return false
    controller.abort(new Error('aborted by the user'))
    return true
  }
}
