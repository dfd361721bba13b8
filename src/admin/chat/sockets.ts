import type { ServerWebSocket } from 'bun'
import type { EventBus, Events } from '../../events/bus.ts'
import type { Credentials } from '../api-client.ts'
import type { Scheduler, Job } from '../../scheduler.ts'
import type { FrameBudget } from './frame-budget.ts'

/** What a web chat socket remembers: whose it is, the conversation it shows, and how to act for its user. */
export interface ChatSocketData {
  /** This socket's own name, for what is meant for it alone (the answer so far, on resume). */
  id: string
  userId: string
  /** The conversation the page shows; null on the page without one (the list still updates). */
  conversationId: string | null
  who: Credentials
  /** Set when the handshake was refused: the socket is closed with it as soon as it opens. */
  refused?: { code: 4001 | 4003 | 1013; reason: string }
  /** The last stored message the client has: a reconnect is sent what came after it. */
  after?: string
  /** When the handshake began: a removal from the conversation after this reached the socket too late. */
  since: number
  /** What it may still send: a flood is refused, then closed. */
  budget: FrameBudget
}

export type ChatSocket = ServerWebSocket<ChatSocketData>
export type Refusal = NonNullable<ChatSocketData['refused']>

/** How long a socket may stay silent before the client should assume it is dead; it hears a heartbeat well within. */
export const HEARTBEAT_MS = 25_000
/** A socket this far behind (bytes queued) is closed: the client reconnects and resumes from what it has. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024
/** Chat pages one person may have open on one process: each socket costs memory and a share of every fan-out. */
export const MAX_SOCKETS_PER_USER = 20
/** How long a handshake may take; a removal is remembered that long for the sockets it could miss. */
const HANDSHAKE_MS = 30_000
/** Every this many heartbeats each socket's session and conversation are checked again. */
const VERIFY_EVERY_BEATS = 4

/** Events that tell people elsewhere (another conversation open, or the list alone) that something changed. */
const ELSEWHERE = new Set(['user_message', 'message', 'conversation_update', 'participants'])

/**
 * This process's web chat sockets, by conversation and by user, fed from the bus: whatever process a turn or a
 * message happens on, every socket of every participant hears it.
 */
export class ChatSockets {
  readonly #onConversation = new Map<string, Set<ChatSocket>>()
  readonly #ofUser = new Map<string, Set<ChatSocket>>()
  readonly #unsubscribe: Array<() => void>
  readonly #heartbeat: Job
  #beats = 0
  #closed = false
  #verifying = false
  /** When each person was last removed from each conversation (`conversation user`), for handshakes under way. */
  readonly #removedAt = new Map<string, number>()

