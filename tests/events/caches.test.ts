import { expect, test } from 'bun:test'
import { Subscribers, type EventBus } from '../../src/events/bus.ts'
import { CacheFlusher, flushAfterWrites, flushOn } from '../../src/events/caches.ts'
import { Writes } from '../../src/events/writes.ts'
import { MemoryBus } from '../../src/events/memory.ts'
import { silentLogger } from '../../src/logger.ts'

/** A process alone in its deployment. */
const alone = { id: 'me', alive: async () => [{ id: 'me' }] }

test('a cache is flushed when a write names it, and only then', async () => {
  const bus = new MemoryBus(silentLogger)
  const caches = new CacheFlusher(bus, alone)
  let flushed = 0
  flushOn(bus, 'acl', () => flushed++)
  await caches.flush('identities', 'mcp')
  expect(flushed).toBe(0)
  await caches.flush('identities', 'acl')
  expect(flushed).toBe(1)
})

/**
 * Processes joined as PostgreSQL joins them: each hears its own events at once and the others' a while later
 * (`delayMs`), or never when it is `deaf`.
 */
function deployment(names: string[], delayMs: number, deaf: string[] = []) {
  const subscribers = new Map(names.map((name) => [name, new Subscribers(silentLogger)]))
  const live = { alive: async () => names.map((id) => ({ id })) }
  const bus = (name: string): EventBus =>
    ({
      subscribe: subscribers.get(name)!.add.bind(subscribers.get(name)!),
      onMissed: subscribers.get(name)!.addMissed.bind(subscribers.get(name)!),
      async publish(type: string, payload: unknown) {
        subscribers.get(name)!.deliver(type, payload, 'here')
        for (const [other, theirs] of subscribers) {
          if (other !== name && !deaf.includes(other)) setTimeout(() => theirs.deliver(type, payload, 'elsewhere'), delayMs)
        }
      },
    }) as unknown as EventBus
  return names.map((name) => ({ name, bus: bus(name), processes: { id: name, ...live } }))
}

test('a flush returns once every other live process has dropped its copy, not when the event happens to arrive', async () => {
  const [a, b, c] = deployment(['a', 'b', 'c'], 30)
  const flushed: string[] = []
  for (const p of [a!, b!, c!]) {
    new CacheFlusher(p.bus, p.processes)
    flushOn(p.bus, 'acl', () => flushed.push(p.name))
  }
  const flusher = new CacheFlusher(a!.bus, a!.processes)
  await flusher.flush('acl')
  expect(flushed.sort()).toEqual(['a', 'b', 'c'])
})

test('a process that died since its last beat holds a flush up only for the wait', async () => {
  const [a, b] = deployment(['a', 'b'], 5, ['b'])
  new CacheFlusher(b!.bus, b!.processes)
  const flusher = new CacheFlusher(a!.bus, a!.processes, 200)
  const started = performance.now()
  await flusher.flush('acl')
  expect(performance.now() - started).toBeGreaterThanOrEqual(190)
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
  flushAfterWrites(writes, new CacheFlusher(bus, alone))
  const flushed: string[][] = []
  bus.subscribe('cache.flush', ({ caches }) => void flushed.push([...caches]))
  await writes.announced({ type: 'runner-models', runner: 'openai' })
  await writes.announced({ type: 'credentials', user_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e' })
  await writes.announced({ type: 'secret', scope: 'global' })
  await writes.announced({ type: 'secret', scope: 'company' })
  expect(flushed).toEqual([['runner-models'], ['identities'], ['plugin-secrets']])
})
