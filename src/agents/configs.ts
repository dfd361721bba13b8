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

// Every write of an agent flushes the cache in every process before it answers (event `cache.flush`), and so does a
// reload; this is the backstop for rows changed behind the API's back.
const CACHE_MS = 60_000
// An agent's personality may run to 100,000 characters: the agents in use stay, the rest are read again.
const CACHE_ENTRIES = 1_000

/**
 * Agents as every turn reads them, kept per process: a turn's agent comes from memory instead of a round trip
 * before the first token. Keyed by the caller's company as well as the agent, and read through the tenant-scoped
 * records layer, so another company's agent is as unknown here as there (404). The company is the whole of an
 * agent's scope (it has no record rule, which a test holds to): one caller's copy is right for their colleagues.
 * Shared by every turn, so read-only.
 */
export class AgentConfigs {
  readonly #cache: TtlCache<string, Readonly<Agent>>

  constructor(
    private readonly db: Executor,
    clock: Clock,
    events: EventBus,
  ) {
    this.#cache = new TtlCache(clock, CACHE_MS, CACHE_ENTRIES)
    flushOn(events, 'agents', () => this.#cache.clear())
  }

  /** The agent as the caller may read it; not found (a load that fails is not kept) where they may not. */
  get(actor: Actor, agentId: string): Promise<Readonly<Agent>> {
    const id = agentId.toLowerCase()
    return this.#cache.get(`${actor.companyId}|${id}`, async () => (await getRecord(this.db, actor, AgentConfigRecord, id)).record)
  }
}
