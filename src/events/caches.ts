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

/** Every process (this one before the call returns) drops what the named caches hold. */
export function flushCaches(events: EventBus, ...caches: CacheName[]): Promise<void> {
  return events.publish('cache.flush', { caches })
}

/**
 * The caches writes make stale, whatever door the write came through: a write that changes who may do what (roles,
 * memberships, ACLs, MCP rules) drops identities, ACLs and MCP rules; a person's ways in, identities; a global
 * secret, what plugins read of theirs; a runner's models, the registry's cache; a budget, the budgets read.
 */
export function flushAfterWrites(writes: Writes, events: EventBus): void {
  writes.on((write) => {
    if (write.type === 'record' && write.model.affectsAccess) return flushCaches(events, 'identities', 'acl', 'mcp')
    if (write.type === 'record' && write.model.table === 'budgets') return flushCaches(events, 'budgets')
    if (write.type === 'record' && write.model.table === 'system_config') return flushCaches(events, 'system-settings')
    if (write.type === 'credentials') return flushCaches(events, 'identities')
    if (write.type === 'secret' && write.scope === 'global') return flushCaches(events, 'plugin-secrets')
    if (write.type === 'runner-models') return flushCaches(events, 'runner-models')
  })
}
