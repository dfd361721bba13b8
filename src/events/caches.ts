import type { CacheName, EventBus } from './bus.ts'
import type { Writes } from './writes.ts'

/**
 * Clears a cache whenever a write in any process names it, and whenever events may have been missed: what a cache
 * holds is never older than the last write anyone announced.
 */
export function flushOn(events: EventBus, name: CacheName, clear: () => void): void {
  events.subscribe('cache.flush', ({ caches }) => {
    if (caches.includes(name)) clear()
  })
  events.onMissed(clear)
}

/** How long a flush waits to hear from the other processes: one that died since its last beat is waited for no longer. */
const CONFIRM_WAIT_MS = 2_000

/** The processes of the deployment that a flush waits for (lifecycle/presence.ts). */
export interface LiveProcesses {
  readonly id: string
  alive(): Promise<Array<{ id: string }>>
}

/**
 * Drops what the named caches hold in every process, and returns once every other live process has said it did:
 * a revoked permission or a closed session is refused everywhere from the moment the write that made it answers,
 * not whenever the event happens to arrive. Every process of the deployment confirms the flushes it hears.
 */
export class CacheFlusher {
  constructor(
    private readonly events: EventBus,
    private readonly processes: LiveProcesses,
    private readonly confirmWaitMs = CONFIRM_WAIT_MS,
  ) {
    events.subscribe('cache.flush', ({ flush }, origin) => {
      // Delivery is synchronous: once this microtask runs, every cache of this process has been cleared.
      if (flush && origin === 'elsewhere') queueMicrotask(() => void events.publish('cache.flushed', { flush, process: processes.id }).catch(() => {}))
    })
  }

  async flush(...caches: CacheName[]): Promise<void> {
    const others = new Set((await this.processes.alive()).map((p) => p.id).filter((id) => id !== this.processes.id))
    if (others.size === 0) return this.events.publish('cache.flush', { caches })
    const flush = crypto.randomUUID()
    let timer: ReturnType<typeof setTimeout> | undefined
    let stop = () => {}
    const confirmed = new Promise<void>((resolve) => {
      stop = this.events.subscribe('cache.flushed', (heard) => {
        if (heard.flush === flush && others.delete(heard.process) && others.size === 0) resolve()
      })
      timer = setTimeout(resolve, this.confirmWaitMs)
    })
    try {
      await this.events.publish('cache.flush', { caches, flush })
      await confirmed
    } finally {
      clearTimeout(timer)
      stop()
    }
  }
}

/**
 * The caches writes make stale, whatever door the write came through: a write that changes who may do what (roles,
 * memberships, ACLs, MCP rules) drops identities, ACLs and MCP rules; a person's ways in, identities; a global
 * secret, what plugins read of theirs; a runner's models, the registry's cache; a budget, the budgets read; an
 * agent, the agents turns read.
 */
export function flushAfterWrites(writes: Writes, caches: CacheFlusher): void {
  writes.on((write) => {
    if (write.type === 'record' && write.model.affectsAccess) return caches.flush('identities', 'acl', 'mcp')
    if (write.type === 'record' && write.model.table === 'agent_configs') return caches.flush('agents')
    if (write.type === 'record' && write.model.table === 'budgets') return caches.flush('budgets')
    if (write.type === 'record' && write.model.table === 'system_config') return caches.flush('system-settings')
    if (write.type === 'credentials') return caches.flush('identities')
    if (write.type === 'secret' && write.scope === 'global') return caches.flush('plugin-secrets')
    if (write.type === 'runner-models') return caches.flush('runner-models')
  })
}
