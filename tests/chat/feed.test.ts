import { expect, test } from 'bun:test'
import type { EventBus, Events } from '../../src/events/bus.ts'
import { ChatFeed } from '../../src/chat/feed.ts'
import { silentLogger } from '../../src/logger.ts'

/** A bus whose publishes complete only when the test lets them, like NOTIFYs on a slow connection. */
function slowBus() {
  const sent: Array<Events['chat.event']> = []
  const pending: Array<() => void> = []
  const bus = {
    async publish(_type: string, payload: Events['chat.event']) {
      sent.push(payload)
      await new Promise<void>((resolve) => pending.push(resolve))
    },
  } as unknown as EventBus
  const release = async () => {
    while (pending.length) pending.shift()!()
    await Bun.sleep(0)
  }
  return { bus, sent, release }
}

test('events of a conversation go out in order; pieces queued behind a send go out together', async () => {
  const { bus, sent, release } = slowBus()
  const feed = new ChatFeed(bus, silentLogger)
  void feed.publish('c1', { type: 'typing' })
  void feed.publish('c1', { type: 'stream', text: 'Echo:', offset: 0 })
  void feed.publish('c1', { type: 'stream', text: ' one', offset: 5 })
  void feed.publish('c1', { type: 'stream', text: ' two', offset: 9 })
  void feed.publish('c1', { type: 'stream_end' })
  void feed.publish('c1', { type: 'stream', text: 'late', offset: 13 })
  await Bun.sleep(0)
  expect(sent.map((p) => p.event.type)).toEqual(['typing'])
  for (let i = 0; i < 5; i++) await release()
  expect(sent.map((p) => p.event)).toEqual([
    { type: 'typing' },
    { type: 'stream', text: 'Echo: one two', offset: 0 },
    { type: 'stream_end' },
    // Not joined across the event before it.
    { type: 'stream', text: 'late', offset: 13 },
  ])
  await feed.drain()
})

test('a piece for one socket, or another conversation, is never merged into others', async () => {
  const { bus, sent, release } = slowBus()
  const feed = new ChatFeed(bus, silentLogger)
  void feed.publish('c1', { type: 'typing' })
  void feed.publish('c1', { type: 'stream', text: 'a', offset: 0 })
  void feed.publish('c1', { type: 'stream', text: 'abc', offset: 0 }, { toSocket: 's1' })
  void feed.publish('c2', { type: 'stream', text: 'b', offset: 1 })
  for (let i = 0; i < 5; i++) await release()
  expect(sent.map((p) => [p.conversation_id, p.event, p.to_socket])).toEqual([
    ['c1', { type: 'typing' }, undefined],
    ['c2', { type: 'stream', text: 'b', offset: 1 }, undefined],
    ['c1', { type: 'stream', text: 'a', offset: 0 }, undefined],
    ['c1', { type: 'stream', text: 'abc', offset: 0 }, 's1'],
  ])
})
