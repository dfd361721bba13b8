import { expect, test } from 'bun:test'
import { TtlCache } from '../src/cache.ts'
import { manualClock } from '../src/clock.ts'

/** A loader that counts its calls and answers with the count. */
function counter() {
  let calls = 0
  return {
    get calls() {
      return calls
    },
    load: async () => ++calls,
  }
}

test('a value is kept until its time is up, then loaded again', async () => {
  const clock = manualClock()
  const cache = new TtlCache<string, number>(clock, 5_000)
  const source = counter()
  expect(await cache.get('a', source.load)).toBe(1)
  clock.advance(4_999)
  expect(await cache.get('a', source.load)).toBe(1)
  clock.advance(1)
  expect(await cache.get('a', source.load)).toBe(2)
  expect(source.calls).toBe(2)
})

test('keys are kept apart', async () => {
  const cache = new TtlCache<string, string>(manualClock(), 5_000)
  expect(await cache.get('a', async () => 'first')).toBe('first')
  expect(await cache.get('b', async () => 'second')).toBe('second')
  expect(await cache.get('a', async () => 'other')).toBe('first')
})

test('concurrent misses share one load', async () => {
  const cache = new TtlCache<string, number>(manualClock(), 5_000)
  let release!: (value: number) => void
  let calls = 0
  const load = () => {
    calls++
    return new Promise<number>((resolve) => (release = resolve))
  }
  const both = Promise.all([cache.get('a', load), cache.get('a', load)])
  release(7)
  expect(await both).toEqual([7, 7])
  expect(calls).toBe(1)
})

test('a failed load is not kept: the next caller loads again', async () => {
  const cache = new TtlCache<string, number>(manualClock(), 5_000)
  const failing = cache.get('a', async () => {
    throw new Error('the store is down')
  })
  await expect(failing).rejects.toThrow('the store is down')
  expect(await cache.get('a', async () => 3)).toBe(3)
})

test('delete forgets one key, clear every key', async () => {
  const cache = new TtlCache<string, number>(manualClock(), 5_000)
  const source = counter()
  await cache.get('a', source.load)
  await cache.get('b', source.load)
  cache.delete('a')
  expect(await cache.get('a', source.load)).toBe(3)
  expect(await cache.get('b', source.load)).toBe(2)
  cache.clear()
  expect(await cache.get('a', source.load)).toBe(4)
  expect(await cache.get('b', source.load)).toBe(5)
})

test('past its size limit the least recently used key makes room, and only it', async () => {
  const cache = new TtlCache<string, number>(manualClock(), 5_000, 2)
  const source = counter()
  await cache.get('a', source.load)
  await cache.get('b', source.load)
  // Reading a makes b the least recent: c pushes b out, and a stays.
  expect(await cache.get('a', source.load)).toBe(1)
  await cache.get('c', source.load)
  expect(await cache.get('a', source.load)).toBe(1)
  expect(await cache.get('c', source.load)).toBe(3)
  expect(await cache.get('b', source.load)).toBe(4)
  expect(source.calls).toBe(4)
})
