import { ApiError } from '../errors.ts'

/** What of this process's work is still running, as a drain waits for it to end. */
export interface Running {
  turns: number
  channel_work: number
  background_tasks: number
}

/**
 * A rolling deploy's drain of this process: once begun, it takes no new turns, webhooks or background tasks (each
 * refused with 503 and Retry-After, so a balancer or a platform's retry lands on another process), stops claiming
 * channel work, and finishes what runs. /readyz says it is draining, so the balancer moves traffic away.
 */
export class Drain {
  #since: Date | undefined
  readonly #listeners: Array<() => Promise<void> | void> = []

  constructor(private readonly running: () => Running) {}

  get draining(): boolean {
    return this.#since !== undefined
  }

  /** Runs `listener` when the drain begins (stop claiming queued work, say, while the work claimed ends). */
  onDrain(listener: () => Promise<void> | void): void {
    this.#listeners.push(listener)
  }

  /** Begins the drain, once: a second call only reports. */
  async begin(now: Date): Promise<void> {
    if (this.#since) return
    this.#since = now
    await Promise.all(this.#listeners.map((listener) => listener()))
  }

  /** Refuses new work of the kind named while the process drains. */
  refuse(what: string): void {
    if (!this.#since) return
    throw new ApiError('unavailable', `This process is draining for a restart and takes no new ${what}; try again, another process will answer.`, {
      headers: { 'Retry-After': '1' },
    })
  }

  /** Whether it drains, since when, what still runs, and whether that is nothing. */
  status(): { draining: boolean; since: string | null; running: Running; empty: boolean } {
    const running = this.running()
    return { draining: this.draining, since: this.#since?.toISOString() ?? null, running, empty: Object.values(running).every((n) => n === 0) }
  }
}
