import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Store } from '../../src/db/connect.ts'
import { MemoryBucketStore, type Grant, type LeasingStore, type Rate } from '../../src/throttle/buckets.ts'
import { LEASE_MS, LeasedBucketStore, leaseSize } from '../../src/throttle/leased.ts'
import { PostgresBucketStore } from '../../src/throttle/postgres.ts'
import { freshStore } from '../helpers/database.ts'

// Leases of the shared buckets: each process serves a slice of a user's bucket from memory. CI runs this file on
// both databases; "three processes" are three leased stores, each with its own shared store on the one database.
let store: Store
beforeAll(async () => {
  store = await freshStore()
})
afterAll(() => store.close())

const NOW = Date.parse('2026-11-27T09:00:00Z')
const key = () => `api:user:${crypto.randomUUID()}`

/** A shared store that counts what it is asked: the statements the database would see. */
function counted(shared: LeasingStore) {
  const calls = { leases: 0, givenBack: [] as number[] }
  const store: LeasingStore = {
    take: (k, rate, now) => shared.take(k, rate, now),
    give: (k, rate, now) => shared.give(k, rate, now),
    takeUpTo: (k, rate, count, now): Promise<Grant> => {
      calls.leases++
      return shared.takeUpTo(k, rate, count, now)
    },
    giveBack: (k, rate, count, now) => {
      calls.givenBack.push(count)
      return shared.giveBack(k, rate, count, now)
    },
  }
  return { store, calls }
}

test('a lease is a tenth of a second of refill, at most a tenth of the burst, at least one token', () => {
  expect(leaseSize({ burst: 300, perSecond: 20 })).toBe(2)
  expect(leaseSize({ burst: 1_000_000, perSecond: 100_000 })).toBe(10_000)
  expect(leaseSize({ burst: 50, perSecond: 100_000 })).toBe(5)
  expect(leaseSize({ burst: 5, perSecond: 1 })).toBe(1)
})

test('a busy user costs the store one statement per lease, not one per request', async () => {
  const rate = { burst: 10_000, perSecond: 1_000 }
  const { store: shared, calls } = counted(new PostgresBucketStore(store.db))
  const leased = new LeasedBucketStore(shared)
  const k = key()
  const takes = await Promise.all(Array.from({ length: 250 }, () => leased.take(k, rate, NOW)))
  expect(takes.every((t) => t.allowed)).toBe(true)
  // 100 tokens a lease: 250 requests, three statements, concurrent requests waiting for the lease under way.
  expect(calls.leases).toBe(3)
})

test('three processes serving one user from a bucket of 30 allow exactly 30 of 300 concurrent requests', async () => {
  const rate = { burst: 30, perSecond: 20 }
  const processes = Array.from({ length: 3 }, () => new LeasedBucketStore(new PostgresBucketStore(store.db)))
  const k = key()
  const takes = await Promise.all(Array.from({ length: 300 }, (_, i) => processes[i % 3]!.take(k, rate, NOW)))
  expect(takes.filter((t) => t.allowed)).toHaveLength(30)
  const refused = takes.find((t) => !t.allowed)!
  expect(refused.retryAfter).toBeGreaterThanOrEqual(1)
})

test('over three seconds, three processes together never allow more than the burst and the refill', async () => {
  const rate: Rate = { burst: 40, perSecond: 20 }
  const processes = Array.from({ length: 3 }, () => new LeasedBucketStore(new PostgresBucketStore(store.db)))
  const k = key()
  let allowed = 0
  // Every 50 ms each process gets a burst of requests, more than the bucket could ever serve.
  for (let at = 0; at <= 3_000; at += 50) {
    const takes = await Promise.all(processes.flatMap((p) => Array.from({ length: 4 }, () => p.take(k, rate, NOW + 10_000 + at))))
    allowed += takes.filter((t) => t.allowed).length
  }
  // The bucket: 40 at the start, 20 a second for three seconds. Leases only move tokens; they never make any.
  expect(allowed).toBeLessThanOrEqual(40 + 20 * 3)
  // And they do not starve the user either: leases left unused go back within two lease times.
  expect(allowed).toBeGreaterThanOrEqual(40 + 20 * 3 - 3 * leaseSize(rate) * 2)
})

test('what a lease did not use goes back to the shared bucket once it runs out', async () => {
  const rate = { burst: 100, perSecond: 20 }
  const memory = new MemoryBucketStore()
  const { store: shared, calls } = counted(memory)
  const leased = new LeasedBucketStore(shared)
  const k = key()
  expect((await leased.take(k, rate, NOW)).allowed).toBe(true)
  // The lease took 2, one is left in this process; someone elsewhere empties the shared bucket.
  expect(await memory.takeUpTo(k, rate, 1_000, NOW)).toEqual({ granted: 98, left: 0 })
  // A lease time later: 20 refilled, and the token this process held is back.
  await leased.take(key(), rate, NOW + LEASE_MS)
  expect(calls.givenBack).toEqual([1])
  expect((await memory.peek(k, rate, NOW + LEASE_MS)).remaining).toBe(21)
})

test('a refused lease is remembered until the bucket could hold a token again: no statement per refused request', async () => {
  const rate = { burst: 2, perSecond: 1 }
  const { store: shared, calls } = counted(new MemoryBucketStore())
  const leased = new LeasedBucketStore(shared)
  const k = key()
  for (let i = 0; i < 2; i++) expect((await leased.take(k, rate, NOW)).allowed).toBe(true)
  const leasesBefore = calls.leases
  const refusals = await Promise.all(Array.from({ length: 20 }, () => leased.take(k, rate, NOW + 100)))
  expect(refusals.every((t) => !t.allowed && t.retryAfter === 1)).toBe(true)
  expect(calls.leases - leasesBefore).toBe(1)
  // Once the refusal's time is up, the next request asks again, and the refilled token is there.
  expect((await leased.take(k, rate, NOW + 1_200)).allowed).toBe(true)
})
