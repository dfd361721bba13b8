import { sql } from 'kysely'
import type { Db } from '../db/schema.ts'
import { describe, type BucketStore, type Rate, type Take } from './buckets.ts'

const SWEEP_EVERY_MS = 60_000

/**
 * Token buckets in PostgreSQL, for several processes enforcing one limit. A take is one statement: an upsert
 * that refills the bucket for the time passed and takes a token if there is one, under the row's lock, so of N
 * concurrent takes from a bucket holding n tokens exactly min(N, n) are allowed, whichever processes make them.
 */
export class PostgresBucketStore implements BucketStore {
  #lastSweep = 0

  constructor(private readonly db: Db) {}

  async take(key: string, rate: Rate, now: number): Promise<Take> {
    this.#sweep(now)
    // `level` is what the bucket holds now: its tokens refilled for the time since the last take (never negative
    // time, should clocks of processes disagree), capped at the burst.
    const level = sql<number>`least(${rate.burst}::float8, b.tokens + greatest(0, ${now}::float8 - b.at) / 1000.0 * ${rate.perSecond}::float8)`
    const { rows } = await sql<{ tokens: number; allowed: boolean }>`
      INSERT INTO throttle_buckets AS b (key, tokens, at, allowed, full_at)
      VALUES (${key}, ${rate.burst - 1}::float8, ${now}::bigint, true, ${fullAt(rate, rate.burst - 1, now)}::bigint)
      ON CONFLICT (key) DO UPDATE SET
        allowed = ${level} >= 1,
        tokens = CASE WHEN ${level} >= 1 THEN ${level} - 1 ELSE ${level} END,
        at = greatest(b.at, ${now}::bigint),
        full_at = greatest(b.at, ${now}::bigint) + ceil((${rate.burst}::float8 - CASE WHEN ${level} >= 1 THEN ${level} - 1 ELSE ${level} END) / ${rate.perSecond}::float8 * 1000)::bigint
      RETURNING tokens::float8 AS tokens, allowed`.execute(this.db)
    const { tokens, allowed } = rows[0]!
    return describe(allowed, Number(tokens), rate)
  }

  async give(key: string, rate: Rate, now: number): Promise<void> {
    const level = sql<number>`least(${rate.burst}::float8, b.tokens + 1 + greatest(0, ${now}::float8 - b.at) / 1000.0 * ${rate.perSecond}::float8)`
    await sql`
      UPDATE throttle_buckets AS b SET
        tokens = ${level},
        at = greatest(b.at, ${now}::bigint),
        full_at = greatest(b.at, ${now}::bigint) + ceil((${rate.burst}::float8 - ${level}) / ${rate.perSecond}::float8 * 1000)::bigint
      WHERE key = ${key}`.execute(this.db)
  }

  /** Deletes buckets that have refilled: a missing row is a full bucket. At most once a minute per process. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return
    this.#lastSweep = now
    void this.db.deleteFrom('throttle_buckets').where('full_at', '<', now).execute().catch(() => {})
  }
}

function fullAt(rate: Rate, tokens: number, now: number): number {
  return now + Math.ceil(((rate.burst - tokens) / rate.perSecond) * 1000)
}