  constructor(
    events: EventBus,
    /** Who takes part in a conversation, by user id (the kernel caches it). */
    private readonly participants: (conversationId: string) => Promise<ReadonlySet<string>>,
    /** Asks the API again whether the socket's session and conversation still hold: why it may not stay, if so. */
    private readonly verify: (ws: ChatSocket) => Promise<Refusal | undefined>,
    scheduler: Scheduler,
  ) {
    this.#unsubscribe = [
      events.subscribe('chat.event', (payload) => this.#deliver(payload)),
      events.subscribe('chat.participants', (payload) => this.#removed(payload)),
      // A sign-out, a password change or a membership removed: sockets opened under the old rights are checked now.
      events.subscribe('cache.flush', ({ caches }) => void (caches.includes('identities') && this.#verifyAll())),
    ]
    // One timer for all sockets: a timer each would cost every idle socket memory.
    this.#heartbeat = scheduler.every('web chat heartbeat', HEARTBEAT_MS, () => this.#beat())
  }

  get size(): number {
    let n = 0
    for (const set of this.#ofUser.values()) n += set.size
    return n
  }

  /** False when the socket was closed instead: the platform is stopping, or its user has too many open. */
  add(ws: ChatSocket): boolean {
    const { userId, conversationId } = ws.data
    if (this.#closed) {
      ws.close(1001, 'The server is shutting down.')
      return false
    }
    if ((this.#ofUser.get(userId)?.size ?? 0) >= MAX_SOCKETS_PER_USER) {
      ws.close(4029, `At most ${MAX_SOCKETS_PER_USER} chat pages may be open at once; close some.`)
      return false
    }
    // Removed while the handshake ran: the removal's close went out before this socket was here to get it.
    const removed = conversationId ? Math.max(this.#removedAt.get(`${conversationId} ${userId}`) ?? 0, this.#removedAt.get(`${conversationId} *`) ?? 0) : 0
    if (removed >= ws.data.since) {
      ws.close(4003, 'You no longer take part in this conversation.')
      return false
    }
    addTo(this.#ofUser, userId, ws)
    if (conversationId) addTo(this.#onConversation, conversationId, ws)
    return true
  }

  remove(ws: ChatSocket): void {
    const { userId, conversationId } = ws.data
    removeFrom(this.#ofUser, userId, ws)
    if (conversationId) removeFrom(this.#onConversation, conversationId, ws)
  }

  close(): void {
    this.#closed = true
    void this.#heartbeat.stop()
    for (const unsubscribe of this.#unsubscribe) unsubscribe()
    for (const set of this.#ofUser.values()) for (const ws of set) ws.close(1001, 'The server is shutting down.')
  }

  #deliver({ conversation_id, event, except_user, to_socket }: Events['chat.event']): void {
    const wire = JSON.stringify({ ...event, conversation_id })
    for (const ws of this.#onConversation.get(conversation_id) ?? []) {
      if (ws.data.userId !== except_user && (to_socket === undefined || ws.data.id === to_socket)) send(ws, wire)
    }
    if (to_socket === undefined && ELSEWHERE.has(event.type) && this.#ofUser.size > 0) void this.#tellElsewhere(conversation_id, event)
  }

  /** Participants' sockets on other pages learn of it: an unread badge, a new title, a list to refresh. */
  async #tellElsewhere(conversationId: string, event: Events['chat.event']['event']): Promise<void> {
    const people = await this.participants(conversationId).catch(() => new Set<string>())
    const unread = event.type === 'user_message' || event.type === 'message'
    // Nobody has unread what they wrote themselves.
    const author = event.type === 'user_message' ? event.sender : undefined
    const notice = JSON.stringify(unread ? { type: 'unread', conversation_id: conversationId } : { ...event, conversation_id: conversationId })
    for (const userId of people) {
      if (unread && userId === author) continue
      for (const ws of this.#ofUser.get(userId) ?? []) if (ws.data.conversationId !== conversationId) send(ws, notice)
    }
  }

  /** Removed people lose the conversation at once: their sockets on it close with 4003, their lists refresh. */
  #removed({ conversation_id, removed }: Events['chat.participants']): void {
    if (!removed?.length) return
    const now = Date.now()
    // Remembered for as long as a handshake may take; older entries go with the next removal.
    for (const [key, at] of this.#removedAt) if (now - at > HANDSHAKE_MS) this.#removedAt.delete(key)
    for (const userId of removed) this.#removedAt.set(`${conversation_id} ${userId}`, now)
    const everyone = removed.includes('*')
    for (const ws of [...(this.#onConversation.get(conversation_id) ?? [])]) {
      if (everyone || removed.includes(ws.data.userId)) ws.close(4003, everyone ? 'This conversation was deleted.' : 'You no longer take part in this conversation.')
    }
    const stale = JSON.stringify({ type: 'participants', conversation_id })
    for (const userId of everyone ? [] : removed) for (const ws of this.#ofUser.get(userId) ?? []) if (ws.data.conversationId !== conversation_id) send(ws, stale)
  }

  #beat(): void {
    const beat = JSON.stringify({ type: 'heartbeat' })
    for (const set of this.#ofUser.values()) for (const ws of set) send(ws, beat)
    if (++this.#beats % VERIFY_EVERY_BEATS === 0) void this.#verifyAll()
  }

  /**
   * A session that ended or a right that was lost closes the sockets opened under it, at the latest a few beats on.
   * Sockets of one session on one conversation share a check, and the checks run one after another: all at once,
   * a thousand in-process API calls held the event loop for seconds.
   */
  async #verifyAll(): Promise<void> {
    if (this.#verifying) return
    this.#verifying = true
    try {
      const groups = new Map<string, ChatSocket[]>()
      for (const set of this.#ofUser.values()) {
        for (const ws of set) {
          const key = `${ws.data.who.headers.cookie ?? ''} ${ws.data.conversationId ?? ''}`
          const group = groups.get(key)
          if (group) group.push(ws)
          else groups.set(key, [ws])
        }
      }
      for (const sockets of groups.values()) {
        const refusal = await this.verify(sockets[0]!).catch(() => undefined)
        if (refusal) for (const ws of sockets) ws.close(refusal.code, refusal.reason)
      }
    } finally {
      this.#verifying = false
    }
  }
}

function send(ws: ChatSocket, wire: string): void {
  if (ws.readyState !== 1) return
  if (ws.getBufferedAmount() > MAX_BUFFERED_BYTES) {
    ws.close(4008, 'The connection fell behind; reconnect to resume.')
    return
  }
  ws.send(wire)
}

function addTo(map: Map<string, Set<ChatSocket>>, key: string, ws: ChatSocket): void {
  let set = map.get(key)
  if (!set) map.set(key, (set = new Set()))
  set.add(ws)
}

function removeFrom(map: Map<string, Set<ChatSocket>>, key: string, ws: ChatSocket): void {
  const set = map.get(key)
  if (!set) return
  set.delete(ws)
  if (set.size === 0) map.delete(key)
}
