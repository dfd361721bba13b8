import type { Clock } from './clock.ts'

interface Slot<V> {
  loadedAt: number
  value: Promise<V>
}

/**
 * Values loaded from the store and kept for a short time: another process's writes are seen within `ttlMs`, this
 * process's own writes call `delete` or `clear` at once. Concurrent misses share one load, so a burst of requests
 * costs one query; a load that fails is forgotten, so the next caller tries again.
 */
export class TtlCache<K, V> {
  readonly #slots = new Map<K, Slot<V>>()

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    /** Past this many keys the cache starts over: crude, but bounds what callers with unbounded keys can pile up. */
    private readonly maxEntries = Number.POSITIVE_INFINITY,
  ) {}

  get(key: K, load: () => Promise<V>): Promise<V> {
    const now = this.clock.now()
    const slot = this.#slots.get(key)
    if (slot && now - slot.loadedAt < this.ttlMs) return slot.value
    this.#slots.delete(key)
    if (this.#slots.size >= this.maxEntries) this.#slots.clear()
    // Stamped when the load starts: a write that lands while it runs may be missed, so its age counts from here.
    const fresh: Slot<V> = { loadedAt: now, value: load() }
    this.#slots.set(key, fresh)
    fresh.value.catch(() => {
      if (this.#slots.get(key) === fresh) this.#slots.delete(key)
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
