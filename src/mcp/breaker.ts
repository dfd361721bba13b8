import type { Clock } from '../clock.ts'

export type BreakerState = 'closed' | 'open' | 'half-open'

export interface BreakerSettings {
  /** Consecutive upstream failures that open the breaker. */
  failures: number
  /** How long it stays open before one probe is let through; also how long a probe may take before another may go. */
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

/**
 * How a call ended, for the breaker: the upstream failed; it answered (a result, or an error of its own); or the
 * call tells nothing about the upstream (the caller cancelled it).
 */
export type Outcome = 'failure' | 'success' | 'neutral'

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
 * its failure opens it again for another cool-down. Calls arriving while the probe runs fail at once; a probe that
 * has not ended within a cool-down is given up, and the next call probes instead.
 *
 * Each opening or closing starts a new generation; a call admitted in an earlier one does not change the state
 * when it ends (a slow success from before the breaker opened does not close it).
 */
export class Breaker {
  #failures = 0
  #openedAt: number | undefined
  #generation = 0
  /** The running probe, and when it started. */
  #probe: { id: number; startedAt: number } | undefined
  #probes = 0

  constructor(
    private readonly settings: BreakerSettings,
    private readonly clock: Clock,
  ) {}

  get state(): BreakerState {
    if (this.#openedAt === undefined) return 'closed'
    return this.#probe || this.clock.now() >= this.#openedAt + this.settings.cooldownMs ? 'half-open' : 'open'
  }

  /** Runs `call` if the breaker lets it through, and learns from how it ends. */
  async run<T>(call: () => Promise<T>, outcome: (error: unknown) => Outcome): Promise<T> {
    const probe = this.#admit()
    const generation = this.#generation
    const settle = (result: Outcome) => {
      if (probe !== undefined && this.#probe?.id !== probe) return // a probe given up on
      if (probe !== undefined) this.#probe = undefined
      if (probe === undefined && generation !== this.#generation) return
      if (result === 'success') this.#succeeded()
      else if (result === 'failure') this.#failed()
    }
    try {
      const result = await call()
      settle('success')
      return result
    } catch (error) {
      settle(outcome(error))
      throw error
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

  /** The probe id when this call is the half-open probe; throws BreakerOpen when the call may not go. */
  #admit(): number | undefined {
    if (this.#openedAt === undefined) return undefined
    const now = this.clock.now()
    const retryAt = this.#openedAt + this.settings.cooldownMs
    if (now < retryAt) throw new BreakerOpen(retryAt - now)
    if (this.#probe && now - this.#probe.startedAt < this.settings.cooldownMs) throw new BreakerOpen(this.#probe.startedAt + this.settings.cooldownMs - now)
    this.#probe = { id: ++this.#probes, startedAt: now }
    return this.#probe.id
  }

  #succeeded(): void {
    if (this.#openedAt !== undefined) this.#generation += 1
    this.#failures = 0
    this.#openedAt = undefined
  }

  #failed(): void {
    this.#failures += 1
    // A failed probe opens it again at once; otherwise it takes the configured run of failures.
    if (this.#openedAt !== undefined || this.#failures >= this.settings.failures) {
      this.#openedAt = this.clock.now()
      this.#generation += 1
    }
  }
}
