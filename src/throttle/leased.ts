import { describe, type BucketStore, type LeasingStore, type Rate, type Take } from './buckets.ts'

/** How long a process keeps tokens it leased before it gives back those it did not use. */
export const LEASE_MS = 1_000

/**
 * How many tokens one lease takes: a tenth of a second of the bucket's refill (so a busy user's process goes back
 * to the store about ten times a second, not once per request), at most a tenth of its burst (so the tokens that
 * processes hold unused at one time keep most of the burst for the others), and at least one.
 */
export function leaseSize(rate: Rate): number {
  return Math.max(1, Math.min(Math.floor(rate.burst / 10), Math.ceil(rate.perSecond / 10)))
}

interface Lease {
  /** Tokens taken from the shared bucket and not spent yet. */
  tokens: number
  /** When what is left goes back to the shared bucket. */
  until: number
  /** What the shared bucket held after the lease was taken, for the RateLimit header. */
  left: number
  rate: Rate
}

/**
 * A shared bucket store kept off the hot path: each process takes a user's tokens from the shared store a slice at
 * a time (leaseSize) and serves requests from that slice in memory, so the store sees one statement per lease, not
 * one per request. Tokens are spent only once taken from the shared bucket, so all processes together never allow
 * more than the bucket holds; what a process took and did not use within LEASE_MS goes back (a second statement,
 * only then), so the others can have it. A refused lease is remembered until the bucket could hold a token again.
 * For limits that must be exact per request (sign-in's reserve-then-verify), use the shared store itself.
 */
export class LeasedBucketStore implements BucketStore {
  readonly #leases = new Map<string, Lease>()
  /** The lease being taken for each key: concurrent requests wait for it rather than each asking the store. */
  readonly #taking = new Map<string, Promise<void>>()
  /** Keys refused by the shared store, until when. */
  readonly #refused = new Map<string, { until: number; left: number }>()
  #lastSweep = 0

  constructor(private readonly shared: LeasingStore) {}

  async take(key: string, rate: Rate, now: number): Promise<Take> {
    this.#sweep(now)
    for (;;) {
      const lease = this.#current(key, now)
      if (lease && lease.tokens >= 1) {
        lease.tokens -= 1
        return describe(true, lease.left + lease.tokens, rate)
      }
      const refused = this.#refused.get(key)
      if (refused && now < refused.until) return describe(false, refused.left, rate)
      const taking = this.#taking.get(key)
      if (taking) {
        await taking
        continue
      }
      const lease$ = this.#lease(key, rate, now)
      this.#taking.set(key, lease$)
      try {
        await lease$
      } finally {
        this.#taking.delete(key)
      }
      const granted = this.#leases.get(key)
      if (!granted || granted.tokens < 1) return describe(false, this.#refused.get(key)?.left ?? 0, rate)
    }
  }

  /** Puts a token back into this process's lease, or into the shared bucket when it holds none. */
  async give(key: string, rate: Rate, now: number): Promise<void> {
    const lease = this.#current(key, now)
    if (lease) lease.tokens += 1
    else await this.shared.give(key, rate, now)
  }

  async #lease(key: string, rate: Rate, now: number): Promise<void> {
    const { granted, left } = await this.shared.takeUpTo(key, rate, leaseSize(rate), now)
    if (granted < 1) {
      // Until the bucket holds a whole token again, to the millisecond (Retry-After rounds up to whole seconds).
      this.#refused.set(key, { until: now + Math.ceil(((1 - left) / rate.perSecond) * 1000), left })
      this.#leases.delete(key)
      return
    }
    this.#refused.delete(key)
    this.#leases.set(key, { tokens: granted, until: now + LEASE_MS, left, rate })
  }

  /**
   * Ends the leases and refusals of keys nobody asked for since they ran out, giving back what they held: at most
   * once per LEASE_MS, so a lease is back in the shared bucket within two of them.
   */
  #sweep(now: number): void {
    if (now - this.#lastSweep < LEASE_MS) return
    this.#lastSweep = now
    for (const key of this.#leases.keys()) this.#current(key, now)
    for (const [key, { until }] of this.#refused) if (now >= until) this.#refused.delete(key)
  }

  /** The key's lease while it lasts; an expired one gives back what it did not use, without holding up the caller. */
  #current(key: string, now: number): Lease | undefined {
    const lease = this.#leases.get(key)
    if (!lease || now < lease.until) return lease
    this.#leases.delete(key)
    const unused = Math.floor(lease.tokens)
    if (unused > 0) void this.shared.giveBack(key, lease.rate, unused, now).catch(() => {})
    return undefined
  }
}
