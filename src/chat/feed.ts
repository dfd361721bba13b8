import type { EventBus } from '../events/bus.ts'
import type { Logger } from '../logger.ts'
import type { FeedEvent } from './events.ts'

/**
 * Publishes what the people of a conversation see, in order. Each process's sockets hear it from the bus; between
 * processes an event is a NOTIFY on whichever pooled connection is free, so a conversation's events are published
 * one after the other or a `message` could overtake the last `stream` before it.
 */
export class ChatFeed {
  readonly #queues = new Map<string, Promise<void>>()

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
    const payload = { conversation_id: conversationId, event, ...(exceptUser ? { except_user: exceptUser } : {}), ...(toSocket ? { to_socket: toSocket } : {}) }
    const previous = this.#queues.get(conversationId) ?? Promise.resolve()
    const next = previous
      .then(() => this.events.publish('chat.event', payload))
      .catch((error) => this.log.warn('chat event not published', { conversation_id: conversationId, type: event.type, error: String(error) }))
    this.#queues.set(conversationId, next)
    void next.then(() => {
      if (this.#queues.get(conversationId) === next) this.#queues.delete(conversationId)
    })
    return next
  }
}
