import type { Result, Router } from 'hono/router'
import { RegExpRouter } from 'hono/router/reg-exp-router'
import { SmartRouter } from 'hono/router/smart-router'
import { TrieRouter } from 'hono/router/trie-router'
import { LRUCache } from 'lru-cache'

/** Answers kept; a path a client makes up costs one entry, which the least recently used one makes room for. */
const REMEMBERED_PATHS = 2_000
/** Longer paths are routed afresh each time: no route of ours comes near, and the bound on entries then bounds bytes. */
const REMEMBERED_PATH_LENGTH = 256

/**
 * Hono's router, with its answer for each method and path kept. The api's routes defeat the regular-expression
 * router (a parameter and a fixed segment at the same place under one method, as in /api/mcp/connections/:server
 * and /api/mcp/connections/callback), so hono falls back to its trie, which walks every middleware's pattern on
 * each request: 5-9 µs per request on the api's 900 routes, against well under one for a remembered answer. The
 * same path and method always match the same handlers with the same parameters, and hono only reads an answer.
 */
export class RememberedRouter<T> implements Router<T> {
  readonly name = 'RememberedRouter'
  readonly #router: Router<T> = new SmartRouter<T>({ routers: [new RegExpRouter(), new TrieRouter()] })
  readonly #answers = new LRUCache<string, Result<T>>({ max: REMEMBERED_PATHS })

  // Hono's router refuses routes once it has matched a request, so nothing remembered can go stale.
  add(method: string, path: string, handler: T): void {
    this.#router.add(method, path, handler)
  }

  match(method: string, path: string): Result<T> {
    if (path.length > REMEMBERED_PATH_LENGTH) return this.#router.match(method, path)
    const key = `${method} ${path}`
    let answer = this.#answers.get(key)
    if (answer === undefined) {
      answer = this.#router.match(method, path)
      this.#answers.set(key, answer)
    }
    return answer
  }

  /** How many answers are kept (for tests). */
  get size(): number {
    return this.#answers.size
  }
}
