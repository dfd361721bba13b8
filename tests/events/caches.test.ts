import { expect, test } from 'bun:test'
import { Subscribers, type EventBus } from '../../src/events/bus.ts'
import { flushAfterWrites, flushCaches, flushOn } from '../../src/events/caches.ts'
import { Writes } from '../../src/events/writes.ts'
import { MemoryBus } from '../../src/events/memory.ts'
import { silentLogger } from '../../src/logger.ts'

test('a cache is flushed when a write names it, and only then', async () => {
  const bus = new MemoryBus(silentLogger)
  let flushed = 0
  flushOn(bus, 'acl', () => flushed++)
  await flushCaches(bus, 'identities', 'mcp')
  expect(flushed).toBe(0)
  await flushCaches(bus, 'identities', 'acl')
  expect(flushed).toBe(1)
})

test('a cache is flushed when events may have been missed', () => {
  // A bus whose LISTEN connection came back: it tells its subscribers so.
  const subscribers = new Subscribers(silentLogger)
  const bus = { subscribe: subscribers.add.bind(subscribers), onMissed: subscribers.addMissed.bind(subscribers) } as unknown as EventBus
  let flushed = 0
  flushOn(bus, 'mcp', () => flushed++)
  subscribers.missed()
  expect(flushed).toBe(1)
})

test('each kind of write drops the caches it makes stale, and no others', async () => {
  const bus = new MemoryBus(silentLogger)
  const writes = new Writes(undefined as never, { checkOutbound: async () => {} }, silentLogger)
  flushAfterWrites(writes, bus)
  const flushed: string[][] = []
  bus.subscribe('cache.flush', ({ caches }) => void flushed.push([...caches]))
  await writes.announced({ type: 'runner-models', runner: 'openai' })
  await writes.announced({ type: 'credentials', user_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e' })
  await writes.announced({ type: 'secret', scope: 'global' })
  await writes.announced({ type: 'secret', scope: 'company' })
  expect(flushed).toEqual([['runner-models'], ['identities'], ['plugin-secrets']])
})
