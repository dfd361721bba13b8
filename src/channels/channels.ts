import { sql } from 'kysely'
import type { Metrics } from '../metrics/metrics.ts'
import type { Tracing } from '../tracing/tracing.ts'
import type { Drain } from '../lifecycle/drain.ts'
import type { Authenticator } from '../auth/authenticator.ts'
import type { Approvals } from '../approvals/approvals.ts'
import type { Chat } from '../chat/chat.ts'
import type { ChatFeed } from '../chat/feed.ts'
import type { ConversationDocuments } from '../documents/conversation-documents.ts'
import type { BucketStore } from '../throttle/buckets.ts'
import type { Sandbox } from '../mcp/sandbox.ts'
import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import { jsonb } from '../db/jsonb.ts'
import type { EventBus } from '../events/bus.ts'
import type { Writes } from '../events/writes.ts'
import type { Logger } from '../logger.ts'
import type { AgentChannels, AgentEmail } from '../db/columns.ts'
import type { OutboundPolicy } from '../net/outbound.ts'
import type { Vault } from '../vault/vault.ts'
import { voiceClip, type Voice } from '../voice/voice.ts'
import type { ChannelChoice, ChannelDriver, ChannelEndpoint, ChannelKernel, ChannelPlatform, ChannelTarget } from './contract.ts'
import { Deliveries } from './deliveries.ts'
import { splitMessage } from './split.ts'
import { ConversationThreads } from './threads.ts'
import { record, type Claim, type InboxRow, type OutboxRow } from './queue.ts'
import { bridgeDriver } from './bridge.ts'
import { ALONE_POLL_MS, backoff, ChannelWorker, SHARED_POLL_MS, type Outcome } from './worker.ts'
import type { Job, Scheduler } from '../scheduler.ts'

/** Who serves a platform the kernel drives itself (the bridge), where a plugin's name would be. */
const KERNEL = 'kernel'

export const CHANNEL_PLATFORMS: readonly ChannelPlatform[] = ['telegram', 'slack', 'whatsapp', 'email', 'bridge']

export interface ChannelsOptions {
  db: Db
  vault: Vault
  clock: Clock
  log: Logger
  events: EventBus
  /** Conversations begun by a message are written as any other write, heard by the kernel's parts. */
  writes: Writes
  outbound: OutboundPolicy
  /** Where webhooks reach the platform (SWITCHBOARD_BASE_URL). */
  publicBaseUrl: string
  /** Where people link their accounts (the admin app's /me). */
  adminBaseUrl: string
  /** The first retry's delay; each next one doubles it. */
  retryMs: number
  /** Where each try at a delivery or reply is counted. */
  metrics?: Metrics
  /** Where each try at a delivery or reply is a span. */
  tracing?: Tracing
  /** A draining process takes no webhooks. */
  drain?: Drain
  /** The internal secret, which a bridge's callback is sent with (see bridge.ts). */
  internalSecret?: string
  /** Runs the queues' worker and the plugins' periodic rounds (mailboxes). */
  scheduler: Scheduler
  /** Other processes queue work on the same store (PostgreSQL), which the worker polls for. */
  shared?: boolean
  /** The largest attachment read as a document (SWITCHBOARD_DOCUMENT_MAX_BYTES, as for uploads). */
  documentMaxBytes: number
  /** Where link codes tried from the platforms are counted (the sign-in throttle's store, shared across processes). */
  guesses: BucketStore
  /** Attachments are read in the platform's sandbox, as uploads are. */
  sandbox?: Sandbox
  /** Runs the turn a message starts. */
  chat: Chat
  /** What the people of a conversation see live, in order with the turn's own events. */
  feed: ChatFeed
  /** Where a message's attachments are stored as the conversation's documents. */
  documents: ConversationDocuments
  /** Hears voice notes and speaks answers, as the agent's voice settings say. */
  voice: Voice
  /** Who a linked sender is, as a member of the agent's company. */
  authenticator: Authenticator
  /** Tool calls waiting for a person's yes: said in the thread, answered by reply keyword. */
  approvals: Approvals
  /** Whether a plugin is switched on: a platform is served by the first of its plugins that is. */
  pluginEnabled: (plugin: string) => boolean
}

