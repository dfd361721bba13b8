import type { Context, MiddlewareHandler } from 'hono'
import { ApiError } from '../errors.ts'
import type { Clock } from '../clock.ts'
import type { BucketStore, Rate } from './buckets.ts'
import type { Metrics } from '../metrics/metrics.ts'

/**
 * Token-bucket throttle: a 429 with Retry-After once the bucket is empty, and the RateLimit headers of the
 * IETF draft on every answer so clients can pace themselves. They are added to the answer once it is made, as the
 * security headers are: set beforehand, they reach only the answers hono builds (c.json, c.body), and an answer a
 * route returns as a Response (the MCP gateway's) went without.
 */
export function throttle(name: string, store: BucketStore, rate: Rate, clock: Clock, keyOf: (c: Context) => string, metrics?: Metrics): MiddlewareHandler {
  const policy = `"${name}";q=${rate.burst};w=${Math.ceil(rate.burst / rate.perSecond)}`
  // A request that two patterns put under this bucket (a plugin's route under /api/plugins/<name>/* that also uses
  // context.throttle) takes one token, not one per pattern.
  const counted = new WeakSet<Context>()
  return async (c, next) => {
    if (counted.has(c)) return next()
    counted.add(c)
    const take = await store.take(`${name}:${keyOf(c)}`, rate, clock.now())
    const state = `"${name}";r=${take.remaining};t=${take.reset}`
    if (!take.allowed) {
      metrics?.refused(name)
      throw new ApiError('rate_limited', `Too many requests; try again in ${take.retryAfter} s.`, {
        headers: { 'Retry-After': String(take.retryAfter), 'RateLimit-Policy': policy, RateLimit: state },
      })
    }
    await next()
    const answer = c.res.headers
    answer.set('RateLimit-Policy', policy)
    answer.set('RateLimit', state)
  }
}
