import type { FeedEvent } from '../chat/events.ts'
import type { Logger } from '../logger.ts'

/** The caches a write may make stale; each process drops its own copy when one is named. */
export type CacheName = 'agents' | 'identities' | 'acl' | 'mcp' | 'mcp-sessions' | 'runner-models' | 'plugin-secrets' | 'budgets' | 'system-settings' | 'documents'

/**
 * Every event the platform publishes, by type. Payloads are JSON: with several processes they travel through
 * PostgreSQL. A type added here is typed at both ends.
 */
export interface Events {
  /** Cached reads to drop: a write changed what they hold. A flush with an id is confirmed by each process. */
  'cache.flush': { caches: CacheName[]; flush?: string }
  /** A process (its presence id) dropped what the flush named. */
  'cache.flushed': { flush: string; process: string }
  /** Stop the conversation's running turn, wherever it runs. */
  'turn.abort': { conversation_id: string }
  /**
   * An agent was reloaded: every process replaces its instance (or stops it, when the agent is disabled). Whether
   * it is enabled, each process reads from the store: two writes' events may arrive in the other order.
   */
  'agent.reload': { agent_id: string }
  /** An agent's configuration was written (or the agent deleted): every process starts or stops it, as the store says. */
  'agent.changed': { agent_id: string }
  /**
   * Something the people of a conversation see live (web chat); every process passes it to its sockets of the
   * conversation's participants, except those of `except_user` (their own typing), or to the one socket `to_socket`.
   */
  'chat.event': { conversation_id: string; event: FeedEvent; except_user?: string; to_socket?: string }
  /** Who takes part changed; the sockets of `removed` users on the conversation are closed (4003). */
  'chat.participants': { conversation_id: string; removed?: string[] }
  /** A socket came (back) mid-answer: the process running the conversation's turn re-sends it the answer so far. */
  'chat.resume': { conversation_id: string; socket: string }
  /**
   * A plugin was switched on or off, or its settings changed: every process reads the plugin states afresh from the
   * store (two writes' events may arrive in the other order) and follows them.
   */
  'plugin.changed': { plugin: string }
  /** An MCP host cancelled one of its requests; the process serving that request stops it. */
  'mcp.cancel': { session_id: string; request_id: string | number; reason?: string }
  /** A background task was cancelled (its row already says so); the process running it stops the tool. */
  'task.cancel': { task_id: string }
  /** An MCP host answered what the gateway asked it (elicitation): the process whose request waits hands it on. */
  'mcp.answer': { session_id: string; messages: unknown[] }
  /** A tool approval was answered (its row already says so); the turn waiting on it goes on, wherever it runs. */
  'approval.decided': { approval_id: string; status: 'approved' | 'denied' | 'expired' | 'cancelled' }
}

export type EventType = keyof Events

/** Whether an event was published by this process or came from another one. */
export type Origin = 'here' | 'elsewhere'

export type EventHandler<T extends EventType> = (payload: Events[T], origin: Origin) => void

/**
 * One bus for the platform's events: in-process for one process (the embedded store), PostgreSQL LISTEN/NOTIFY for
 * several. Subscribers in the publishing process hear an event before publish() returns; those in other processes
 * a few milliseconds later.
 */
export interface EventBus {
  /** Delivers to this process's subscribers at once, then to every other process's. */
  publish<T extends EventType>(type: T, payload: Events[T]): Promise<void>
  /**
   * Publishes several events of one type, in order, as publish() would one by one; between processes they travel in
   * one statement, so a publisher with several queued pays for one. Should that statement fail, the other processes
   * miss them all (this one's subscribers have heard them already).
   */
  publishAll<T extends EventType>(type: T, payloads: ReadonlyArray<Events[T]>): Promise<void>
  /**
   * Returns the function that unsubscribes. A publisher that acted on its own event already tells by `origin`
   * which deliveries to skip.
   */
  subscribe<T extends EventType>(type: T, handler: EventHandler<T>): () => void
  /**
   * Called when events of other processes may have been lost (the connection that hears them dropped and came
   * back): whoever keeps state that events keep fresh should start over, as caches do by flushing.
   */
  onMissed(handler: () => void): () => void
  /** Whether this process hears the other processes' events now (false while it reconnects, or once closed). */
  listening(): boolean
  /** Seconds the last event of another process took to arrive here (their clocks' difference included); null before any. */
  lag(): number | null
  close(): Promise<void>
}

type Handler = (payload: never, origin: Origin) => void

/** The subscribers of one process, and delivery to them: the part both buses share. */
export class Subscribers {
  readonly #handlers = new Map<EventType, Set<Handler>>()
  readonly #missed = new Set<() => void>()

  constructor(private readonly log: Logger) {}

  add<T extends EventType>(type: T, handler: EventHandler<T>): () => void {
    let set = this.#handlers.get(type)
    if (!set) this.#handlers.set(type, (set = new Set()))
    set.add(handler as Handler)
    return () => void set.delete(handler as Handler)
  }

  addMissed(handler: () => void): () => void {
    this.#missed.add(handler)
    return () => void this.#missed.delete(handler)
  }

  /** Calls each subscriber; one that throws is logged and does not keep the event from the others. */
  deliver(type: string, payload: unknown, origin: Origin): void {
    for (const handler of this.#handlers.get(type as EventType) ?? []) {
      try {
        handler(payload as never, origin)
      } catch (error) {
        this.log.error('event subscriber failed', { type, error: (error as Error).message })
      }
    }
  }

  missed(): void {
    for (const handler of this.#missed) {
      try {
        handler()
      } catch (error) {
        this.log.error('event subscriber failed', { type: 'missed', error: (error as Error).message })
      }
    }
  }
}
