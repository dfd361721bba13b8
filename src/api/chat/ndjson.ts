import type { StartedTurn } from '../../chat/chat.ts'
import type { ChatEvent } from '../../chat/events.ts'

const encoder = new TextEncoder()

/** Said before the answer streams: nothing is held back for a slow reader then, and the turn goes on at once. */
const EARLY = new Set<ChatEvent['type']>(['conversation', 'typing', 'notice'])

/**
 * A turn's events as NDJSON, one per line, in one stream the server reads straight from (no second stream to pipe
 * through: each line reaches the socket a few promise hops sooner). While the answer streams, a reader that falls
 * behind holds the turn back; before it streams, and once the turn is stopped, nothing waits for the reader, so one
 * that stopped reading cannot keep the turn (and its conversation's lock, which every process honours) from
 * settling. A reader that goes away stops the turn as an abort would, and the turn still runs to its end. Should the
 * events themselves fail (the turn reports its own failures as events, so this is a bug), `failed` hears of it and
 * the stream breaks off rather than end as if whole.
 */
export function ndjsonTurn(turn: StartedTurn, failed: (error: unknown) => void): ReadableStream<Uint8Array> {
  let cancelled = false
  let pulled: (() => void) | undefined
  const stopped = new Promise<void>((resolve) => turn.signal.addEventListener('abort', () => resolve(), { once: true }))
  const wanted = () => new Promise<void>((resolve) => (pulled = resolve))
  return new ReadableStream<Uint8Array>({
    start(controller) {
      void (async () => {
        for await (const event of turn.events) {
          if (cancelled) continue
          controller.enqueue(encoder.encode(`${JSON.stringify(event)}\n`))
          if (EARLY.has(event.type) || turn.signal.aborted) continue
          if ((controller.desiredSize ?? 1) <= 0) await Promise.race([wanted(), stopped])
        }
        if (!cancelled) controller.close()
      })().catch((error: unknown) => {
        failed(error)
        if (!cancelled) controller.error(error)
      })
    },
    pull() {
      pulled?.()
    },
    cancel() {
      cancelled = true
      pulled?.()
      turn.stop(new Error('the client went away'))
    },
  })
}
