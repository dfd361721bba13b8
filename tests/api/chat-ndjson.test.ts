import { describe, expect, test } from 'bun:test'
import { ndjsonTurn } from '../../src/api/chat/ndjson.ts'
import type { StartedTurn } from '../../src/chat/chat.ts'
import type { ChatEvent } from '../../src/chat/events.ts'

/** A turn that says `conversation`, `typing`, then `pieces` stream events and `stream_end`, noting how far it got. */
function fakeTurn(pieces: number) {
  const controller = new AbortController()
  const seen = { yielded: 0, finished: false, stoppedWith: undefined as Error | undefined }
  async function* events(): AsyncGenerator<ChatEvent> {
    try {
      yield { type: 'conversation', conversation_id: 'c1' }
      yield { type: 'typing' }
      for (let i = 0; i < pieces; i++) {
        seen.yielded++
        yield { type: 'stream', text: `w${i} ` }
      }
      yield controller.signal.aborted ? { type: 'aborted', message_id: null } : { type: 'stream_end' }
    } finally {
      seen.finished = true
    }
  }
  const turn: StartedTurn = {
    events: events(),
    stop: (reason) => {
      seen.stoppedWith = reason
      controller.abort(reason)
    },
    signal: controller.signal,
  }
  return { turn, seen }
}

/** No test but the one for it expects the events to fail. */
const unexpected = (error: unknown) => {
  throw new Error(`the events failed: ${String(error)}`)
}

const lines = async (stream: ReadableStream<Uint8Array>) => (await new Response(stream).text()).split('\n')

describe('a turn as NDJSON', () => {
  test('each event is one JSON line, in order, and the stream ends with the turn', async () => {
    const { turn, seen } = fakeTurn(3)
    const read = await lines(ndjsonTurn(turn, unexpected))
    expect(read.at(-1)).toBe('') // every line ends with a newline
    expect(read.slice(0, -1).map((line) => JSON.parse(line))).toEqual([
      { type: 'conversation', conversation_id: 'c1' },
      { type: 'typing' },
      { type: 'stream', text: 'w0 ' },
      { type: 'stream', text: 'w1 ' },
      { type: 'stream', text: 'w2 ' },
      { type: 'stream_end' },
    ])
    expect(seen.finished).toBe(true)
  })

  test('a reader that falls behind holds the answer back, and what comes before it never waits', async () => {
    const { turn, seen } = fakeTurn(50)
    const reader = ndjsonTurn(turn, unexpected).getReader()
    await Bun.sleep(20)
    // Nothing read yet: conversation and typing went by, the answer stopped a piece or two in.
    expect(seen.yielded).toBeGreaterThan(0)
    expect(seen.yielded).toBeLessThan(5)
    const before = seen.yielded
    for (let i = 0; i < 10; i++) await reader.read()
    await Bun.sleep(5)
    expect(seen.yielded).toBeGreaterThan(before)
    expect(seen.finished).toBe(false)
    await reader.cancel()
  })

  test('once the turn is stopped nothing waits for the reader: the turn runs to its end unread', async () => {
    const { turn, seen } = fakeTurn(50)
    const stream = ndjsonTurn(turn, unexpected)
    await Bun.sleep(20)
    expect(seen.finished).toBe(false)
    turn.stop(new Error('aborted by the user'))
    await Bun.sleep(20)
    expect(seen.finished).toBe(true)
    expect(seen.yielded).toBe(50)
    // What was said until then is still there to read, ending with the abort.
    const read = await lines(stream)
    expect(JSON.parse(read.at(-2)!)).toEqual({ type: 'aborted', message_id: null })
  })

  test('a reader that goes away stops the turn, which still runs to its end', async () => {
    const { turn, seen } = fakeTurn(50)
    const reader = ndjsonTurn(turn, unexpected).getReader()
    await reader.read()
    await reader.cancel()
    expect(seen.stoppedWith?.message).toBe('the client went away')
    await Bun.sleep(20)
    expect(seen.finished).toBe(true)
  })

  test('events that fail are reported, and the stream breaks off instead of ending as if whole', async () => {
    async function* events(): AsyncGenerator<ChatEvent> {
      yield { type: 'conversation', conversation_id: 'c1' }
      throw new Error('a bug')
    }
    const reported: unknown[] = []
    const stream = ndjsonTurn({ events: events(), stop: () => {}, signal: new AbortController().signal }, (error) => reported.push(error))
    await expect(lines(stream)).rejects.toThrow('a bug')
    await Bun.sleep(5)
    expect(reported.map(String)).toEqual(['Error: a bug'])
  })
})
