import { expect, test } from 'bun:test'
import { Subscribers, type EventBus } from '../../src/events/bus.ts'
import { flushCaches, flushOn } from '../../src/events/caches.ts'
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
