import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Store } from '../../src/db/connect.ts'
import { MemoryBucketStore, type BucketStore } from '../../src/throttle/buckets.ts'
import { PostgresBucketStore } from '../../src/throttle/postgres.ts'
import { freshStore } from '../helpers/database.ts'

// The shared store runs on both databases (on PGlite it serves the one process like any table); CI runs this file
// on each. The in-memory store answers the same contract, so each case runs on both stores.
let store: Store
beforeAll(async () => {
  store = await freshStore()
})
afterAll(() => store.close())

const rate = { burst: 10, perSecond: 2 }
const NOW = Date.parse('2026-11-22T09:00:00Z')
const stores: Array<[string, () => BucketStore]> = [
  ['shared', () => new PostgresBucketStore(store.db)],
  ['memory', () => new MemoryBucketStore()],
]

for (const [name, make] of stores) {
  test(`${name}: of 50 concurrent takes from a bucket of 10, exactly 10 are allowed`, async () => {
    const buckets = make()
    const key = `concurrent-${name}-${crypto.randomUUID()}`
    const takes = await Promise.all(Array.from({ length: 50 }, () => buckets.take(key, rate, NOW)))
    expect(takes.filter((t) => t.allowed)).toHaveLength(10)
    const refused = takes.find((t) => !t.allowed)!
    expect(refused.retryAfter).toBe(1)
    expect(refused.remaining).toBe(0)
  })

  test(`${name}: the bucket refills with time, never past its burst, and a give puts one token back`, async () => {
    const buckets = make()
    const key = `refill-${name}-${crypto.randomUUID()}`
    for (let i = 0; i < 10; i++) expect((await buckets.take(key, rate, NOW)).allowed).toBe(true)
    expect((await buckets.take(key, rate, NOW)).allowed).toBe(false)
    // Two tokens a second: one second later, two takes pass and the third does not.
    expect((await buckets.take(key, rate, NOW + 1000)).allowed).toBe(true)
    expect((await buckets.take(key, rate, NOW + 1000)).allowed).toBe(true)
    const third = await buckets.take(key, rate, NOW + 1000)
    expect(third.allowed).toBe(false)
    expect(third.retryAfter).toBe(1)
    await buckets.give(key, rate, NOW + 1000)
    expect((await buckets.take(key, rate, NOW + 1000)).allowed).toBe(true)
    // An hour later it holds its burst, not 7200 tokens.
    const later = await buckets.take(key, rate, NOW + 3_600_000)
    expect(later.remaining).toBe(9)
  })

  test(`${name}: a take stamped earlier than the bucket's last (another process's clock, a slow request) refills nothing`, async () => {
    const buckets = make()
    const key = `skew-${name}-${crypto.randomUUID()}`
    // Hours after the other cases' times, so that no sweep of theirs (they run unawaited) takes this bucket away.
    const later = NOW + 10 * 3_600_000
    for (let i = 0; i < 10; i++) await buckets.take(key, rate, later + 5_000)
    // Five seconds "back": were the time difference taken as is, the bucket would lose or gain ten tokens.
    expect((await buckets.take(key, rate, later)).allowed).toBe(false)
    expect((await buckets.take(key, rate, later + 5_500)).allowed).toBe(true)
  })

  test(`${name}: buckets are separate by key`, async () => {
    const buckets = make()
    const [one, two] = [`one-${crypto.randomUUID()}`, `two-${crypto.randomUUID()}`]
    for (let i = 0; i < 10; i++) await buckets.take(one, rate, NOW)
    expect((await buckets.take(one, rate, NOW)).allowed).toBe(false)
    expect((await buckets.take(two, rate, NOW)).allowed).toBe(true)
  })
}

test('shared: two stores on one database (two processes) draw from one bucket', async () => {
  const [a, b] = [new PostgresBucketStore(store.db), new PostgresBucketStore(store.db)]
  const key = `two-processes-${crypto.randomUUID()}`
  const takes = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).take(key, rate, NOW)))
  expect(takes.filter((t) => t.allowed)).toHaveLength(10)
})
