import type { Logger } from '../logger.ts'

/**
 * Runs a sweep at start and then on a timer, one at a time. Every process may sweep: deleting what has expired is
 * the same whoever does it first. Time itself is the injected clock's (inside the sweep); the timer only paces it.
 */
export class Sweeper {
  #timer: ReturnType<typeof setInterval> | undefined
  #running: Promise<unknown> | undefined

  constructor(
    private readonly sweep: () => Promise<unknown>,
    private readonly log: Logger,
  ) {}

  start(intervalMs: number): void {
    if (this.#timer) return
    this.#tick()
    this.#timer = setInterval(() => this.#tick(), intervalMs)
    // A pending sweep is no reason to keep the process alive.
    this.#timer.unref?.()
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    await this.#running
  }

  #tick(): void {
    if (this.#running) return
    this.#running = this.sweep()
      .catch((error) => this.log.warn('sweeping expired artifacts failed', { error: String((error as Error)?.message ?? error) }))
      .finally(() => (this.#running = undefined))
  }
}
