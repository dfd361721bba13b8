import type { AgentConfig, Db } from '../db/schema.ts'
import type { EventBus } from '../events/bus.ts'
import type { Writes } from '../events/writes.ts'
import { AgentConfigRecord } from '../models/agent-config.ts'
import type { Logger } from '../logger.ts'

/** A live agent runs turns; once replaced or disabled it stops taking them and ends when its last turn does. */
export type InstanceState = 'running' | 'stopping' | 'stopped'

/**
 * One live agent, in one process: the configuration it was started (or last reloaded) with, its state and the
 * turns running on it. A turn reads the model and timeout afresh from the store; what a reload applies is what is
 * read only at a start (ON_STARTUP hooks, such as a channel's webhook registration), so comparing the version
 * loaded here with the stored one tells whether a reload is pending.
 */
export class AgentInstance {
  #inFlight = 0
  #idle: Array<() => void> = []
  #state: InstanceState = 'running'
  #configuration: AgentConfig | undefined

  constructor(
    readonly agentId: string,
    readonly generation: number,
    readonly startedAt: Date,
  ) {}

  get state(): InstanceState {
    return this.#state
  }

  /** The configuration as it was when this instance started; undefined until it has been read. */
  get configuration(): AgentConfig | undefined {
    return this.#configuration
  }

  /** The configuration read for this start. */
  loaded(configuration: AgentConfig): void {
    this.#configuration ??= configuration
  }

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

  /** Takes no more turns here and resolves once none runs: a reload never cuts a turn short. */
  async stop(): Promise<void> {
    this.#state = 'stopping'
    if (this.#inFlight > 0) await new Promise<void>((resolve) => this.#idle.push(resolve))
    this.#state = 'stopped'
  }
}

/**
 * Holds a live instance per enabled agent, in every process: a reload or a change of configuration made in one
 * process travels on the bus to the others. Reload swaps in a new instance before the old is stopped.
 */
export class AgentSupervisor {
  readonly #instances = new Map<string, AgentInstance>()
  #generation = 0

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    /** ON_STARTUP: run after a reload, as at boot. */
    private readonly onStartup: () => Promise<void>,
    private readonly events: EventBus,
  ) {
    // This process acted on its own reloads and changes before announcing them.
    events.subscribe('agent.reload', ({ agent_id }, origin) => {
      if (origin === 'elsewhere') void this.#isEnabled(agent_id).then((enabled) => this.#reloadHere(agent_id, enabled)).catch((error: Error) => this.#failed(agent_id, error))
    })
    events.subscribe('agent.changed', ({ agent_id }, origin) => {
      if (origin === 'elsewhere') void this.#isEnabled(agent_id).then((enabled) => this.#follow(agent_id, enabled)).catch((error: Error) => this.#failed(agent_id, error))
    })
    // A change another process announced may have been missed: the store says which agents are enabled.
    events.onMissed(() => void this.#resync().catch((error: Error) => this.#failed('*', error)))
  }

  /** Starts an instance for every enabled agent. */
  async startAll(): Promise<void> {
    const agents = await this.db.selectFrom('agent_configs').selectAll().where('enabled', '=', true).execute()
    for (const agent of agents) this.#instances.set(agent.id, this.#create(agent.id, agent))
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
   * Replaces an agent's instance in every process: the new one is in place before the old one stops, and the old
   * one stops only once its running turns are done. A disabled agent is stopped and not replaced. Answers this
   * process's new instance.
   */
  async reload(agentId: string, enabled: boolean): Promise<AgentInstance | undefined> {
    const next = await this.#reloadHere(agentId, enabled)
    await this.events.publish('agent.reload', { agent_id: agentId })
    return next
  }

  /**
   * Live agents follow every write of their configuration (`enabled` false once deleted), in every process. A
   * change of an enabled agent's channels reloads it, so what ON_STARTUP sets up for a channel (its webhook
   * registered with the platform) follows the save instead of waiting for someone to press Reload. The save waits
   * for it but never fails by it: a platform that refuses is reported on the channel, as at boot.
   */
  follow(writes: Writes): void {
    writes.on(async (write) => {
      if (write.type !== 'record' || write.model !== AgentConfigRecord) return
      const enabled = write.verb !== 'delete' && write.record.enabled === true
      if (!enabled || !this.#channelsChanged(write.id, write.record.channels)) return this.configured(write.id, enabled)
      await this.reload(write.id, true).catch((error: Error) => this.log.error('reloading an agent after its channels changed failed', { agent_id: write.id, error: error.message }))
    })
  }

  /** Whether the channels differ from those the agent's live instance started with (none yet: any but the web chat). */
  #channelsChanged(agentId: string, channels: unknown): boolean {
    const loaded = this.#instances.get(agentId)?.configuration
    if (!loaded) return Object.keys((channels as object | null) ?? {}).some((platform) => platform !== 'webchat')
    return !Bun.deepEquals(loaded.channels ?? {}, channels ?? {})
  }

  /** After a write of the agent's configuration: started where it was not running, stopped where it was disabled. */
  async configured(agentId: string, enabled: boolean): Promise<void> {
    this.#follow(agentId, enabled)
    await this.events.publish('agent.changed', { agent_id: agentId })
  }

  list(): AgentInstance[] {
    return [...this.#instances.values()]
  }

  async #reloadHere(agentId: string, enabled: boolean): Promise<AgentInstance | undefined> {
    const old = this.#instances.get(agentId)
    const next = enabled ? this.#create(agentId) : undefined
    if (next) this.#instances.set(agentId, next)
    else this.#instances.delete(agentId)
    if (next) await this.#load(next)
    await this.onStartup()
    if (old) this.#retire(old)
    return next
  }

  #follow(agentId: string, enabled: boolean): void {
    const running = this.#instances.get(agentId)
    if (enabled && !running) this.#instances.set(agentId, this.#create(agentId))
    if (!enabled && running) {
      this.#instances.delete(agentId)
      this.#retire(running)
    }
  }

  async #resync(): Promise<void> {
    const enabled = new Set(await this.#enabled())
    for (const id of this.#instances.keys()) if (!enabled.has(id)) this.#follow(id, false)
    for (const id of enabled) this.#follow(id, true)
  }

  async #isEnabled(agentId: string): Promise<boolean> {
    const row = await this.db.selectFrom('agent_configs').select('enabled').where('id', '=', agentId).executeTakeFirst()
    return row?.enabled === true
  }

  async #enabled(): Promise<string[]> {
    const rows = await this.db.selectFrom('agent_configs').select('id').where('enabled', '=', true).execute()
    return rows.map((row) => row.id)
  }

  #retire(old: AgentInstance): void {
    void old.stop().then(() => this.log.info('agent instance stopped', { agent_id: old.agentId, generation: old.generation }))
  }

  #failed(agentId: string, error: Error): void {
    this.log.error('an agent change from another process failed here', { agent_id: agentId, error: error.message })
  }

  /** A new instance, with its configuration when the caller read it, else read now (in the background). */
  #create(agentId: string, configuration?: AgentConfig): AgentInstance {
    const instance = new AgentInstance(agentId, ++this.#generation, new Date())
    if (configuration) instance.loaded(configuration)
    else void this.#load(instance).catch((error: Error) => this.#failed(agentId, error))
    return instance
  }

  async #load(instance: AgentInstance): Promise<void> {
    const row = await this.db.selectFrom('agent_configs').selectAll().where('id', '=', instance.agentId).executeTakeFirst()
    if (row) instance.loaded(row)
  }
}
