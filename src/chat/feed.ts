import type { EventBus, Events } from '../events/bus.ts'
import type { Logger } from '../logger.ts'
import type { FeedEvent } from './events.ts'

type Payload = Events['chat.event']

/** Events of one conversation that go out together, and when they have. */
interface Batch {
  /** Each made when the batch goes, so that a stream piece carries what joined it meanwhile. */
  payloads: Array<() => Payload>
  types: string[]
  sent: Promise<void>
}

/** A stream piece not yet sent, which later pieces may join. */
interface Piece {
  text: string
  offset: number
  batch: Batch
}

/**
 * Publishes what the people of a conversation see, in order. Each process's sockets hear it from the bus; between
 * processes, events go out as NOTIFYs, one batch of a conversation after the other, or a `message` could overtake
 * the last `stream` before it. A batch holds what the conversation published in one turn of the event loop (a
 * turn's user message and its `typing`), and whatever was published while the batch before it was going out: one
 * NOTIFY statement each, not one per event. Pieces of an answer published meanwhile are joined into one event.
 */
export class ChatFeed {
  /** Per conversation, the batch still taking events (not yet going out), and the last one. */
  readonly #queues = new Map<string, { open?: Batch; last: Promise<void> }>()
  readonly #unsent = new Map<string, Piece>()

  constructor(
    private readonly events: EventBus,
    private readonly log: Logger,
  ) {}

  /** Resolves once every event published so far has gone out (the platform is stopping). */
  async drain(): Promise<void> {
    while (this.#queues.size > 0) await Promise.all([...this.#queues.values()].map((queue) => queue.last))
  }

  /** Returns once the event is published; a failure is logged, since the turn goes on regardless. */
  publish(conversationId: string, event: FeedEvent, audience: { exceptUser?: string; toSocket?: string } = {}): Promise<void> {
    const { exceptUser, toSocket } = audience
    const extra = { ...(exceptUser ? { except_user: exceptUser } : {}), ...(toSocket ? { to_socket: toSocket } : {}) }
    if (event.type === 'stream' && !toSocket && !exceptUser) {
      const unsent = this.#unsent.get(conversationId)
      if (unsent && unsent.offset + unsent.text.length === event.offset) {
        unsent.text += event.text
        return unsent.batch.sent
      }
      const batch = this.#batchOf(conversationId)
      const piece: Piece = { text: event.text, offset: event.offset, batch }
      this.#unsent.set(conversationId, piece)
      return this.#add(batch, event.type, () => {
        if (this.#unsent.get(conversationId) === piece) this.#unsent.delete(conversationId)
        return { conversation_id: conversationId, event: { type: 'stream', text: piece.text, offset: piece.offset } }
      })
    }
    // Whatever comes after a piece is sent after it: later pieces may not join it across this event.
    this.#unsent.delete(conversationId)
    return this.#add(this.#batchOf(conversationId), event.type, () => ({ conversation_id: conversationId, event, ...extra }))
  }

  #add(batch: Batch, type: string, payload: () => Payload): Promise<void> {
    batch.payloads.push(payload)
    batch.types.push(type)
    return batch.sent
  }

  /**
   * The conversation's batch that still takes events: a new one goes out once the one before it has, and not before
   * this turn of the event loop is over.
   */
  #batchOf(conversationId: string): Batch {
    const queue = this.#queues.get(conversationId) ?? { last: Promise.resolve() }
    if (queue.open) return queue.open
    const turnOver = new Promise<void>((resolve) => setImmediate(resolve))
    const payloads: Batch['payloads'] = []
    const types: string[] = []
    const sent = Promise.all([queue.last, turnOver])
      .then(() => {
        // Going out: what is published from now on waits for the next batch.
        if (queue.open === batch) queue.open = undefined
        return this.events.publishAll('chat.event', payloads.map((payload) => payload()))
      })
      .catch((error) => this.log.warn('chat events not published', { conversation_id: conversationId, types, error: String(error) }))
    const batch: Batch = { payloads, types, sent }
    queue.open = batch
    queue.last = sent
    this.#queues.set(conversationId, queue)
    void sent.then(() => {
      if (queue.last === sent) this.#queues.delete(conversationId)
    })
    return batch
  }
}
