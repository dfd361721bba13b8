import postgres from 'postgres'
import { NoMetrics, type Metrics } from '../metrics/metrics.ts'
import type { Db } from '../db/schema.ts'
import { run } from '../db/templates.ts'
import type { Logger } from '../logger.ts'
import { Subscribers, type EventBus, type EventHandler, type EventType, type Events } from './bus.ts'

/** The one channel every process listens on. */
export const CHANNEL = 'switchboard_events'

// NOTIFY refuses payloads of 8000 bytes or more; past this, the payload goes into a row and the notification
// carries its id.
const INLINE_BYTES = 7_800
// Rows of large payloads are read within milliseconds; these minutes are for a process that was slow to read.
const PAYLOAD_ROWS_KEPT = "10 minutes"
const SWEEP_EVERY_MS = 60_000
// Re-listening after a drop: the first try at once, then backing off to this.
const RELISTEN_MAX_MS = 5_000

/** A notification: who sent it (so a process skips its own), the type, and the payload or the id of its row. */
interface Wire {
  o: string
  /** When it was published (ms since the epoch, on the publisher's clock). */
  s?: number
  /** Tells apart events of one statement that would otherwise be the same text. */
  n?: number
  t: string
  p?: unknown
  r?: string
}

/**
 * The most notifications one statement sends: a statement's target list holds at most 1664 entries, and each count
 * is a statement of its own on the connection (prepared once), so their number stays small.
 */
const NOTIFIES_PER_STATEMENT = 100

/** The statement that sends `count` notifications on CHANNEL ($1), the payloads being $2 onwards, in order. */
function notifying(count: number): string {
  const notifies = Array.from({ length: count }, (_, i) => `pg_notify($1, $${i + 2})`)
  return `SELECT set_config('synchronous_commit', 'off', true), ${notifies.join(', ')}`
}

/**
 * The bus of several processes on one PostgreSQL: NOTIFY to publish, one dedicated LISTEN connection per process
 * to hear. Notifications of one publisher arrive in the order it sent them, and are delivered in that order.
 * When the LISTEN connection drops, it is remade with backoff, and subscribers are told they may have missed events.
 */
export class PostgresBus implements EventBus {
  readonly #origin = crypto.randomUUID()
  readonly #subscribers: Subscribers
  readonly #listener: postgres.Sql
  /** Incoming notifications are handled one after another, so a payload read from its row keeps its place. */
  #incoming = Promise.resolve()
  #closing = false
  #relistening = false
  #lag: number | null = null
  #lost = false
  #lastSweep = 0
  #sequence = 0

  private constructor(
    url: string,
    private readonly db: Db,
    private readonly log: Logger,
    private readonly metrics: Metrics,
  ) {
    this.#subscribers = new Subscribers(log)
    // postgres.js hands notifications to `onnotify`, the option its own listen() is built on, which its types leave
    // out. Its listen() is not used: after a drop it tries to listen again once, and gives up if that fails.
    const options: postgres.Options<{}> & { onnotify: (channel: string, payload: string) => void } = {
      max: 1,
      idle_timeout: 0,
      max_lifetime: null,
      fetch_types: false,
      onnotice: () => {},
      onnotify: (_channel, payload) => this.#receive(payload),
      onclose: () => this.#dropped(),
    }
    this.#listener = postgres(url, options)
  }

  /** Listens before it returns: an event published after start-up is heard. */
  static async connect(url: string, db: Db, log: Logger, metrics: Metrics = new NoMetrics()): Promise<PostgresBus> {
    const bus = new PostgresBus(url, db, log, metrics)
    await bus.#listen()
    return bus
  }

  publish<T extends EventType>(type: T, payload: Events[T]): Promise<void> {
    return this.publishAll(type, [payload])
  }

  async publishAll<T extends EventType>(type: T, payloads: ReadonlyArray<Events[T]>): Promise<void> {
    if (payloads.length === 0) return
    for (const payload of payloads) this.#subscribers.deliver(type, payload, 'here')
    const sent = Date.now()
    const wires: string[] = []
    for (const payload of payloads) {
      const wire = this.#wire(type, payload, sent)
      wires.push(typeof wire === 'string' ? wire : await wire)
    }
    // The direct path: publishers may not wait (the chat feed publishes in the background), and a Kysely query still
    // running when the store closes would hold its connection reserved and the close with it.
    // A notification is lost with the server anyway, so its commit need not wait for the log to reach the disk.
    // One transaction's notifications arrive in the order they were sent; a long batch goes in statements one after
    // the other.
    for (let from = 0; from < wires.length; from += NOTIFIES_PER_STATEMENT) {
      const some = wires.slice(from, from + NOTIFIES_PER_STATEMENT)
      await run(this.db, notifying(some.length), [CHANNEL, ...some], 'keyed')
    }
  }

