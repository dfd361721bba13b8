import type { EventBus, Events } from '../events/bus.ts'
import type { Logger } from '../logger.ts'
import type { FeedEvent } from './events.ts'

type Payload = Events['chat.event']

/**
 * Publishes what the people of a conversation see, in order. Each process's sockets hear it from the bus; between
 * processes an event is a NOTIFY on whichever pooled connection is free, so a conversation's events are published
 * one after the other or a `message` could overtake the last `stream` before it. Pieces of an answer that arrive
 * while the one before is still going out are sent together: one NOTIFY per send, not one per token.
 */
export class ChatFeed {
  readonly #queues = new Map<string, Promise<void>>()
  /** Per conversation, the stream piece queued and not yet sent, which later pieces may join. */
  readonly #unsent = new Map<string, { text: string; offset: number }>()

  constructor(
    private readonly events: EventBus,
    private readonly log: Logger,
  ) {}

  /** Resolves once every event published so far has gone out (the platform is stopping). */
  async drain(): Promise<void> {
    while (this.#queues.size > 0) await Promise.all(this.#queues.values())
  }

  /** Returns once the event is published; a failure is logged, since the turn goes on regardless. */
  publish(conversationId: string, event: FeedEvent, audience: { exceptUser?: string; toSocket?: string } = {}): Promise<void> {
    const { exceptUser, toSocket } = audience
    const extra = { ...(exceptUser ? { except_user: exceptUser } : {}), ...(toSocket ? { to_socket: toSocket } : {}) }
    if (event.type === 'stream' && !toSocket && !exceptUser) {
      const unsent = this.#unsent.get(conversationId)
      if (unsent && unsent.offset + unsent.text.length === event.offset) {
        unsent.text += event.text
        return this.#queues.get(conversationId)!
      }
      const piece = { text: event.text, offset: event.offset }
      this.#unsent.set(conversationId, piece)
      return this.#enqueue(conversationId, event.type, () => {
        if (this.#unsent.get(conversationId) === piece) this.#unsent.delete(conversationId)
        return { conversation_id: conversationId, event: { type: 'stream', ...piece } }
      })
    }
    // Whatever comes after a piece is sent after it: later pieces may not join it across this event.
    this.#unsent.delete(conversationId)
    return this.#enqueue(conversationId, event.type, () => ({ conversation_id: conversationId, event, ...extra }))
  }

  /** Queues a publish whose payload is made when its turn comes (so a stream piece carries what joined it). */
  #enqueue(conversationId: string, type: string, payload: () => Payload): Promise<void> {
    const previous = this.#queues.get(conversationId) ?? Promise.resolve()
    const next = previous
      .then(() => this.events.publish('chat.event', payload()))
      .catch((error) => this.log.warn('chat event not published', { conversation_id: conversationId, type, error: String(error) }))
    this.#queues.set(conversationId, next)
    void next.then(() => {
      if (this.#queues.get(conversationId) === next) this.#queues.delete(conversationId)
    })
    return next
  }
}
