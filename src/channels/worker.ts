import type { Clock } from '../clock.ts'
import { ROOT_CONTEXT } from '@opentelemetry/api'
import { NoMetrics, type Metrics } from '../metrics/metrics.ts'
import { Tracing } from '../tracing/tracing.ts'
import type { Db } from '../db/schema.ts'
import type { Logger } from '../logger.ts'
import type { Job, Scheduler } from '../scheduler.ts'
import { claimNext, claimOf, extendLease, forgetFinished, nextDue, retryAt, settle, type Claim, type InboxRow, type OutboxRow, type QueueTable } from './queue.ts'

/** How a row's work ended: finished (nothing said), to try again at a time, or failed for good. */
export interface Outcome {
  retryAt?: Date
  error?: string
  failed?: boolean
  /** False: this try does not count against the row's attempts (it waited for something else). */
  countAttempt?: boolean
}

export interface QueueHandlers {
  inbox(row: InboxRow, claim: Claim): Promise<Outcome>
  outbox(row: OutboxRow, claim: Claim): Promise<Outcome>
  /** A row is given up on after its last try: the sender should hear of it. */
  gaveUp(table: QueueTable, row: InboxRow | OutboxRow, error: string): Promise<void>
}

/** How long a claim holds before another process may take the row; renewed while the work runs. */
const LEASE_MS = 90_000
const RENEW_MS = 30_000
/**
 * Rows queued by other processes are looked for this often where processes share the store; alone on it (the
 * embedded store), everything queued wakes the worker and every retry and lease is timed, so the poll is only a
 * safety net, kept rare since each look holds up the process's requests on the embedded database.
 */
export const SHARED_POLL_MS = 1_000
export const ALONE_POLL_MS = 30_000
/** After this many tries a row is failed and kept, with its last error. */
export const MAX_ATTEMPTS = 10
/** Rows one process works on at once: a flood is shared with the other processes, not taken whole by one. */
const MAX_IN_FLIGHT = 16
/** The longest wait between two tries. */
const MAX_BACKOFF_MS = 15 * 60_000
/** Finished rows are kept this long (the console counts failed replies), then forgotten; looked at hourly. */
const KEEP_MS = 30 * 24 * 3_600_000
const FORGET_EVERY_MS = 3_600_000

/** The wait before try `attempts + 1`: `base`, doubling, at most 15 minutes. */
export function backoff(base: number, attempts: number): number {
  return Math.min(base * 2 ** Math.max(attempts - 1, 0), MAX_BACKOFF_MS)
}

/**
 * Works both channel queues in every process: takes due rows (any process may, none twice at once) and hands them
 * to the channel kernel, a bounded number at a time. Work queued here wakes it at once; other processes' work is
 * found by polling, and a retry (or a lease running out) is looked for when it falls due.
 */
export class ChannelWorker {
  #job: Job | undefined
  #stopped = true
  #forgotAt = 0
  readonly #inFlight = new Set<Promise<void>>()

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly retryMs: number,
    private readonly handlers: QueueHandlers,
    private readonly scheduler: Scheduler,
    private readonly metrics: Metrics = new NoMetrics(),
    private readonly tracing: Tracing = Tracing.off(),
    private readonly pollMs = SHARED_POLL_MS,
  ) {}

  start(): void {
    this.#stopped = false
    this.#job ??= this.scheduler.every('channel queues', this.pollMs, () => this.#round(), { now: true })
  }

  /** Rows this process is working on now. */
  get inFlight(): number {
    return this.#inFlight.size
  }

  async stop(): Promise<void> {
    this.#stopped = true
    await this.#job?.stop()
    this.#job = undefined
    await Promise.all(this.#inFlight)
  }

  /** Work was queued, or a row finished and made room: look now (or right after the look under way). */
  wake(): void {
    if (!this.#stopped) this.#job?.wake()
  }

  /**
   * Claims what is due, then looks again when the next retry falls due, if that is sooner than the poll. A worker
   * with no room left has its next look asked for by the first of its rows to finish.
   */
  async #round(): Promise<void> {
    await this.#claim()
    if (this.#inFlight.size >= MAX_IN_FLIGHT) return
    const due = await nextDue(this.db).catch(() => undefined)
    if (due) this.#job?.wakeIn(due.getTime() - this.clock.now())
  }

  /** Takes due rows until none is left or enough are in flight; a finished one makes room and looks again. */
  async #claim(): Promise<void> {
    if (this.clock.now() - this.#forgotAt > FORGET_EVERY_MS) {
      this.#forgotAt = this.clock.now()
      await forgetFinished(this.db, new Date(this.clock.now() - KEEP_MS))
    }
    while (!this.#stopped && this.#inFlight.size < MAX_IN_FLIGHT) {
      const now = new Date(this.clock.now())
      const inbox = await claimNext(this.db, 'channel_inbox', now, LEASE_MS)
      if (inbox) this.#track('channel_inbox', inbox, (claim) => this.handlers.inbox(inbox, claim))
      if (this.#inFlight.size >= MAX_IN_FLIGHT) break
      const outbox = await claimNext(this.db, 'channel_outbox', now, LEASE_MS)
      if (outbox) this.#track('channel_outbox', outbox, (claim) => this.handlers.outbox(outbox, claim))
      if (!inbox && !outbox) break
    }
  }

  #track(table: QueueTable, row: InboxRow | OutboxRow, run: (claim: Claim) => Promise<Outcome>): void {
    const work = this.#work(table, row, run).finally(() => {
      this.#inFlight.delete(work)
      this.wake()
    })
    this.#inFlight.add(work)
  }

  async #work(table: QueueTable, row: InboxRow | OutboxRow, run: (claim: Claim) => Promise<Outcome>): Promise<void> {
    const claim = claimOf(table, row)
    const renew = setInterval(() => void extendLease(this.db, claim, new Date(this.clock.now() + LEASE_MS)).catch(() => {}), RENEW_MS)
    try {
      // A delivery (inbound) or a reply (outbound) is a trace of its own: it has no request to belong to.
      const name = table === 'channel_inbox' ? 'channel delivery' : 'channel reply'
      const attempt = () => this.tracing.span(name, { 'switchboard.channel': row.platform, 'switchboard.attempt': row.attempts }, () => run(claim), ROOT_CONTEXT)
      const outcome = await attempt().catch((error): Outcome => {
        this.log.error('channel work failed', { table, id: row.id, error: String(error) })
        return { retryAt: new Date(this.clock.now() + backoff(this.retryMs, row.attempts)), error: (error as Error).message ?? String(error) }
      })
      const now = new Date(this.clock.now())
      const spent = outcome.retryAt !== undefined && outcome.countAttempt !== false && row.attempts >= MAX_ATTEMPTS
      const queue = table === 'channel_inbox' ? 'inbox' : 'outbox'
      this.metrics.channelWork(queue, outcome.failed || spent ? 'failed' : outcome.retryAt ? 'retry' : 'done')
      if (outcome.failed || spent) {
        const error = outcome.error ?? 'failed'
        if ((await settle(this.db, claim, 'failed', now, error)) && spent) await this.handlers.gaveUp(table, row, error)
      } else if (outcome.retryAt) await retryAt(this.db, claim, outcome.retryAt, outcome.error ?? '', outcome.countAttempt ?? true)
      else await settle(this.db, claim, table === 'channel_inbox' ? 'done' : 'sent', now)
    } catch (error) {
      this.log.error('channel queue row not settled', { table, id: row.id, error: String(error) })
    } finally {
      clearInterval(renew)
    }
  }
}