  /** What travels for one event: the payload itself, or past NOTIFY's limit the id of the row that holds it. */
  #wire(type: EventType, payload: unknown, sent: number): string | Promise<string> {
    // A sequence number: PostgreSQL delivers identical payloads of one transaction only once.
    const wire = JSON.stringify({ o: this.#origin, s: sent, n: this.#sequence++, t: type, p: payload } satisfies Wire)
    return Buffer.byteLength(wire) <= INLINE_BYTES ? wire : this.#stored(type, payload, sent)
  }

  /** A payload past NOTIFY's limit goes into a row; the notification carries the row's id. */
  async #stored(type: EventType, payload: unknown, sent: number): Promise<string> {
    const id = Bun.randomUUIDv7()
    await run(this.db, 'INSERT INTO event_payloads (id, type, payload) VALUES ($1, $2, $3::text::jsonb)', [id, type, JSON.stringify(payload)], 'keyed')
    this.#sweep()
    return JSON.stringify({ o: this.#origin, s: sent, t: type, r: id } satisfies Wire)
  }

  subscribe<T extends EventType>(type: T, handler: EventHandler<T>): () => void {
    return this.#subscribers.add(type, handler)
  }

  onMissed(handler: () => void): () => void {
    return this.#subscribers.addMissed(handler)
  }

  listening(): boolean {
    return !this.#relistening && !this.#closing
  }

  lag(): number | null {
    return this.#lag
  }

  async close(): Promise<void> {
    this.#closing = true
    await this.#listener.end({ timeout: 1 })
  }

  async #listen(): Promise<void> {
    await this.#listener.unsafe(`LISTEN ${CHANNEL}`)
  }

  #receive(raw: string): void {
    let wire: Wire
    try {
      wire = JSON.parse(raw)
    } catch {
      return
    }
    if (wire.o === this.#origin) return
    if (typeof wire.s === 'number') {
      this.#lag = (Date.now() - wire.s) / 1000
      this.metrics.eventLag(this.#lag)
    }
    this.#incoming = this.#incoming.then(async () => {
      try {
        const payload = wire.r === undefined ? wire.p : await this.#payloadOf(wire.r)
        if (payload !== undefined) this.#subscribers.deliver(wire.t, payload, 'elsewhere')
      } catch (error) {
        // The row could not be read: to its subscribers the event is lost, which is what "missed" is for.
        this.log.warn('an event payload could not be read', { type: wire.t, error: (error as Error).message })
        this.#subscribers.missed()
      }
    })
  }

  async #payloadOf(id: string): Promise<unknown> {
    const row = await this.db.selectFrom('event_payloads').select('payload').where('id', '=', id).executeTakeFirst()
    if (!row) throw new Error(`the payload row ${id} is gone`)
    return row.payload
  }

  /** The LISTEN connection closed: listen again until it works, then say that events may have been missed. */
  #dropped(): void {
    if (this.#closing) return
    this.#lost = true
    if (this.#relistening) return
    this.#relistening = true
    this.log.warn('the event bus lost its LISTEN connection; reconnecting')
    void (async () => {
      let wait = 0
      // A drop while re-listening sets #lost again, and the loop goes round once more.
      while (this.#lost && !this.#closing) {
        if (wait > 0) await Bun.sleep(wait)
        this.#lost = false
        try {
          await this.#listen()
        } catch {
          this.#lost = true
          wait = Math.min(Math.max(wait * 2, 100), RELISTEN_MAX_MS)
        }
      }
      this.#relistening = false
      if (this.#closing) return
      this.log.info('the event bus listens again')
      this.#subscribers.missed()
    })()
  }

  /** Removes rows of large payloads that every process has long read; at most once a minute per process. */
  #sweep(): void {
    const now = Date.now()
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return
    this.#lastSweep = now
    void run(this.db, `DELETE FROM event_payloads WHERE created_at < now() - interval '${PAYLOAD_ROWS_KEPT}'`, []).catch(() => {})
  }
}
