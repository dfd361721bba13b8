import type { Logger } from '../logger.ts'
import { Subscribers, type EventBus, type EventHandler, type EventType, type Events } from './bus.ts'

/** The bus of one process (the embedded store): nobody else to tell, nothing to miss. */
export class MemoryBus implements EventBus {
  readonly #subscribers: Subscribers

  constructor(log: Logger) {
    this.#subscribers = new Subscribers(log)
  }

  /** One process: there are no others to hear. */
  listening(): boolean {
    return true
  }

  lag(): null {
    return null
  }

  async publish<T extends EventType>(type: T, payload: Events[T]): Promise<void> {
    this.#subscribers.deliver(type, payload, 'here')
  }

  async publishAll<T extends EventType>(type: T, payloads: ReadonlyArray<Events[T]>): Promise<void> {
    for (const payload of payloads) this.#subscribers.deliver(type, payload, 'here')
  }

  subscribe<T extends EventType>(type: T, handler: EventHandler<T>): () => void {
    return this.#subscribers.add(type, handler)
  }

  onMissed(handler: () => void): () => void {
    return this.#subscribers.addMissed(handler)
  }

  async close(): Promise<void> {}
}
