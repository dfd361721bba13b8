import { expect, test } from 'bun:test'
import type { Origin } from '../../src/events/bus.ts'
import { MemoryBus } from '../../src/events/memory.ts'
import { silentLogger } from '../../src/logger.ts'

test('subscribers hear an event before publish returns, marked as from here; an unsubscribed one hears nothing more', async () => {
  const bus = new MemoryBus(silentLogger)
  const heard: Array<[string, Origin]> = []
  const stop = bus.subscribe('turn.abort', ({ conversation_id }, origin) => heard.push([conversation_id, origin]))
  await bus.publish('turn.abort', { conversation_id: 'c1' })
  expect(heard).toEqual([['c1', 'here']])
  stop()
  await bus.publish('turn.abort', { conversation_id: 'c2' })
  expect(heard).toEqual([['c1', 'here']])
})

test('a subscriber that throws keeps the event from no other subscriber, nor fails the publisher', async () => {
  const bus = new MemoryBus(silentLogger)
  const heard: string[] = []
  bus.subscribe('cache.flush', () => {
    throw new Error('broken subscriber')
  })
  bus.subscribe('cache.flush', ({ caches }) => heard.push(...caches))
  await bus.publish('cache.flush', { caches: ['acl'] })
  expect(heard).toEqual(['acl'])
})

test('only subscribers of the type hear it', async () => {
  const bus = new MemoryBus(silentLogger)
  const heard: string[] = []
  bus.subscribe('agent.reload', () => heard.push('reload'))
  await bus.publish('agent.changed', { agent_id: 'a' })
  expect(heard).toEqual([])
})

test('events published together are heard one by one, in order, before publishAll returns', async () => {
  const bus = new MemoryBus(silentLogger)
  const heard: string[] = []
  bus.subscribe('turn.abort', ({ conversation_id }) => heard.push(conversation_id))
  const publishing = bus.publishAll('turn.abort', [{ conversation_id: 'c1' }, { conversation_id: 'c2' }, { conversation_id: 'c1' }])
  expect(heard).toEqual(['c1', 'c2', 'c1'])
  await publishing
})
