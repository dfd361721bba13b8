import type { Clock } from '../clock.ts'

export type BreakerState = 'closed' | 'open' | 'half-open'

export interface BreakerSettings {
  /** Consecutive upstream failures that open the breaker. */
  failures: number
  /** How long it stays open before one probe is let through. */
  cooldownMs: number
}

/** What the breaker endpoint shows of one breaker. */
export interface BreakerStatus {
  state: BreakerState
  failures: number
  /** When it opened, if it is open or half-open. */
  opened_at: string | null
  /** When the next probe is allowed, while it is open. */
  retry_at: string | null
}

/** Thrown instead of calling an upstream whose breaker is open: the caller learns at once, the upstream rests. */
export class BreakerOpen extends Error {
  constructor(readonly retryInMs: number) {
    super(`The upstream is failing; calls are held back for ${Math.ceil(retryInMs / 1000)} s.`)
    this.name = 'BreakerOpen'
  }
}

/**
 * A circuit breaker for one upstream. Closed: calls pass, consecutive failures are counted. Open: calls fail at once
 * until the cool-down ends. Half-open: exactly one call goes through as a probe; its success closes the breaker,
 * its failure opens it again for another cool-down. Calls arriving while the probe runs fail at once.
 */
export class Breaker {
  #failures = 0
  #openedAt: number | undefined
  #probing = false

  constructor(
    private readonly settings: BreakerSettings,
    private readonly clock: Clock,
  ) {}

  get state(): BreakerState {
    if (this.#openedAt === undefined) return 'closed'
    return this.#probing || this.clock.now() >= this.#openedAt + this.settings.cooldownMs ? 'half-open' : 'open'
  }

  /** Runs `call` if the breaker lets it through, and learns from how it ends. `isFailure` tells upstream trouble from a refused request. */
  async run<T>(call: () => Promise<T>, isFailure: (error: unknown) => boolean): Promise<T> {
    const probe = this.#admit()
    try {
      const result = await call()
      this.#succeeded()
      return result
    } catch (error) {
      if (isFailure(error)) this.#failed()
      else if (probe) this.#succeeded() // the upstream answered, so it is up
      throw error
    } finally {
      if (probe) this.#probing = false
    }
  }

  status(): BreakerStatus {
    const state = this.state
    const openedAt = this.#openedAt
    return {
      state,
      failures: this.#failures,
      opened_at: openedAt === undefined ? null : new Date(openedAt).toISOString(),
      retry_at: state === 'open' && openedAt !== undefined ? new Date(openedAt + this.settings.cooldownMs).toISOString() : null,
    }
  }

  /** Whether this call is the half-open probe; throws BreakerOpen when the call may not go. */
  #admit(): boolean {
    if (this.#openedAt === undefined) return false
    const retryAt = this.#openedAt + this.settings.cooldownMs
    if (this.#probing || this.clock.now() < retryAt) throw new BreakerOpen(Math.max(retryAt - this.clock.now(), 0) || this.settings.cooldownMs)
    this.#probing = true
    return true
  }

  #succeeded(): void {
    this.#failures = 0
    this.#openedAt = undefined
  }

  #failed(): void {
    this.#failures += 1
    // A failed probe opens it again at once; otherwise it takes the configured run of failures.
    if (this.#openedAt !== undefined || this.#failures >= this.settings.failures) this.#openedAt = this.clock.now()
  }
}
