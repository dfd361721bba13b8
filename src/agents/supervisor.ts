import type { Db } from '../db/schema.ts'
import type { Logger } from '../logger.ts'

/**
 * One live agent: the configuration it was started with and the turns running on it. Channel connections (Slack,
 * Telegram, …) attach here as channel plugins arrive; a turn reads the model and timeout afresh regardless.
 */
export class AgentInstance {
  #inFlight = 0
  #idle: Array<() => void> = []

  constructor(
    readonly agentId: string,
    readonly generation: number,
    readonly startedAt: Date,
  ) {}

  get turnsInFlight(): number {
    return this.#inFlight
  }

  /** Marks a turn as running here; call the returned function when it ends. */
  lease(): () => void {
    this.#inFlight++
    let released = false
    return () => {
      if (released) return
      released = true
      if (--this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve()
    }
  }

  /** Resolves once no turn runs here: a reload never cuts a turn short. */
  stop(): Promise<void> {
    return this.#inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve))
  }
}

/** Holds a live instance per enabled agent; reload swaps in a new one before the old is stopped. */
export class AgentSupervisor {
  readonly #instances = new Map<string, AgentInstance>()
  #generation = 0

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    /** ON_STARTUP: run after a reload, as at boot. */
    private readonly onStartup: () => Promise<void>,
  ) {}

  /** Starts an instance for every enabled agent. */
  async startAll(): Promise<void> {
    const agents = await this.db.selectFrom('agent_configs').select('id').where('enabled', '=', true).execute()
    for (const { id } of agents) this.#instances.set(id, this.#create(id))
    this.log.info('agents started', { count: agents.length })
  }

  /** The live instance of an agent, started now if it was enabled after boot. */
  instance(agentId: string): AgentInstance {
    let instance = this.#instances.get(agentId)
    if (!instance) {
      instance = this.#create(agentId)
      this.#instances.set(agentId, instance)
    }
    return instance
  }

  /**
   * Replaces an agent's instance: the new one is in place before the old one stops, and the old one stops only
   * once its running turns are done. A disabled agent is stopped and not replaced.
   */
  async reload(agentId: string, enabled: boolean): Promise<AgentInstance | undefined> {
    const old = this.#instances.get(agentId)
    const next = enabled ? this.#create(agentId) : undefined
    if (next) this.#instances.set(agentId, next)
    else this.#instances.delete(agentId)
    await this.onStartup()
    if (old) {
      void old.stop().then(() => this.log.info('agent instance stopped', { agent_id: agentId, generation: old.generation }))
    }
    return next
  }

  list(): AgentInstance[] {
    return [...this.#instances.values()]
  }

  #create(agentId: string): AgentInstance {
    return new AgentInstance(agentId, ++this.#generation, new Date())
  }
}
