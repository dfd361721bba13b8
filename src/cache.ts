import { LRUCache } from 'lru-cache'
import type { Clock } from './clock.ts'

/** Keys a cache keeps unless told otherwise: what callers with unbounded keys can pile up stays bounded. */
const DEFAULT_MAX_ENTRIES = 10_000

interface Slot<V> {
  loadedAt: number
  value: Promise<V>
}

/**
 * Values loaded from the store and kept for a short time: another process's writes are seen within `ttlMs`, this
 * process's own writes call `delete` or `clear` at once. Concurrent misses share one load, so a burst of requests
 * costs one query; a load that fails is forgotten, so the next caller tries again.
 */
export class TtlCache<K extends {}, V> {
  /** Ages are the cache's own (on the platform's clock); lru-cache only chooses whom to drop when it is full. */
  readonly #slots: LRUCache<K, Slot<V>>

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    /** Past this many keys the least recently used one makes room. */
    maxEntries = DEFAULT_MAX_ENTRIES,
  ) {
    this.#slots = new LRUCache({ max: maxEntries })
  }

  get(key: K, load: () => Promise<V>): Promise<V> {
    const now = this.clock.now()
    const slot = this.#slots.get(key)
    if (slot && now - slot.loadedAt < this.ttlMs) return slot.value
    // Stamped when the load starts: a write that lands while it runs may be missed, so its age counts from here.
    const fresh: Slot<V> = { loadedAt: now, value: load() }
    this.#slots.set(key, fresh)
    fresh.value.catch(() => {
      if (this.#slots.peek(key) === fresh) this.#slots.delete(key)
    })
    return fresh.value
  }

  delete(key: K): void {
    this.#slots.delete(key)
  }

  clear(): void {
    this.#slots.clear()
  }
}
