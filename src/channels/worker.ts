import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import type { Logger } from '../logger.ts'
import { claimNext, extendLease, forgetFinished, nextDue, retryAt, settle, type InboxRow, type OutboxRow } from './queue.ts'

/** How a row's work ended: finished (nothing said), to try again at a time, or failed for good. */
export interface Outcome {
  retryAt?: Date
  error?: string
  failed?: boolean
  /** False: this try does not count against the row's attempts (it waited for something else). */
  countAttempt?: boolean
}

/** How long a claim holds before another process may take the row; renewed while the work runs. */
const LEASE_MS = 90_000
const RENEW_MS = 30_000
/** Rows queued by other processes, and retries, are looked for at least this often. */
const POLL_MS = 1_000
/** After this many tries a row is failed and kept, with its last error. */
export const MAX_ATTEMPTS = 10
/** Finished rows are kept this long (the console counts failed replies), then forgotten; looked at hourly. */
const KEEP_MS = 30 * 24 * 3_600_000
const FORGET_EVERY_MS = 3_600_000

/**
 * Works both channel queues in every process: takes due rows one by one (any process may, none twice at once) and
 * hands them to the channel kernel. Work queued here wakes it at once; other processes' work is found by polling,
 * and a retry is looked for when it falls due.
 */
export class ChannelWorker {
  #timer: ReturnType<typeof setTimeout> | undefined
  #running: Promise<void> | undefined
  #again = false
  #stopped = true
  #forgotAt = 0

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly handlers: { inbox(row: InboxRow): Promise<Outcome>; outbox(row: OutboxRow): Promise<Outcome> },
  ) {}

  start(): void {
    this.#stopped = false
    this.wake()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#running
  }

  wake(): void {
    if (this.#stopped) return
    if (this.#running) {
      this.#again = true
      return
    }
    clearTimeout(this.#timer)
    this.#running = this.#drain()
      .catch((error) => this.log.error('channel queue failed', { error: String(error) }))
      .finally(() => {
        this.#running = undefined
        if (this.#again) {
          this.#again = false
          this.wake()
        } else void this.#schedule()
      })
  }

  async #schedule(): Promise<void> {
    if (this.#stopped) return
    const due = await nextDue(this.db).catch(() => undefined)
    const wait = due ? Math.min(Math.max(due.getTime() - this.clock.now(), 0), POLL_MS) : POLL_MS
    if (this.#stopped || this.#running) return
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.wake(), wait)
    this.#timer.unref?.()
  }

  /** Takes due rows until none is left. Rows run concurrently with each other's threads, one per thread. */
  async #drain(): Promise<void> {
    if (this.clock.now() - this.#forgotAt > FORGET_EVERY_MS) {
      this.#forgotAt = this.clock.now()
      await forgetFinished(this.db, new Date(this.clock.now() - KEEP_MS))
    }
    const work: Promise<void>[] = []
    for (;;) {
      if (this.#stopped) break
      const now = new Date(this.clock.now())
      const [inbox, outbox] = await Promise.all([claimNext(this.db, 'channel_inbox', now, LEASE_MS), claimNext(this.db, 'channel_outbox', now, LEASE_MS)])
      if (!inbox && !outbox) break
      if (inbox) work.push(this.#work('channel_inbox', inbox, () => this.handlers.inbox(inbox)))
      if (outbox) work.push(this.#work('channel_outbox', outbox, () => this.handlers.outbox(outbox)))
    }
    await Promise.all(work)
  }

  async #work(table: 'channel_inbox' | 'channel_outbox', row: { id: string; attempts: number }, run: () => Promise<Outcome>): Promise<void> {
    const renew = setInterval(() => void extendLease(this.db, table, row.id, new Date(this.clock.now() + LEASE_MS)).catch(() => {}), RENEW_MS)
    try {
      const outcome = await run().catch((error): Outcome => {
        this.log.error('channel work failed', { table, id: row.id, error: String(error) })
        return { retryAt: new Date(this.clock.now() + 5_000), error: (error as Error).message ?? String(error) }
      })
      const now = new Date(this.clock.now())
      const spent = outcome.retryAt && outcome.countAttempt !== false && row.attempts >= MAX_ATTEMPTS
      if (outcome.failed || spent) await settle(this.db, table, row.id, 'failed', now, outcome.error)
      else if (outcome.retryAt) await retryAt(this.db, table, row.id, outcome.retryAt, outcome.error ?? '', outcome.countAttempt ?? true)
      else await settle(this.db, table, row.id, table === 'channel_inbox' ? 'done' : 'sent', now)
    } finally {
      clearInterval(renew)
    }
  }
}
