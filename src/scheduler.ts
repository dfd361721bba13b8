import type { Logger } from './logger.ts'

/** What a periodic job does on one run; what it answers is not read. */
export type JobWork = () => unknown

/** One periodic job of the scheduler. */
export interface Job {
  /** Runs now, or right after the run under way (once, however often it is woken meanwhile). */
  wake(): void
  /**
   * The next run no later than `ms` from now (a queue that knows when its next row falls due); asked during a run,
   * it counts from the run's end. Never later than the interval.
   */
  wakeIn(ms: number): void
  /** No more runs; resolves when the run under way, if any, has ended. */
  stop(): Promise<void>
}

/**
 * Every periodic loop of a process (sweeps, heartbeats, queue polls, mailbox rounds) runs here, so each follows the
 * same rules: one run of a job at a time, the next one an interval after the last ended (a slow run delays, never
 * piles up), a failure logged by the job's name and the loop going on, nothing kept alive by a pending timer, and
 * one stop() that waits for every run under way.
 */
export class Scheduler {
  readonly #jobs = new Set<ScheduledJob>()
  #stopped = false

  constructor(private readonly log: Logger) {}

  /**
   * Runs `work` every `intervalMs`, the first time at once when `now` is set, else after one interval. `name` says
   * in the log which job failed.
   */
  every(name: string, intervalMs: number, work: JobWork, options: { now?: boolean } = {}): Job {
    if (!(intervalMs > 0)) throw new Error(`${name}: the interval must be a positive number of milliseconds, not ${intervalMs}`)
    const job = new ScheduledJob(name, intervalMs, work, this.log, () => this.#jobs.delete(job))
    if (this.#stopped) {
      void job.stop()
      return job
    }
    this.#jobs.add(job)
    if (options.now) job.wake()
    else job.later(intervalMs)
    return job
  }

  /** Stops every job and waits for the runs under way; jobs asked for afterwards never run. */
  async stop(): Promise<void> {
    this.#stopped = true
    await Promise.all([...this.#jobs].map((job) => job.stop()))
  }
}

class ScheduledJob implements Job {
  #timer: ReturnType<typeof setTimeout> | undefined
  /** When the pending timer fires, on the monotonic clock. */
  #dueAt = 0
  #running: Promise<void> | undefined
  #again = false
  #stopped = false
  /** When the next run was asked for (wakeIn) during the run under way. */
  #sooner: number | undefined

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly work: JobWork,
    private readonly log: Logger,
    private readonly forget: () => void,
  ) {}

  wake(): void {
    if (this.#stopped) return
    if (this.#running) {
      this.#again = true
      return
    }
    clearTimeout(this.#timer)
    this.#timer = undefined
    // Settled asynchronously even when the work throws at once, so #running is always set before it is cleared.
    this.#running = this.#run().finally(() => this.#ended())
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    this.forget()
    await this.#running
  }

  wakeIn(ms: number): void {
    const wait = Math.min(Math.max(ms, 0), this.intervalMs)
    if (this.#running) this.#sooner = Math.min(this.#sooner ?? wait, wait)
    else if (!this.#timer || wait < this.#dueAt - performance.now()) this.later(wait)
  }

  /** The next run in `ms`. */
  later(ms: number): void {
    if (this.#stopped) return
    clearTimeout(this.#timer)
    this.#dueAt = performance.now() + ms
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.wake()
    }, Math.max(0, ms))
    // A pending run is no reason to keep the process alive; stop() ends the job with the platform.
    this.#timer.unref?.()
  }

  async #run(): Promise<void> {
    try {
      await this.work()
    } catch (error) {
      this.log.warn(`${this.name} failed`, { error: String((error as Error)?.message ?? error) })
    }
  }

  #ended(): void {
    this.#running = undefined
    const next = this.#sooner ?? this.intervalMs
    this.#sooner = undefined
    if (this.#again) {
      this.#again = false
      this.wake()
    } else this.later(next)
  }
}
