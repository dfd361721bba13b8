/** How fast a bucket refills and how much it holds: `burst` requests at once, then `perSecond`. */
export interface Rate {
  burst: number
  perSecond: number
}

export interface Take {
  allowed: boolean
  /** Whole requests left after this one. */
  remaining: number
  /** Seconds until a request would be allowed again (0 when allowed). */
  retryAfter: number
  /** Seconds until the bucket is full again. */
  reset: number
}

/**
 * Token buckets by key. In memory for one process; a shared store (PostgreSQL or Redis) implements the same
 * interface when several processes serve one deployment. Each call must be atomic per key: of N concurrent takes
 * from a bucket holding n tokens, exactly min(N, n) are allowed.
 */
export interface BucketStore {
  /** Takes one token if there is one. */
  take(key: string, rate: Rate, now: number): Promise<Take>
  /**
   * Puts back one token an allowed take reserved, for limits that only some outcomes consume (a sign-in reserves
   * before it verifies and gives back on success). Never fills a bucket beyond its burst.
   */
  give(key: string, rate: Rate, now: number): Promise<void>
}

/** What a lease got: whole tokens granted (0 when the bucket held less than one), and what the bucket has left. */
export interface Grant {
  granted: number
  left: number
}

/** A bucket store that can hand out several tokens at once, and take back those a lease did not use. */
export interface LeasingStore extends BucketStore {
  /** Takes up to `count` whole tokens, as many as the bucket holds, in one step. */
  takeUpTo(key: string, rate: Rate, count: number, now: number): Promise<Grant>
  /** Puts back unused tokens of a lease, never filling the bucket beyond its burst. */
  giveBack(key: string, rate: Rate, count: number, now: number): Promise<void>
}

export function describe(allowed: boolean, left: number, rate: Rate): Take {
  return {
    allowed,
    remaining: Math.floor(left),
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - left) / rate.perSecond)),
    reset: Math.ceil((rate.burst - left) / rate.perSecond),
  }
}

interface Bucket {
  tokens: number
  at: number
  // One store may hold buckets of several rates (sign-in: per address and per account); the sweep needs each one's.
  rate: Rate
}

export class MemoryBucketStore implements LeasingStore {
  readonly #buckets = new Map<string, Bucket>()
  #lastSweep = 0

  constructor(private readonly maxKeys = 100_000) {}

  async take(key: string, rate: Rate, now: number): Promise<Take> {
    const tokens = this.#tokens(key, rate, now)
    const allowed = tokens >= 1
    const left = allowed ? tokens - 1 : tokens
    this.#buckets.set(key, { tokens: left, at: this.#latest(key, now), rate })
    if (this.#buckets.size > this.maxKeys) this.#sweep(now)
    return describe(allowed, left, rate)
  }

  async give(key: string, rate: Rate, now: number): Promise<void> {
    this.#buckets.set(key, { tokens: Math.min(rate.burst, this.#tokens(key, rate, now) + 1), at: this.#latest(key, now), rate })
  }

  async takeUpTo(key: string, rate: Rate, count: number, now: number): Promise<Grant> {
    const tokens = this.#tokens(key, rate, now)
    const granted = Math.min(Math.floor(tokens), count)
    this.#buckets.set(key, { tokens: tokens - granted, at: this.#latest(key, now), rate })
    return { granted, left: tokens - granted }
  }

  async giveBack(key: string, rate: Rate, count: number, now: number): Promise<void> {
    this.#buckets.set(key, { tokens: Math.min(rate.burst, this.#tokens(key, rate, now) + count), at: this.#latest(key, now), rate })
  }

  /** Says whether a take would succeed, without taking: for looking at a bucket, not for deciding on it. */
  async peek(key: string, rate: Rate, now: number): Promise<Take> {
    const tokens = this.#tokens(key, rate, now)
    return describe(tokens >= 1, tokens, rate)
  }

  #tokens(key: string, rate: Rate, now: number): number {
    const bucket = this.#buckets.get(key)
    // Concurrent requests may bring times out of order: an earlier time than the bucket's refills nothing.
    return bucket ? Math.min(rate.burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * rate.perSecond) : rate.burst
  }

  #latest(key: string, now: number): number {
    return Math.max(this.#buckets.get(key)?.at ?? now, now)
  }

  /** Forgets buckets that have refilled: they hold nothing a fresh bucket would not. Bounded to once a second. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < 1000) return
    this.#lastSweep = now
    for (const [key, { tokens, at, rate }] of this.#buckets) {
      if (tokens + ((now - at) / 1000) * rate.perSecond >= rate.burst) this.#buckets.delete(key)
    }
  }
}
