import type { Db } from '../db/schema.ts'
import { run } from '../db/templates.ts'
import { describe, type Grant, type LeasingStore, type Rate, type Take } from './buckets.ts'

const SWEEP_EVERY_MS = 60_000

// What the bucket holds at $4 (ms): its tokens refilled for the time since the last take, never for negative time
// (clocks of processes may disagree), capped at the burst $2; $3 is the refill per second.
const LEVEL = 'least($2::float8, b.tokens + greatest(0, $4::float8 - b.at) / 1000.0 * $3::float8)'
const LEFT = `CASE WHEN ${LEVEL} >= 1 THEN ${LEVEL} - 1 ELSE ${LEVEL} END`
const AT = 'greatest(b.at, $4::bigint)'

// One statement, and the row's lock orders concurrent takes of a key: a new key starts full less the token taken.
const TAKE = `
  INSERT INTO throttle_buckets AS b (key, tokens, at, allowed, full_at)
  VALUES ($1, $2::float8 - 1, $4::bigint, true, $4::bigint + ceil(1000.0 / $3::float8)::bigint)
  ON CONFLICT (key) DO UPDATE SET
    allowed = ${LEVEL} >= 1,
    tokens = ${LEFT},
    at = ${AT},
    full_at = ${AT} + ceil(($2::float8 - ${LEFT}) / $3::float8 * 1000)::bigint
  RETURNING tokens::float8 AS tokens, allowed`

// Up to $5 whole tokens at once (a lease), as many as the bucket holds; the row keeps how many were granted.
const GRANT = `least(floor(${LEVEL}), $5::float8)`
const TAKE_UP_TO = `
  INSERT INTO throttle_buckets AS b (key, tokens, at, allowed, granted, full_at)
  VALUES ($1, $2::float8 - least($2::float8, $5::float8), $4::bigint, true, least($2::float8, $5::float8),
          $4::bigint + ceil(least($2::float8, $5::float8) * 1000.0 / $3::float8)::bigint)
  ON CONFLICT (key) DO UPDATE SET
    allowed = ${GRANT} >= 1,
    granted = ${GRANT},
    tokens = ${LEVEL} - ${GRANT},
    at = ${AT},
    full_at = ${AT} + ceil(($2::float8 - (${LEVEL} - ${GRANT})) / $3::float8 * 1000)::bigint
  RETURNING tokens::float8 AS tokens, granted::float8 AS granted`

const GIVE_LEVEL = LEVEL.replace('b.tokens +', 'b.tokens + 1 +')
// Gives back $5 tokens a lease did not use, never past the burst.
const GIVE_BACK_LEVEL = LEVEL.replace('b.tokens +', 'b.tokens + $5::float8 +')
const GIVE_BACK = `
  UPDATE throttle_buckets AS b SET
    tokens = ${GIVE_BACK_LEVEL},
    at = ${AT},
    full_at = ${AT} + ceil(($2::float8 - ${GIVE_BACK_LEVEL}) / $3::float8 * 1000)::bigint
  WHERE key = $1`
const GIVE = `
  UPDATE throttle_buckets AS b SET
    tokens = ${GIVE_LEVEL},
    at = ${AT},
    full_at = ${AT} + ceil(($2::float8 - ${GIVE_LEVEL}) / $3::float8 * 1000)::bigint
  WHERE key = $1`

// A minute's margin: a process whose clock runs ahead must not delete buckets that are not full yet.
const SWEEP = 'DELETE FROM throttle_buckets WHERE full_at < $1::bigint - 60000'

/**
 * Token buckets in PostgreSQL, for several processes enforcing one limit. A take is one statement: an upsert
 * that refills the bucket for the time passed and takes a token if there is one, under the row's lock, so of N
 * concurrent takes from a bucket holding n tokens exactly min(N, n) are allowed, whichever processes make them.
 * The SQL is written once and sent with its values alone: it is on the path of every throttled request.
 */
export class PostgresBucketStore implements LeasingStore {
  #lastSweep = 0

  constructor(private readonly db: Db) {}

  async take(key: string, rate: Rate, now: number): Promise<Take> {
    this.#sweep(now)
    const [row] = await run<{ tokens: number; allowed: boolean }>(this.db, TAKE, [key, rate.burst, rate.perSecond, now])
    return describe(row!.allowed, Number(row!.tokens), rate)
  }

  async give(key: string, rate: Rate, now: number): Promise<void> {
    // A bucket swept meanwhile is full: nothing to give back to.
    await run(this.db, GIVE, [key, rate.burst, rate.perSecond, now], 'keyed')
  }

  async takeUpTo(key: string, rate: Rate, count: number, now: number): Promise<Grant> {
    this.#sweep(now)
    const [row] = await run<{ tokens: number; granted: number }>(this.db, TAKE_UP_TO, [key, rate.burst, rate.perSecond, now, count])
    return { granted: Number(row!.granted), left: Number(row!.tokens) }
  }

  async giveBack(key: string, rate: Rate, count: number, now: number): Promise<void> {
    await run(this.db, GIVE_BACK, [key, rate.burst, rate.perSecond, now, count], 'keyed')
  }

  /** Deletes buckets that have refilled: a missing row is a full bucket. At most once a minute per process. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return
    this.#lastSweep = now
    // Not awaited, so on the direct path: a query of Kysely's own still waiting for a connection when the store
    // closes would hold the close up.
    void run(this.db, SWEEP, [now]).catch(() => {})
  }
}
