import type { Actor } from '../auth/actor.ts'
import { TtlCache } from '../cache.ts'
import type { Clock } from '../clock.ts'
import type { Executor } from '../db/schema.ts'
import type { EventBus } from '../events/bus.ts'
import { flushOn } from '../events/caches.ts'
import { AgentConfigRecord } from '../models/agent-config.ts'
import type { RecordOf } from '../models/define.ts'
import { getRecord } from '../models/records.ts'

/** An agent as its company's callers read it. */
export type Agent = RecordOf<'agent_configs'>

// Every write of an agent flushes the cache in every process before it answers (event `cache.flush`); this is the
// backstop for rows changed behind the API's back.
const CACHE_MS = 60_000

/**
 * Agents as every turn reads them, kept per process: a turn's agent comes from memory instead of a round trip
 * before the first token. Keyed by the caller's company as well as the agent, and read through the tenant-scoped
 * records layer, so another company's agent is as unknown here as there (404).
 */
export class AgentConfigs {
  readonly #cache: TtlCache<string, Agent>

  constructor(
    private readonly db: Executor,
    clock: Clock,
    events: EventBus,
  ) {
    this.#cache = new TtlCache(clock, CACHE_MS)
    flushOn(events, 'agents', () => this.#cache.clear())
  }

  /** The agent as the caller may read it; not found (a load that fails is not kept) where they may not. */
  get(actor: Actor, agentId: string): Promise<Agent> {
    const id = agentId.toLowerCase()
    return this.#cache.get(`${actor.companyId}|${id}`, async () => (await getRecord(this.db, actor, AgentConfigRecord, id)).record)
  }
}