type AgentRow = { id: string; company_id: string; name: string; channels: AgentChannels; email: AgentEmail }

/**
 * The kernel side of every channel: which agent a platform reaches, what came in (each delivery once, whichever
 * process received it), who is speaking, and what goes back (queued, retried, in order). Plugins do the platform's
 * wire format, its signatures and its API; everything they have in common is here.
 */
export class Channels {
  /** Per platform, the plugins serving it in the order they registered; the first one switched on is used. */
  readonly #drivers = new Map<ChannelPlatform, Array<{ driver: ChannelDriver; plugin: string }>>()
  readonly #worker: ChannelWorker
  readonly deliveries: Deliveries
  readonly #stopping = new AbortController()
  /** Plugins' periodic rounds, stopped with the channels. */
  readonly #pluginJobs = new Set<Job>()
  readonly #threads: ConversationThreads

  constructor(private readonly options: ChannelsOptions) {
    this.#threads = new ConversationThreads(options.db)
    this.deliveries = new Deliveries(options, this)
    this.#worker = new ChannelWorker(options.db, options.clock, options.log, options.retryMs, {
      inbox: (row, claim) => this.deliveries.process(row, claim),
      outbox: (row, claim) => this.#send(row, claim),
      gaveUp: (table, row, error) => (table === 'channel_inbox' ? this.deliveries.gaveUp(row as InboxRow, error) : this.#gaveUp(row as OutboxRow, error)),
    }, options.scheduler, options.metrics, options.tracing, options.shared === false ? ALONE_POLL_MS : SHARED_POLL_MS)
    // Bridged platforms are the kernel's own: their bot runs outside and speaks through /api/internal/bridge.
    this.#drivers.set('bridge', [{ driver: bridgeDriver(options.db, options.outbound, () => options.internalSecret) as ChannelDriver, plugin: KERNEL }])
  }

  /** The kernel as one plugin sees it: what it registers is known to be its own (and switched off with it). */
  kernelFor(plugin: string): ChannelKernel {
    return {
      register: (driver) => {
        const serving = this.#drivers.get(driver.platform) ?? []
        if (serving.some((d) => d.plugin === plugin)) throw new Error(`${plugin} already registered a ${driver.platform} driver`)
        this.#drivers.set(driver.platform, [...serving, { driver: driver as ChannelDriver, plugin }])
      },
      endpoint: (agentId, platform) => this.endpoint(agentId, platform),
      endpoints: async (platform) => (this.options.pluginEnabled(plugin) ? this.endpoints(platform) : []),
      seen: (endpoint) => this.#status(endpoint, { last_seen_at: new Date(this.options.clock.now()) }),
      failed: (endpoint, error) => this.recordError(endpoint, error),
      receive: (endpoint, message) => this.deliveries.receive(endpoint, message),
      resolveAllowed: async (host) => {
        const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
        return (await this.options.outbound.check(`https://${bracketed}`)).addresses[0]!
      },
      every: (name, intervalMs, work) => {
        const job = this.options.scheduler.every(`${plugin}: ${name}`, intervalMs, work)
        this.#pluginJobs.add(job)
        return job
      },
      publicBaseUrl: this.options.publicBaseUrl,
      signal: this.#stopping.signal,
    }
  }

  /** Starts answering: the queues' worker, once the channel plugins have registered their drivers. */
  start(): void {
    this.#worker.start()
  }

  /** Deliveries and replies this process is working on now. */
  get inFlight(): number {
    return this.#worker.inFlight
  }

  async stop(): Promise<void> {
    this.#stopping.abort()
    await Promise.all([this.#worker.stop(), ...[...this.#pluginJobs].map((job) => job.stop())])
  }

  /** Work was queued: look now rather than at the next poll. */
  wake(): void {
    this.#worker.wake()
  }

  driver(platform: ChannelPlatform): ChannelDriver | undefined {
    return this.#drivers.get(platform)?.find((d) => this.#on(d.plugin))?.driver
  }

  /** Which plugin serves the platform (the one switched on, else the first), and whether it is on: for the console. */
  served(platform: ChannelPlatform): { plugin: string; enabled: boolean } | undefined {
    const serving = this.#drivers.get(platform) ?? []
    const entry = serving.find((d) => this.#on(d.plugin)) ?? serving[0]
    return entry && { plugin: entry.plugin, enabled: this.#on(entry.plugin) }
  }

  #on(plugin: string): boolean {
    return plugin === KERNEL || this.options.pluginEnabled(plugin)
  }

  async endpoint<P extends ChannelPlatform>(agentId: string, platform: P): Promise<ChannelEndpoint<P> | undefined> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(agentId)) return undefined
    const row = await this.options.db
      .selectFrom('agent_configs')
      .select(['id', 'company_id', 'name', 'channels', 'email'])
      .where('id', '=', agentId.toLowerCase())
      .where('enabled', '=', true)
      .executeTakeFirst()
    return row ? this.#endpointOf(row as AgentRow, platform) : undefined
  }

  async endpoints<P extends ChannelPlatform>(platform: P): Promise<ChannelEndpoint<P>[]> {
    const rows = await this.options.db
      .selectFrom('agent_configs')
      .select(['id', 'company_id', 'name', 'channels', 'email'])
      .where('enabled', '=', true)
      .where(sql<boolean>`channels ? ${platform}`)
      .orderBy('id')
      .execute()
    return rows.flatMap((row) => this.#endpointOf(row as AgentRow, platform) ?? [])
  }

  #endpointOf<P extends ChannelPlatform>(row: AgentRow, platform: P): ChannelEndpoint<P> | undefined {
    const settings = row.channels?.[platform]
    if (!settings || settings.enabled === false) return undefined
    const { vault } = this.options
    return {
      agentId: row.id,
      companyId: row.company_id,
      agentName: row.name,
      platform,
      settings: settings as ChannelEndpoint<P>['settings'],
      email: row.email ?? {},
      async secret(name) {
        return (await vault.get({ scope: 'agent', ownerId: row.id, name })) ?? (await vault.get({ scope: 'company', ownerId: row.company_id, name }))
      },
    }
  }

  /**
   * Queues text for a thread, once per `key` (the agent's message id, or the delivery a notice answers): processes
   * that all see the same answer queue it once. Cut to the platform's limit now, so a retry resends the same pieces.
   */
  async enqueue(reply: {
    companyId: string
    agentId: string
    platform: ChannelPlatform
    threadKey: string
    target: ChannelTarget
    key: string
    text: string
    choices?: ChannelChoice[]
    /** A spoken answer: sent as the platform's voice message (the text went in a reply of its own). */
    voiceClipId?: string
  }): Promise<void> {
    const limit = this.driver(reply.platform)?.maxLength ?? 4000
    const parts = reply.voiceClipId ? [] : splitMessage(reply.text, limit)
    await this.options.db
      .insertInto('channel_outbox')
      .values({
        id: Bun.randomUUIDv7(),
        company_id: reply.companyId,
        agent_id: reply.agentId,
        platform: reply.platform,
        key: reply.key,
        thread_key: reply.threadKey,
        target: jsonb(reply.target),
        parts: jsonb(parts),
        choices: reply.choices ? jsonb(reply.choices) : null,
        voice_clip_id: reply.voiceClipId ?? null,
        next_attempt_at: new Date(this.options.clock.now()),
      })
      .onConflict((oc) => oc.columns(['agent_id', 'platform', 'key']).doNothing())
      .execute()
    this.wake()
  }

  /**
   * Queues what the agent says in a conversation outside a channel's turn (a task's result, an approval asked) for
   * the platform thread the conversation belongs to; a web chat conversation belongs to none, and nothing is queued.
   */
  async enqueueInConversation(conversationId: string, reply: (agentName: string) => { key: string; text: string; choices?: ChannelChoice[] }): Promise<void> {
    const thread = await this.#threads.of(conversationId)
    if (!thread) return
    await this.enqueue({
      companyId: thread.company_id,
      agentId: thread.agent_id,
      platform: thread.platform as ChannelPlatform,
      threadKey: thread.thread_key,
      target: thread.target,
      ...reply(thread.name),
    })
  }

  /** Sends what is left of a queued reply; a failure retries later from the part that failed. */
  async #send(row: OutboxRow, claim: Claim): Promise<Outcome> {
    const platform = row.platform as ChannelPlatform
    const endpoint = await this.endpoint(row.agent_id, platform)
    if (!endpoint) return { failed: true, error: `The agent's ${platform} channel is off or the agent is disabled; the reply was not sent.` }
    const driver = this.driver(platform)
    // The plugin is off or not installed: the reply waits for it, without using up its attempts.
    if (!driver) return { retryAt: new Date(this.options.clock.now() + 60_000), error: `No enabled plugin sends ${platform} messages.`, countAttempt: false }
    if (row.voice_clip_id) return this.#sendVoice(row, endpoint, driver)
    const parts = row.parts as string[]
    const choices = row.choices as ChannelChoice[] | null
    for (let i = row.parts_sent; i < parts.length; i++) {
      try {
        // The buttons go with the last part, under everything they answer.
        if (choices && i === parts.length - 1 && driver.sendChoices) await driver.sendChoices(endpoint, row.target as ChannelTarget, parts[i]!, choices)
        else await driver.send(endpoint, row.target as ChannelTarget, parts[i]!)
      } catch (error) {
        return this.#sendFailed(row, endpoint, error)
      }
      // The claim was lost meanwhile (this process stalled past its lease): whoever holds it now sends the rest.
      if (!(await record(this.options.db, claim, { parts_sent: i + 1 }))) return {}
    }
    return {}
  }

  /** A spoken answer, as the platform's voice message; a platform without them has had the text, which is enough. */
  async #sendVoice(row: OutboxRow, endpoint: ChannelEndpoint, driver: ChannelDriver): Promise<Outcome> {
    if (!driver.sendVoice) return {}
    const clip = await voiceClip(this.options.db, row.voice_clip_id!)
    if (!clip) return { failed: true, error: 'The spoken answer is gone (its conversation was deleted).' }
    try {
      await driver.sendVoice(endpoint, row.target as ChannelTarget, { bytes: clip.bytes, mediaType: clip.media_type, durationMs: clip.duration_ms ?? undefined, filename: `answer-${clip.part + 1}.ogg` })
      return {}
    } catch (error) {
      return this.#sendFailed(row, endpoint, error)
    }
  }

  /** A send that failed: reported, and tried again later unless the platform said it never will work. */
  async #sendFailed(row: OutboxRow, endpoint: ChannelEndpoint, error: unknown): Promise<Outcome> {
    const { retryable, retryAfterMs } = error as { retryable?: boolean; retryAfterMs?: number }
    const message = (error as Error).message || String(error)
    await this.recordError(endpoint, `Sending failed: ${message}`)
    if (retryable === false) return { failed: true, error: message }
    const wait = Math.max(backoff(this.options.retryMs, row.attempts), retryAfterMs ?? 0)
    return { retryAt: new Date(this.options.clock.now() + wait), error: message }
  }

  async #gaveUp(row: OutboxRow, error: string): Promise<void> {
    this.options.log.error('channel reply given up', { agent_id: row.agent_id, platform: row.platform, id: row.id, error })
  }

  async recordError(endpoint: Pick<ChannelEndpoint, 'agentId' | 'companyId' | 'platform'>, error: string): Promise<void> {
    this.options.log.warn('channel error', { agent_id: endpoint.agentId, platform: endpoint.platform, error })
    await this.#status(endpoint, { last_error: error.slice(0, 1000), last_error_at: new Date(this.options.clock.now()) })
  }

  async recordDelivery(endpoint: Pick<ChannelEndpoint, 'agentId' | 'companyId' | 'platform'>): Promise<void> {
    const now = new Date(this.options.clock.now())
    await this.#status(endpoint, { last_delivery_at: now, last_seen_at: now })
  }

  async #status(
    endpoint: Pick<ChannelEndpoint, 'agentId' | 'companyId' | 'platform'>,
    change: { last_seen_at?: Date; last_delivery_at?: Date; last_error?: string; last_error_at?: Date },
  ): Promise<void> {
    await this.options.db
      .insertInto('channel_status')
      .values({ agent_id: endpoint.agentId, platform: endpoint.platform, company_id: endpoint.companyId, ...change })
      .onConflict((oc) => oc.columns(['agent_id', 'platform']).doUpdateSet(change))
      .execute()
  }

  get db(): Db {
    return this.options.db
  }

  get publicBaseUrl(): string {
    return this.options.publicBaseUrl
  }
}
