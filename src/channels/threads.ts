import { LRUCache } from 'lru-cache'
import type { Db } from '../db/schema.ts'
import { runTemplate, slot } from '../db/templates.ts'
import type { ChannelTarget } from './contract.ts'

/** The platform thread a conversation belongs to, where the agent's later messages in it are sent. */
export interface ConversationThread {
  company_id: string
  agent_id: string
  platform: string
  thread_key: string
  target: ChannelTarget
  /** The agent's name, which what is sent may say. */
  name: string
}

/**
 * Which platform thread each conversation belongs to. Every answer in the web chat asks (a channel's conversation
 * forwards what its agent says), and nearly all find none; a conversation found without a thread is remembered,
 * since it never gets one: a thread is made in the same transaction as its conversation (deliveries.ts), and is never
 * pointed at another. A thread found is asked for again each time: its agent's name or its target may change.
 */
export class ConversationThreads {
  readonly #threadless = new LRUCache<string, true>({ max: 10_000 })

  constructor(private readonly db: Db) {}

  async of(conversationId: string): Promise<ConversationThread | undefined> {
    if (this.#threadless.get(conversationId)) return undefined
    // Compiled once; a lookup by key, so on the keyed lane.
    const [thread] = await runTemplate<ConversationThread>(
      this.db,
      'channels|thread-of-conversation',
      () =>
        this.db
          .selectFrom('channel_threads')
          .innerJoin('agent_configs', 'agent_configs.id', 'channel_threads.agent_id')
          .select(['channel_threads.company_id', 'channel_threads.agent_id', 'channel_threads.platform', 'channel_threads.thread_key', 'channel_threads.target', 'agent_configs.name'])
          .where('channel_threads.conversation_id', '=', slot(0)),
      [conversationId],
      'keyed',
    )
    if (!thread) this.#threadless.set(conversationId, true)
    return thread
  }
}
