import type { CacheName, EventBus } from './bus.ts'

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

/** Announces a write: every process (this one before the call returns) drops what the named caches hold. */
export function flushCaches(events: EventBus, ...caches: CacheName[]): Promise<void> {
  return events.publish('cache.flush', { caches })
}
