import { expect, test } from 'bun:test'
import type { EventBus, Events } from '../../src/events/bus.ts'
import { ChatFeed } from '../../src/chat/feed.ts'
import { silentLogger } from '../../src/logger.ts'

/** A bus whose publishes complete only when the test lets them, like NOTIFYs on a slow connection; it notes each batch. */
function slowBus() {
  const batches: Array<Array<Events['chat.event']>> = []
  const pending: Array<() => void> = []
  const bus = {
    async publishAll(_type: string, payloads: Array<Events['chat.event']>) {
      batches.push(payloads)
      await new Promise<void>((resolve) => pending.push(resolve))
    },
  } as unknown as EventBus
  const release = async () => {
    while (pending.length) pending.shift()!()
    await Bun.sleep(0)
  }
  return { bus, batches, sent: () => batches.flat(), release }
}

test('what a conversation publishes in one turn of the event loop goes out together, pieces of the answer joined', async () => {
  const { bus, batches, release } = slowBus()
  const feed = new ChatFeed(bus, silentLogger)
  void feed.publish('c1', { type: 'user_message', message_id: 'm1', sender: 'u1', display_name: 'U', text: 'hi', time: '', attachments: [] })
  void feed.publish('c1', { type: 'typing' })
  void feed.publish('c1', { type: 'stream', text: 'Echo:', offset: 0 })
  void feed.publish('c1', { type: 'stream', text: ' one', offset: 5 })
  void feed.publish('c1', { type: 'stream_end' })
  void feed.publish('c1', { type: 'stream', text: 'late', offset: 9 })
  // Nothing before the turn of the event loop is over: whatever else it publishes may still join.
  expect(batches).toEqual([])
  await Bun.sleep(0)
  expect(batches.map((batch) => batch.map((p) => p.event))).toEqual([
    [
      expect.objectContaining({ type: 'user_message' }),
      { type: 'typing' },
      { type: 'stream', text: 'Echo: one', offset: 0 },
      { type: 'stream_end' },
      // Not joined across the event before it.
      { type: 'stream', text: 'late', offset: 9 },
    ],
  ])
  await release()
  await feed.drain()
})

test('events published while a batch goes out wait for it, and then go together; pieces queued meanwhile are joined', async () => {
  const { bus, batches, sent, release } = slowBus()
  const feed = new ChatFeed(bus, silentLogger)
  void feed.publish('c1', { type: 'typing' })
  await Bun.sleep(0)
  expect(batches).toHaveLength(1)
  const first = feed.publish('c1', { type: 'stream', text: 'Echo:', offset: 0 })
  await Bun.sleep(0)
  void feed.publish('c1', { type: 'stream', text: ' one', offset: 5 })
  void feed.publish('c1', { type: 'stream', text: ' two', offset: 9 })
  const ended = feed.publish('c1', { type: 'stream_end' })
  await Bun.sleep(0)
  // Still one: the next waits for the one going out.
  expect(batches).toHaveLength(1)
  await release()
  expect(batches[1]!.map((p) => p.event)).toEqual([{ type: 'stream', text: 'Echo: one two', offset: 0 }, { type: 'stream_end' }])
  await release()
  await Promise.all([first, ended])
  expect(sent().map((p) => p.event.type)).toEqual(['typing', 'stream', 'stream_end'])
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
  expect(sent().map((p) => [p.conversation_id, p.event, p.to_socket])).toEqual([
    ['c1', { type: 'typing' }, undefined],
    ['c1', { type: 'stream', text: 'a', offset: 0 }, undefined],
    ['c1', { type: 'stream', text: 'abc', offset: 0 }, 's1'],
    ['c2', { type: 'stream', text: 'b', offset: 1 }, undefined],
  ])
})
